// kernels::layernorm and add_layernorm against a float64 LayerNorm of the same inputs (PyTorch's
// definition: the biased variance over the row, the result rounded once), outputs poisoned:
// f32, f16 and bf16, with and without a bias, rows whose mean is large against their spread
// (where sum-and-sum-of-squares statistics cancel), the residual add exact; mistakes are errors
// at this file's lines with nothing written; the compile form builds for every target family.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <optional>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/norm.hpp>

#include "kernel_test_values.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::random_values;
using test::value;

namespace {

/// LayerNorm of each row of h (rows x hidden) in float64; `b` empty: no bias.
template <class T>
std::vector<double> reference(const std::vector<T>& h, const std::vector<T>& w, const std::vector<T>& b, int64_t rows, int64_t hidden,
                              double eps) {
  std::vector<double> y(h.size());
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = &h[size_t(r * hidden)];
    double mean = 0, var = 0;
    for (int64_t c = 0; c < hidden; ++c) mean += value(row[c]);
    mean /= double(hidden);
    for (int64_t c = 0; c < hidden; ++c) var += (value(row[c]) - mean) * (value(row[c]) - mean);
    const double rstd = 1 / std::sqrt(var / double(hidden) + eps);
    for (int64_t c = 0; c < hidden; ++c)
      y[size_t(r * hidden + c)] = (value(row[c]) - mean) * rstd * value(w[size_t(c)]) + (b.empty() ? 0.0 : value(b[size_t(c)]));
  }
  return y;
}

/// The largest |got - want| relative to max(|want|, 1), and the share of outputs equal to the
/// reference rounded to T (one rounding: all but the rare near-ties).
template <class T>
std::pair<double, double> compare(const std::vector<T>& got, const std::vector<double>& want) {
  double worst = 0;
  size_t same = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = value(got[i]);
    worst = std::max(worst, std::isnan(g) ? INFINITY : std::abs(g - want[i]) / std::max(std::abs(want[i]), 1.0));
    same += g == value(T(float(want[i])));
  }
  return {worst, double(same) / double(got.size())};
}

template <class T>
void check_layernorm(const Device& gpu, int64_t rows, int64_t hidden, bool with_bias, float offset, double tolerance) {
  INFO(rows << " x " << hidden << (with_bias ? ", bias" : ", no bias") << ", inputs around " << offset);
  auto hx = random_values<T>(size_t(rows * hidden), 1, 2.0f);
  for (T& v : hx) v = T(float(v) + offset);
  auto hw = random_values<T>(size_t(hidden), 2), hb = with_bias ? random_values<T>(size_t(hidden), 3) : std::vector<T>{};
  auto x = gpu.upload(hx), w = gpu.upload(hw), b = gpu.upload(with_bias ? hb : hw);
  auto y = gpu.upload(std::vector<T>(hx.size(), T(std::nanf(""))));
  std::optional<DeviceTensor<T>> bias;
  if (with_bias) bias = b.view({hidden});
  kernels::layernorm(gpu, x.view({rows, hidden}), w.view({hidden}), bias, y.view({rows, hidden}), {.eps = 1e-5f});
  gpu.synchronize();
  auto [worst, exact] = compare(y.to_host(), reference(hx, hw, hb, rows, hidden, 1e-5));
  CHECK(worst < tolerance);
  if constexpr (sizeof(T) == 2) CHECK(exact > 0.99);
}

}  // namespace

TEST_CASE("kernels::layernorm matches a float64 LayerNorm in f32, f16 and bf16, with and without a bias", "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  check_layernorm<bf16>(gpu, 37, 4096, true, 0.0f, 2.0 / 256);  // one rounding: half an ulp, and the f32 statistics
  check_layernorm<bf16>(gpu, 9, 768, false, 0.0f, 2.0 / 256);
  check_layernorm<f16>(gpu, 5, 1000, true, 0.0f, 2.0 / 2048);
  check_layernorm<f32>(gpu, 3, 16, true, 0.0f, 1e-5);       // fewer vectors than threads
  check_layernorm<f32>(gpu, 7, 20000, false, 0.0f, 1e-5);   // more than four vectors a thread
  // A mean 500 times the spread: E[x^2] - mean^2 in f32 would lose about 2^-24 * 500^2 of the
  // variance, a relative error near 1e-2 here; the deviations' two passes keep it near 1e-6.
  check_layernorm<f32>(gpu, 4, 4096, true, 1000.0f, 1e-4);
}

TEST_CASE("kernels::add_layernorm adds the residual exactly and normalises the sum", "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  const int64_t rows = 11, hidden = 1024;
  auto hx = random_values<bf16>(size_t(rows * hidden), 4), hr = random_values<bf16>(size_t(rows * hidden), 5, 10.0f);
  auto hw = random_values<bf16>(size_t(hidden), 6), hb = random_values<bf16>(size_t(hidden), 7);
  auto x = gpu.upload(hx), r = gpu.upload(hr), w = gpu.upload(hw), b = gpu.upload(hb);
  auto y = gpu.upload(std::vector<bf16>(hx.size(), bf16(NAN)));
  kernels::add_layernorm(gpu, x.view({rows, hidden}), r.view({rows, hidden}), w.view({hidden}), b.view({hidden}), y.view({rows, hidden}));
  gpu.synchronize();
  std::vector<bf16> sum(hx.size());
  for (size_t i = 0; i < hx.size(); ++i) sum[i] = bf16(float(hx[i]) + float(hr[i]));  // one rounding of an exact f32 sum
  const std::vector<bf16> got_sum = r.to_host();
  size_t differ = 0;
  for (size_t i = 0; i < sum.size(); ++i) differ += std::memcmp(&sum[i], &got_sum[i], sizeof(bf16)) != 0;
  CHECK(differ == 0);
  auto [worst, exact] = compare(y.to_host(), reference(sum, hw, hb, rows, hidden, 1e-6));
  CHECK(worst < 2.0 / 256);
  CHECK(exact > 0.99);
}

TEST_CASE("kernels::layernorm refuses what it cannot take, at the caller's line, writing nothing", "[gpu][kernels]") {
  Device gpu;
  auto x = gpu.upload(random_values<bf16>(64 * 256, 8)), w = gpu.upload(random_values<bf16>(256, 9));
  auto y = gpu.upload(std::vector<bf16>(64 * 256, bf16(0.0f)));
  const std::string here = "test_layernorm_gpu.cpp:";
  CHECK_THAT(test::error_of([&] { kernels::layernorm(gpu, x.view({64, 256}), w.view({256}), w.view({128}), y.view({64, 256})); }),
             Contains(here) && Contains("layernorm: bias is (128); it takes (256) contiguous"));
  CHECK_THAT(test::error_of([&] { kernels::layernorm(gpu, x.view({64, 256}), w.view({256}), std::nullopt, y.view({32, 512})); }),
             Contains(here) && Contains("y is (32, 512); it must have x's shape (64, 256)"));
  CHECK_THAT(test::error_of([&] {
               kernels::add_layernorm(gpu, x.view({64, 256}), y.view({16, 1024}), w.view({256}), std::nullopt, y.view({64, 256}));
             }),
             Contains(here) && Contains("add_layernorm: residual is (16, 1024); it must have x's shape (64, 256)"));
  CHECK_THAT(test::error_of([&] { kernels::layernorm(gpu, x.view({64, 256}), w.view({256}), std::nullopt, y.view({64, 256}), {.eps = -1}); }),
             Contains("eps is negative"));
  gpu.synchronize();
  for (bf16 v : y.to_host()) REQUIRE(float(v) == 0.0f);
}

TEST_CASE("kernels::layernorm_compile cross-compiles for every target family with no GPU", "[unit][kernels]") {
  for (const char* target : {"sm_80", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(target);
    CompiledKernel k = kernels::layernorm_compile(Target::parse(target), DType::bf16, 8, 4096);
    CHECK(test::count(k.ptx, "ld.global.nc.v4.b32") == 5);  // x three times, the weight and the bias, 16 bytes each
    CHECK(test::count(k.ptx, "st.global.v4.b32") == 1);
    CHECK(test::contains(k.ptx, ".reqntid 128"));
    CompiledKernel plain = kernels::layernorm_compile(Target::parse(target), DType::bf16, 8, 4096, false, false);
    CHECK(test::count(plain.ptx, "ld.global.nc.v4.b32") == 4);  // no bias read
    CompiledKernel add = kernels::layernorm_compile(Target::parse(target), DType::bf16, 8, 4096, true);
    CHECK(test::count(add.ptx, "st.global.v4") == 2);  // the residual, and y
  }
  CHECK_THROWS_WITH(kernels::layernorm_compile(Target::parse("sm_90a"), DType::bf16, 8, 100), Contains("rows of a multiple of 8 elements"));
}
