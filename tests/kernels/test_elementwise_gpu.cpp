// kernels::silu_mul and kernels::rope against float64 host references of their definitions
// (with the roundings each documents), outputs poisoned; mistakes are errors at this file's
// lines; the compile forms cross-compile for every target family with no GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/elementwise.hpp>

#include "kernel_test_values.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::random_values;
using test::value;

namespace {

/// Checks got against want: within `tolerance` relative to max(|want|, 1), and for 16-bit types
/// equal to want rounded to T in at least 99% of elements.
template <class T>
void check_close(const std::vector<T>& got, const std::vector<double>& want, double tolerance) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  size_t same = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = value(got[i]);
    worst = std::max(worst, std::isnan(g) ? INFINITY : std::abs(g - want[i]) / std::max(std::abs(want[i]), 1.0));
    same += g == value(T(float(want[i])));
  }
  CHECK(worst < tolerance);
  if constexpr (sizeof(T) == 2) CHECK(double(same) / double(got.size()) > 0.99);
}

template <class T>
void check_silu_mul(const Device& gpu, int64_t rows, int64_t n, double tolerance) {
  INFO(rows << " x " << n);
  auto hg = random_values<T>(size_t(rows * n), 1, 3.0f), hu = random_values<T>(size_t(rows * n), 2);
  auto g = gpu.upload(hg), u = gpu.upload(hu);
  auto out = gpu.upload(std::vector<T>(hg.size(), T(std::nanf(""))));
  kernels::silu_mul(gpu, g.view({rows, n}), u.view({rows, n}), out.view({rows, n}));
  gpu.synchronize();
  std::vector<double> want(hg.size());
  for (size_t i = 0; i < hg.size(); ++i) {
    const double x = value(hg[i]);
    want[i] = value(T(float(x / (1.0 + std::exp(-x))))) * value(hu[i]);
  }
  check_close(out.to_host(), want, tolerance);
}

template <class T>
void check_rope(const Device& gpu, const std::vector<int32_t>& positions, int64_t heads, int64_t head_dim, double theta, double tolerance) {
  const int64_t tokens = int64_t(positions.size()), half = head_dim / 2;
  INFO(tokens << " tokens x " << heads << " heads x " << head_dim);
  auto hx = random_values<T>(size_t(tokens * heads * head_dim), 3);
  const std::vector<float> inv_freq = kernels::rope_inv_freq(head_dim, theta);
  auto x = gpu.upload(hx);
  auto p = gpu.upload(positions);
  auto f = gpu.upload(inv_freq);
  kernels::rope(gpu, x.view({tokens, heads, head_dim}), p.view({tokens}), f.view({half}));
  gpu.synchronize();
  std::vector<double> want(hx.size());
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < half; ++i) {
        // The angle as the kernel's definition forms it: an f32 product of the position and the table.
        const double angle = double(float(positions[size_t(t)]) * inv_freq[size_t(i)]);
        const size_t at = size_t((t * heads + h) * head_dim + i);
        const double a = value(hx[at]), b = value(hx[at + size_t(half)]);
        want[at] = a * std::cos(angle) - b * std::sin(angle);
        want[at + size_t(half)] = b * std::cos(angle) + a * std::sin(angle);
      }
  check_close(x.to_host(), want, tolerance);
}

}  // namespace

TEST_CASE("kernels::silu_mul matches silu(gate) * up in f32, f16 and bf16", "[gpu][kernels]") {
  Device gpu;
  check_silu_mul<bf16>(gpu, 33, 3072, 2.0 / 128);
  check_silu_mul<f16>(gpu, 3, 40, 2.0 / 1024);
  check_silu_mul<f32>(gpu, 7, 1004, 1e-6);
}

TEST_CASE("kernels::rope rotates each head's halves by position times the inverse frequencies", "[gpu][kernels]") {
  Device gpu;
  // Position 0 leaves a head as it is; 40000 is past any table a model precomputes.
  const std::vector<int32_t> positions{0, 1, 7, 4095, 40000};
  check_rope<bf16>(gpu, positions, 4, 128, 1e6, 2.0 / 128);
  check_rope<f32>(gpu, positions, 3, 64, 1e4, 1e-5);
  CHECK(kernels::rope_inv_freq(128, 1e6)[0] == 1.0f);
  CHECK(kernels::rope_inv_freq(128, 1e6)[63] == float(std::pow(1e6, -126.0 / 128)));
}

TEST_CASE("kernels::silu_mul and rope refuse what they cannot take, at the caller's line", "[gpu][kernels]") {
  Device gpu;
  auto a = gpu.upload(random_values<bf16>(4096, 4));
  auto p = gpu.upload(std::vector<int32_t>{0, 1, 2, 3});
  auto f = gpu.upload(kernels::rope_inv_freq(64, 1e4));
  const std::string here = "test_elementwise_gpu.cpp:";
  CHECK_THAT(test::error_of([&] { kernels::silu_mul(gpu, a.view({4, 1024}), a.view({4, 1024}), a.view({8, 512})); }),
             Contains(here) && Contains("silu_mul: gate, up and out must have one shape"));
  CHECK_THAT(test::error_of([&] { kernels::rope(gpu, a.view({4, 8, 128}), p.view({4}), f.view({32})); }),
             Contains(here) && Contains("rope: inv_freq is (32); it takes (64)"));
  CHECK_THAT(test::error_of([&] { kernels::rope(gpu, a.view({4, 16, 64}), p.view({3}), f.view({32})); }),
             Contains("positions is (3); it takes (4), one per token"));
  CHECK_THAT(test::error_of([&] { kernels::rope(gpu, a.view({4, 1024}), p.view({4}), f.view({32})); }),
             Contains("it takes (tokens, heads, head_dim)"));
  CHECK_THROWS_WITH(kernels::rope_inv_freq(63, 1e4), Contains("head_dim must be even"));
}

TEST_CASE("kernels::silu_mul_compile and rope_compile cross-compile for every target family with no GPU", "[unit][kernels]") {
  for (const char* target : {"sm_80", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(target);
    CompiledKernel s = kernels::silu_mul_compile(Target::parse(target), DType::bf16, 16, 12288);
    CHECK(test::count(s.ptx, "ld.global.nc.v4.b32") == 2);
    CHECK(test::count(s.ptx, "st.global.v4.b32") == 1);
    CompiledKernel r = kernels::rope_compile(Target::parse(target), DType::bf16, 16, 32, 128);
    CHECK(test::contains(r.ptx, ".reqntid 128"));
  }
}
