// The sm_100 tcgen05 GEMMs executed: on a Blackwell datacenter GPU, or on the emulated device of
// an sm_100-family target (CUTEJIT_DEVICE=emulator:sm_100a, as the test command runs them). Each
// variant (BF16 and FP8 with one CTA a tile, cluster launch control, the 2-CTA pair, pairs
// sharing B by multicast) at a ragged shape — partial tiles along M, N and K, so TMA's zero fill
// and clipped stores are exercised — against a float64 product of the same inputs decoded on the
// host, output poisoned.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "block_scaled_reference.hpp"
#include "gemm_sm100.hpp"
#include "support.hpp"

using namespace cutejit;
namespace g100 = fixtures::gemm_sm100;
namespace bs = test::block_scaled;

namespace {

bool is_sm100_family(const Target& t) { return t.sm == 100 || t.sm == 103 || t.sm == 110; }

/// `n` random operands of T, and their values decoded on the host: bf16 from a normal
/// distribution (a bf16's value is its top 16 float bits), e4m3 of every finite code (decoded by
/// the format's definition, not by cutejit's conversion).
template <class T>
std::pair<std::vector<T>, std::vector<double>> random_operand(size_t n, uint32_t seed) {
  std::vector<T> v(n);
  std::vector<double> values(n);
  if constexpr (std::is_same_v<T, bf16>) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    for (size_t i = 0; i < n; ++i) v[i] = bf16(d(rng)), values[i] = double(float(v[i]));
  } else {
    std::vector<uint8_t> codes = bs::random_e4m3(n, seed);
    for (size_t i = 0; i < n; ++i) v[i].bits = codes[i], values[i] = bs::e4m3(codes[i]);
  }
  return {v, values};
}

/// Runs `kernel` with main loop `Mainloop` (and scheduling `S`) on m x n x k; returns the largest
/// error relative to the reference's largest magnitude.
template <class Mainloop, g100::Scheduling S = g100::Scheduling::persistent, class K>
double run(const Device& dev, K& kernel, int64_t m, int64_t n, int64_t k) {
  using T = typename Mainloop::Atom::element_type;
  g100::check_shape<Mainloop>(m, n, k);
  auto [a, av] = random_operand<T>(size_t(m * k), 1);
  auto [b, bv] = random_operand<T>(size_t(n * k), 2);
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
      for (int64_t q = 0; q < k; ++q) r += av[size_t(i * k + q)] * bv[size_t(j * k + q)];
      scale = std::max(scale, std::abs(r));
      double got = double(float(c[size_t(i * n + j)]));
      worst = std::max(worst, std::isnan(got) ? INFINITY : std::abs(got - r));
    }
  return worst / scale;
}

}  // namespace

TEST_CASE("the sm_100 BF16 and FP8 GEMMs run at ragged shapes and match a float64 product", "[gpu][sm100]") {
  Device dev;
  if (!is_sm100_family(dev.target())) {
    WARN("skipped: the device is " << dev.target().name() << ", not an sm_100-family target (run with CUTEJIT_DEVICE=emulator:sm_100a)");
    return;
  }
  // bf16 output: a half-ulp of rounding on the largest values, relative to them.
  const double tolerance = 1.0 / 128;
  // Tiles are 128 x 256 (a pair's 256 x 256, a cluster of two pairs' 512 x 256) and 64 bf16 or
  // 128 FP8 of K a stage; every shape ends each way in a partial tile.
  SECTION("one CTA a tile, persistent") {
    CHECK(run<g100::Dense<bf16>>(dev, fixtures::gemm_bf16_sm100, 300, 520, 200) < tolerance);
  }
  SECTION("FP8, one CTA a tile, persistent") {
    CHECK(run<g100::Dense<f8e4m3>>(dev, fixtures::gemm_fp8_sm100, 200, 264, 272) < tolerance);
  }
  SECTION("cluster launch control") {
    CHECK((run<g100::Dense<bf16>, g100::Scheduling::clc>(dev, fixtures::gemm_bf16_sm100_clc, 264, 392, 136)) < tolerance);
  }
  SECTION("the 2-CTA pair") {
    CHECK(run<g100::Dense<bf16, 2>>(dev, fixtures::gemm_bf16_sm100_2cta, 392, 264, 72) < tolerance);
  }
  SECTION("pairs along M sharing B by multicast") {
    CHECK((run<g100::Dense<bf16, 2, 2>>(dev, fixtures::gemm_bf16_sm100_2cta_multicast, 520, 136, 72)) < tolerance);
  }
}
