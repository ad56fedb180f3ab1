// The sm_100 tcgen05 GEMMs executed: on a Blackwell datacenter GPU, or on the emulated device of
// an sm_100-family target (CUTEJIT_DEVICE=emulator:sm_100a, as the test command runs them). Each
// variant (one CTA a tile, cluster launch control, the 2-CTA pair, pairs sharing B by multicast)
// at a shape of several tiles each way, against a float64 product of the same bf16 inputs,
// output poisoned.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "gemm_sm100.hpp"
#include "support.hpp"

using namespace cutejit;
namespace g100 = examples::gemm_sm100;

namespace {

bool is_sm100_family(const Target& t) { return t.sm == 100 || t.sm == 103 || t.sm == 110; }

std::vector<bf16> random_bf16(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<bf16> v(n);
  for (bf16& x : v) x = bf16(d(rng));
  return v;
}

/// Runs `kernel` with main loop `Mainloop` (and scheduling `S`) on m x n x k; returns the largest
/// error relative to the reference's largest magnitude.
template <class Mainloop, g100::Scheduling S = g100::Scheduling::persistent, class K>
double run(const Device& dev, K& kernel, int64_t m, int64_t n, int64_t k) {
  g100::check_shape<Mainloop>(m, n, k);
  std::vector<bf16> a = random_bf16(size_t(m * k), 1), b = random_bf16(size_t(n * k), 2);
  auto da = dev.upload(a), db = dev.upload(b);
  auto dc = dev.upload(std::vector<bf16>(size_t(m * n), bf16(std::nanf(""))));
  auto [ta, tb] = g100::tensor_maps<Mainloop>(da, db, m, n, k);
  Launch launch = g100::launch_config<Mainloop, S>(dev.multiprocessors(), m, n);
  kernel(dev, launch, ta, tb, g100::c_tensor_map(dc, m, n), int32_t(m), int32_t(n), int32_t(k));
  dev.synchronize();
  std::vector<bf16> c = dc.to_host();
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double r = 0;
      for (int64_t q = 0; q < k; ++q) r += double(float(a[size_t(i * k + q)])) * double(float(b[size_t(j * k + q)]));
      scale = std::max(scale, std::abs(r));
      double got = double(float(c[size_t(i * n + j)]));
      worst = std::max(worst, std::isnan(got) ? INFINITY : std::abs(got - r));
    }
  return worst / scale;
}

}  // namespace

TEST_CASE("the sm_100 BF16 GEMMs run and match a float64 product", "[gpu][sm100]") {
  Device dev;
  if (!is_sm100_family(dev.target())) {
    WARN("skipped: the device is " << dev.target().name() << ", not an sm_100-family target (run with CUTEJIT_DEVICE=emulator:sm_100a)");
    return;
  }
  // bf16 output: a half-ulp of rounding on the largest values, relative to them.
  const double tolerance = 1.0 / 128;
  SECTION("one CTA a tile, persistent") {
    CHECK(run<g100::Dense<bf16>>(dev, examples::gemm_bf16_sm100, 384, 512, 192) < tolerance);
  }
  SECTION("cluster launch control") {
    CHECK((run<g100::Dense<bf16>, g100::Scheduling::clc>(dev, examples::gemm_bf16_sm100_clc, 384, 512, 128)) < tolerance);
  }
  SECTION("the 2-CTA pair") {
    CHECK(run<g100::Dense<bf16, 2>>(dev, examples::gemm_bf16_sm100_2cta, 512, 512, 128) < tolerance);
  }
  SECTION("pairs along M sharing B by multicast") {
    CHECK((run<g100::Dense<bf16, 2, 2>>(dev, examples::gemm_bf16_sm100_2cta_multicast, 512, 256, 128)) < tolerance);
  }
}
