// kernels::softmax against a float64 softmax of the same inputs, outputs poisoned: f32, f16 and
// bf16, a vocabulary-wide row, a scale, values large enough that exp without the maximum
// subtracted would overflow, masked (-inf) entries and a fully masked row, in place; mistakes
// are errors at this file's lines with nothing written; the compile form builds for every
// target family.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/elementwise.hpp>

#include "kernel_test_values.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::random_values;
using test::value;

namespace {

std::vector<double> reference(const std::vector<double>& x, int64_t rows, int64_t n, double scale) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = &x[size_t(r * n)];
    double m = -INFINITY, sum = 0;
    for (int64_t c = 0; c < n; ++c) m = std::max(m, row[c]);
    for (int64_t c = 0; c < n; ++c) sum += std::exp(scale * (row[c] - m));
    for (int64_t c = 0; c < n; ++c) y[size_t(r * n + c)] = std::exp(scale * (row[c] - m)) / sum;
  }
  return y;
}

/// The largest |got - want| / want over the outputs (all positive where anything is finite),
/// outputs below T's smallest normal measured against it (the kernel may flush them to 0): NaN
/// where the reference is NaN is agreement, and nowhere else.
template <class T>
double worst_relative(const std::vector<T>& got, const std::vector<double>& want) {
  const double smallest = std::is_same_v<T, f16> ? 0x1p-14 : double(std::numeric_limits<float>::min());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = value(got[i]);
    if (std::isnan(want[i])) {
      if (!std::isnan(g)) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::isnan(g) ? INFINITY : std::abs(g - want[i]) / std::max(want[i], smallest));
  }
  return worst;
}

template <class T>
void check_softmax(const Device& gpu, int64_t rows, int64_t n, float sigma, float scale, double tolerance, bool in_place = false) {
  INFO(rows << " x " << n << ", values of sigma " << sigma << ", scale " << scale << (in_place ? ", in place" : ""));
  const auto hx = random_values<T>(size_t(rows * n), 1, sigma);
  auto x = gpu.upload(hx);
  auto y = gpu.upload(std::vector<T>(hx.size(), T(std::nanf(""))));
  DeviceTensor<T> out = in_place ? x.view({rows, n}) : y.view({rows, n});
  kernels::softmax(gpu, x.view({rows, n}), out, {.scale = scale});
  gpu.synchronize();
  std::vector<double> xs;
  for (T v : hx) xs.push_back(value(v));
  CHECK(worst_relative(in_place ? x.to_host() : y.to_host(), reference(xs, rows, n, scale)) < tolerance);
}

}  // namespace

TEST_CASE("kernels::softmax matches a float64 softmax in f32, f16 and bf16", "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  // One rounding of an f32 result: half an ulp, and a few f32 ulps of exp and of the sum.
  check_softmax<bf16>(gpu, 33, 1024, 3.0f, 1.0f, 1.0 / 256);
  check_softmax<bf16>(gpu, 2, 151936, 3.0f, 1.0f, 1.0 / 256);  // a vocabulary's logits
  check_softmax<f16>(gpu, 5, 1000, 3.0f, 0.125f, 1.0 / 2048);
  check_softmax<f32>(gpu, 3, 8, 1.0f, 1.0f, 1e-5);            // fewer vectors than threads
  check_softmax<f32>(gpu, 4, 20000, 1.0f, 1.0f, 2e-5);
  // exp(x) of values near 1000 is far past f32's range: only the subtracted maximum keeps it finite.
  check_softmax<f32>(gpu, 4, 512, 1000.0f, 1.0f, 1e-4);
  check_softmax<bf16>(gpu, 7, 4096, 3.0f, 1.0f, 1.0 / 256, true);
}

TEST_CASE("kernels::softmax gives masked entries 0, and a fully masked row NaN as PyTorch does", "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  const int64_t rows = 3, n = 64;
  std::vector<float> hx = random_values<float>(size_t(rows * n), 2);
  for (int64_t c = 10; c < n; ++c) hx[size_t(c)] = -INFINITY;  // row 0: a causal mask's row
  for (int64_t c = 0; c < n; ++c) hx[size_t(2 * n + c)] = -INFINITY;  // row 2: nothing visible
  auto x = gpu.upload(hx), y = gpu.upload(std::vector<float>(hx.size(), 0.5f));
  kernels::softmax(gpu, x.view({rows, n}), y.view({rows, n}));
  gpu.synchronize();
  const std::vector<float> got = y.to_host();
  CHECK(worst_relative(got, reference(std::vector<double>(hx.begin(), hx.end()), rows, n, 1.0)) < 1e-5);
  for (int64_t c = 10; c < n; ++c) CHECK(got[size_t(c)] == 0.0f);
  for (int64_t c = 0; c < n; ++c) CHECK(std::isnan(got[size_t(2 * n + c)]));
}

TEST_CASE("kernels::softmax refuses what it cannot take, at the caller's line, writing nothing", "[gpu][kernels]") {
  Device gpu;
  auto x = gpu.upload(random_values<bf16>(64 * 256, 3));
  auto y = gpu.upload(std::vector<bf16>(64 * 256, bf16(0.0f)));
  const std::string here = "test_softmax_gpu.cpp:";
  CHECK_THAT(test::error_of([&] { kernels::softmax(gpu, x.view({64, 256}), y.view({32, 512})); }),
             Contains(here) && Contains("softmax: y is (32, 512); it must have x's shape (64, 256)"));
  CHECK_THAT(test::error_of([&] { kernels::softmax(gpu, x.view({64, 250}, {256, 1}), y.view({64, 250}, {256, 1})); }),
             Contains(here) && Contains("rows of a multiple of 8 elements"));
  CHECK_THAT(test::error_of([&] { kernels::softmax(gpu, x.view({64, 256}), y.view({64, 256}), {.scale = 0}); }),
             Contains(here) && Contains("scale is 0.000000; it must be finite and positive"));
  gpu.synchronize();
  for (bf16 v : y.to_host()) REQUIRE(float(v) == 0.0f);
}

TEST_CASE("kernels::softmax_compile cross-compiles for every target family with no GPU", "[unit][kernels]") {
  for (const char* target : {"sm_80", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(target);
    CompiledKernel k = kernels::softmax_compile(Target::parse(target), DType::bf16, 8, 151936);
    CHECK(test::count(k.ptx, "ld.global.nc.v4.b32") == 3);  // the row three times, 16 bytes at a time
    CHECK(test::count(k.ptx, "st.global.v4.b32") == 1);
    CHECK(test::contains(k.ptx, ".reqntid 1024"));        // 18992 vectors: the largest block
  }
  CHECK_THROWS_WITH(kernels::softmax_compile(Target::parse("sm_90a"), DType::i32, 8, 128), Contains("it takes f32, f16 or bf16"));
}
