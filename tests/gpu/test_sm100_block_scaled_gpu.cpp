// The block-scaled sm_100 GEMMs executed (gemm_sm100_block_scaled.hpp): on a Blackwell
// datacenter GPU, or on the emulated device of an sm_100-family target
// (CUTEJIT_DEVICE=emulator:sm_100a). NVFP4 and MXFP8, each on the persistent schedule and on
// cluster launch control, at ragged shapes (partial tiles along M, N and K) of several tiles each way and several stages of K, against
// a float64 product of the operands and scales decoded on the host from the format
// definitions (block_scaled_reference.hpp), output poisoned.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <type_traits>

#include "block_scaled_reference.hpp"
#include "gemm_sm100_block_scaled.hpp"
#include "support.hpp"

using namespace cutejit;
namespace g100 = fixtures::gemm_sm100;
namespace bs = test::block_scaled;

namespace {

bool is_sm100_family(const Target& t) { return t.sm == 100 || t.sm == 103 || t.sm == 110; }

/// Runs `kernel` of main loop `Mainloop` (Nvfp4 or Mxfp8) on m x n x k with random operands and
/// scales, its persistent grid sized for `multiprocessors`; checks the largest error relative to
/// the reference's largest magnitude.
template <class Mainloop, g100::Scheduling S = g100::Scheduling::persistent, class K>
void run(const Device& dev, K& kernel, int64_t m, int64_t n, int64_t k, int multiprocessors) {
  g100::check_shape<Mainloop>(m, n, k);
  using T = typename Mainloop::T;
  constexpr bool fp4 = std::is_same_v<T, uint8_t>;  // FP4 pairs; else e4m3
  constexpr int block = Mainloop::tile_k / Mainloop::blocks;
  const int64_t row_bytes = fp4 ? k / 2 : k, blocks = k / block;
  std::vector<uint8_t> a = fp4 ? bs::random_e2m1_pairs(size_t(m * row_bytes), 1) : bs::random_e4m3(size_t(m * row_bytes), 1);
  std::vector<uint8_t> b = fp4 ? bs::random_e2m1_pairs(size_t(n * row_bytes), 2) : bs::random_e4m3(size_t(n * row_bytes), 2);
  std::vector<uint8_t> sfa = fp4 ? bs::random_ue4m3(size_t(m * blocks), 3) : bs::random_ue8m0(size_t(m * blocks), 3);
  std::vector<uint8_t> sfb = fp4 ? bs::random_ue4m3(size_t(n * blocks), 4) : bs::random_ue8m0(size_t(n * blocks), 4);

  std::vector<T> ha(a.size()), hb(b.size());
  for (size_t i = 0; i < a.size(); ++i) std::memcpy(&ha[i], &a[i], 1);
  for (size_t i = 0; i < b.size(); ++i) std::memcpy(&hb[i], &b[i], 1);
  auto da = dev.upload(ha), db = dev.upload(hb);
  auto dsfa = dev.upload(blocked_scales(sfa, m, blocks)), dsfb = dev.upload(blocked_scales(sfb, n, blocks));
  auto dc = dev.upload(std::vector<bf16>(size_t(m * n), bf16(std::nanf(""))));
  auto ta = g100::operand_tensor_map(da, m, row_bytes), tb = g100::operand_tensor_map(db, n, row_bytes);
  auto tsfa = g100::scale_tensor_map(dsfa, m, blocks, g100::tile_m, Mainloop::half_chunks);
  auto tsfb = g100::scale_tensor_map(dsfb, n, blocks, Mainloop::tile_n, Mainloop::half_chunks);
  Launch launch = g100::launch_config<Mainloop, S>(multiprocessors, m, n);
  kernel(dev, launch, ta, tb, tsfa, tsfb, g100::c_tensor_map(dc, m, n), int32_t(m), int32_t(n), int32_t(k));
  dev.synchronize();
  std::vector<bf16> c = dc.to_host();

  const std::vector<double> ref =
      fp4 ? bs::reference(a, b, sfa, sfb, true, block, bs::ue4m3, m, n, k) : bs::reference(a, b, sfa, sfb, false, block, bs::ue8m0, m, n, k);
  double worst = 0, scale = 0;
  int64_t worst_at = 0;
  for (int64_t i = 0; i < m * n; ++i) {
    scale = std::max(scale, std::abs(ref[size_t(i)]));
    double got = double(float(c[size_t(i)]));
    double e = std::isnan(got) ? INFINITY : std::abs(got - ref[size_t(i)]);
    if (e > worst) worst = e, worst_at = i;
  }
  INFO("worst at C(" << worst_at / n << ", " << worst_at % n << "): " << float(c[size_t(worst_at)]) << " against "
                     << ref[size_t(worst_at)] << ", the largest magnitude " << scale);
  CHECK(worst / scale < 1.0 / 128);  // bf16 output: a half-ulp of rounding on the largest values
}

}  // namespace

TEST_CASE("the block-scaled sm_100 GEMMs run and match a float64 product of the decoded operands", "[gpu][sm100]") {
  Device dev;
  if (!is_sm100_family(dev.target())) {
    WARN("skipped: the device is " << dev.target().name() << ", not an sm_100-family target (run with CUTEJIT_DEVICE=emulator:sm_100a)");
    return;
  }
  // 4 x 3 (persistent) or 3 x 2 and 2 x 3 (CLC) tiles of 128 x 128, the last each way partial.
  // The persistent grids are of 2 CTAs, 6 tiles each (each accumulator filled three times), and
  // K is more stages than the ring holds (5 for NVFP4, 6 for MXFP8), the last partial: the ring
  // wraps within a tile, so each stage's TMEM scale columns are overwritten while the other
  // accumulator is drained.
  SECTION("NVFP4, persistent") { run<g100::Nvfp4>(dev, fixtures::gemm_nvfp4_sm100, 392, 264, 6 * 256 + 160, 2); }
  SECTION("NVFP4, cluster launch control") {
    run<g100::Nvfp4, g100::Scheduling::clc>(dev, fixtures::gemm_nvfp4_sm100_clc, 264, 136, 480, dev.multiprocessors());
  }
  SECTION("MXFP8, persistent") { run<g100::Mxfp8>(dev, fixtures::gemm_mxfp8_sm100, 392, 264, 7 * 128 + 96, 2); }
  SECTION("MXFP8, cluster launch control") {
    run<g100::Mxfp8, g100::Scheduling::clc>(dev, fixtures::gemm_mxfp8_sm100_clc, 136, 264, 416, dev.multiprocessors());
  }
}
