// kernels::rmsnorm and add_rmsnorm against a float64 host reference of the same definition
// (Hugging Face's RMSNorm: the sum of squares in high precision, the normalised row rounded to
// the element type before the weight multiplies it), outputs poisoned; the residual add is
// exact (one rounding, which the ISA fixes); mistakes are errors at this file's lines with
// nothing written; the compile form cross-compiles for every target family with no GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/norm.hpp>

#include "kernel_test_values.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::random_values;
using test::value;

namespace {

/// RMSNorm of each row of h (rows x hidden) in float64, with the two roundings to T it defines.
template <class T>
std::vector<double> reference(const std::vector<T>& h, const std::vector<T>& w, int64_t rows, int64_t hidden, double eps) {
  std::vector<double> y(h.size());
  for (int64_t r = 0; r < rows; ++r) {
    double squares = 0;
    for (int64_t c = 0; c < hidden; ++c) squares += value(h[size_t(r * hidden + c)]) * value(h[size_t(r * hidden + c)]);
    const double scale = 1.0 / std::sqrt(squares / double(hidden) + eps);
    for (int64_t c = 0; c < hidden; ++c) {
      const double normed = value(T(float(value(h[size_t(r * hidden + c)]) * scale)));
      y[size_t(r * hidden + c)] = normed * value(w[size_t(c)]);
    }
  }
  return y;
}

/// The largest |got - want| relative to max(|want|, 1).
template <class T>
double worst_error(const std::vector<T>& got, const std::vector<double>& want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = value(got[i]);
    worst = std::max(worst, std::isnan(g) ? INFINITY : std::abs(g - want[i]) / std::max(std::abs(want[i]), 1.0));
  }
  return worst;
}

/// The share of outputs that equal the reference rounded to T: nearly all of them, when only a
/// rare rounding of a value within an ulp of a tie may go the other way.
template <class T>
double share_exact(const std::vector<T>& got, const std::vector<double>& want) {
  size_t same = 0;
  for (size_t i = 0; i < got.size(); ++i) same += value(got[i]) == value(T(float(want[i])));
  return double(same) / double(got.size());
}

template <class T>
T nan_of() {
  return T(std::nanf(""));
}

template <class T>
void check_rmsnorm(const Device& gpu, int64_t rows, int64_t hidden, double tolerance) {
  INFO(rows << " x " << hidden);
  auto hx = random_values<T>(size_t(rows * hidden), 1, 3.0f), hw = random_values<T>(size_t(hidden), 2);
  auto x = gpu.upload(hx), w = gpu.upload(hw);
  auto y = gpu.upload(std::vector<T>(hx.size(), nan_of<T>()));
  kernels::rmsnorm(gpu, x.view({rows, hidden}), w.view({hidden}), y.view({rows, hidden}), {.eps = 1e-6f});
  gpu.synchronize();
  const std::vector<T> got = y.to_host();
  const std::vector<double> want = reference(hx, hw, rows, hidden, 1e-6);
  CHECK(worst_error(got, want) < tolerance);
  if constexpr (sizeof(T) == 2) CHECK(share_exact(got, want) > 0.99);  // f32's tolerance is tight already
}

}  // namespace

TEST_CASE("kernels::rmsnorm matches a float64 RMSNorm in f32, f16 and bf16, at Qwen3's widths and ragged ones", "[gpu][kernels]") {
  Device gpu;
  // bf16 and f16: one rounding of the normalised value and one of the product, each half an ulp.
  check_rmsnorm<bf16>(gpu, 37, 4096, 2.0 / 128);
  check_rmsnorm<bf16>(gpu, 96, 128, 2.0 / 128);  // per-head q/k norm rows
  check_rmsnorm<f16>(gpu, 5, 1000, 2.0 / 1024);
  check_rmsnorm<f32>(gpu, 3, 12, 1e-5);          // fewer vectors than threads
  check_rmsnorm<f32>(gpu, 7, 20000, 1e-5);       // more than four vectors a thread
}

TEST_CASE("kernels::add_rmsnorm adds the residual exactly and normalises the sum", "[gpu][kernels]") {
  Device gpu;
  const int64_t rows = 19, hidden = 2048;
  auto hx = random_values<bf16>(size_t(rows * hidden), 3), hr = random_values<bf16>(size_t(rows * hidden), 4, 10.0f);
  auto hw = random_values<bf16>(size_t(hidden), 5);
  auto x = gpu.upload(hx), r = gpu.upload(hr), w = gpu.upload(hw);
  auto y = gpu.upload(std::vector<bf16>(hx.size(), nan_of<bf16>()));
  kernels::add_rmsnorm(gpu, x.view({rows, hidden}), r.view({rows, hidden}), w.view({hidden}), y.view({rows, hidden}));
  gpu.synchronize();
  std::vector<bf16> sum(hx.size());
  for (size_t i = 0; i < hx.size(); ++i) sum[i] = bf16(float(hx[i]) + float(hr[i]));  // f32 add is exact for two bf16s here
  const std::vector<bf16> got_sum = r.to_host();
  size_t differ = 0;
  for (size_t i = 0; i < sum.size(); ++i) differ += std::memcmp(&sum[i], &got_sum[i], sizeof(bf16)) != 0;
  CHECK(differ == 0);
  const std::vector<bf16> got = y.to_host();
  const std::vector<double> want = reference(sum, hw, rows, hidden, 1e-6);
  CHECK(worst_error(got, want) < 2.0 / 128);
  CHECK(share_exact(got, want) > 0.99);
}

TEST_CASE("kernels::rmsnorm refuses what it cannot take, at the caller's line, writing nothing", "[gpu][kernels]") {
  Device gpu;
  auto x = gpu.upload(random_values<bf16>(64 * 256, 6)), w = gpu.upload(random_values<bf16>(256, 7));
  auto y = gpu.upload(std::vector<bf16>(64 * 256, bf16(0.0f)));
  const std::string here = "test_norm_gpu.cpp:";
  CHECK_THAT(test::error_of([&] { kernels::rmsnorm(gpu, x.view({64, 256}), w.view({128}), y.view({64, 256})); }),
             Contains(here) && Contains("rmsnorm: weight is (128); it takes (256) contiguous"));
  CHECK_THAT(test::error_of([&] { kernels::rmsnorm(gpu, x.view({64, 256}), w.view({256}), y.view({32, 512})); }),
             Contains(here) && Contains("y is (32, 512); it must have x's shape (64, 256)"));
  CHECK_THAT(test::error_of([&] { kernels::rmsnorm(gpu, x.view({64, 256}, {1, 64}), w.view({256}), y.view({64, 256})); }),
             Contains("x's rows are not contiguous"));
  CHECK_THAT(test::error_of([&] { kernels::rmsnorm(gpu, x.view({64, 250}, {256, 1}), w.view({250}), y.view({64, 250}, {256, 1})); }),
             Contains("rows of a multiple of 8 elements"));
  CHECK_THAT(test::error_of([&] { kernels::rmsnorm(gpu, x.view({16384}), w.view({256}), y.view({16384})); }),
             Contains("x is a tensor of rank 1; it takes (rows, n)"));
  gpu.synchronize();
  for (bf16 v : y.to_host()) REQUIRE(float(v) == 0.0f);
}

TEST_CASE("kernels::rmsnorm_compile cross-compiles for every target family with no GPU", "[unit][kernels]") {
  for (const char* target : {"sm_80", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(target);
    CompiledKernel k = kernels::rmsnorm_compile(Target::parse(target), DType::bf16, 8, 4096);
    CHECK(test::count(k.ptx, "ld.global.nc.v4.b32") == 3);  // 16-byte loads of x (twice) and the weight
    CHECK(test::count(k.ptx, "st.global.v4.b32") == 1);
    CHECK(test::contains(k.ptx, ".reqntid 128"));   // the block it declares: 4096 / 8 / 4 threads
    CompiledKernel add = kernels::rmsnorm_compile(Target::parse(target), DType::bf16, 8, 4096, true);
    CHECK(test::count(add.ptx, "st.global.v4") == 2);  // the residual, and y
  }
  CHECK_THROWS_WITH(kernels::rmsnorm_compile(Target::parse("sm_90a"), DType::bf16, 8, 100), Contains("rows of a multiple of 8 elements"));
  CHECK_THROWS_WITH(kernels::rmsnorm_compile(Target::parse("sm_90a"), DType::i32, 8, 128), Contains("it takes f32, f16 or bf16"));
}
