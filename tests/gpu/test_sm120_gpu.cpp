// The block-scaled sm_120 kernels executed: the GEMMs of gemm_block_scaled_sm120.hpp, the
// decode-shaped GEMVs of gemv_block_scaled_sm120.hpp and the TMA-fed GEMMs of
// gemm_tma_tensorop.hpp (scales in the 128x4 blocked layout), on an sm_120/sm_121 GPU or on the
// emulated device of such a target (CUTEJIT_DEVICE=emulator:sm_120a). NVFP4, MXFP4 and MXFP8,
// at shapes of several tiles each way, against a float64 product of the operands and scales
// decoded on the host from the format definitions (block_scaled_reference.hpp), output poisoned.
#include <catch2/catch.hpp>

#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "block_scaled_reference.hpp"
#include "gemm_block_scaled_sm120.hpp"
#include "gemm_tma_tensorop.hpp"
#include "gemv_block_scaled_sm120.hpp"
#include "support.hpp"

using namespace cutejit;
namespace bs = test::block_scaled;

namespace {

bool is_sm120_family(const Target& t) { return t.sm == 120 || t.sm == 121; }

/// Random operands of `rows` x k elements in the format of `Op`, and their row-major scales.
template <class Op>
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> random_operand(int64_t rows, int64_t k, uint32_t seed) {
  constexpr bool fp4 = Op::k_elements / Op::k == 2;
  const size_t bytes = size_t(rows * (fp4 ? k / 2 : k)), scales = size_t(rows * (k / Op::scale_block));
  return {fp4 ? bs::random_e2m1_pairs(bytes, seed) : bs::random_e4m3(bytes, seed),
          Op::scale_block == 16 ? bs::random_ue4m3(scales, seed + 100) : bs::random_ue8m0(scales, seed + 100)};
}

/// The float64 product (rows x cols) of `Op`'s operands.
template <class Op>
std::vector<double> reference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const std::vector<uint8_t>& sfa,
                              const std::vector<uint8_t>& sfb, int64_t rows, int64_t cols, int64_t k) {
  constexpr bool fp4 = Op::k_elements / Op::k == 2;
  return Op::scale_block == 16 ? bs::reference(a, b, sfa, sfb, fp4, 16, bs::ue4m3, rows, cols, k)
                               : bs::reference(a, b, sfa, sfb, fp4, Op::scale_block, bs::ue8m0, rows, cols, k);
}

/// The largest error of `got` relative to the reference's largest magnitude; checks it against
/// `tolerance`: f32 accumulation of exact products by default.
void compare(const std::vector<float>& got, const std::vector<double>& ref, int64_t cols, double tolerance = 1e-5) {
  double worst = 0, scale = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, std::abs(ref[i]));
    double e = std::isnan(got[i]) ? INFINITY : std::abs(double(got[i]) - ref[i]);
    if (e > worst) worst = e, worst_at = i;
  }
  INFO("worst at (" << worst_at / size_t(cols) << ", " << worst_at % size_t(cols) << "): " << got[worst_at] << " against "
                    << ref[worst_at] << ", the largest magnitude " << scale);
  CHECK(worst / scale < tolerance);
}

/// C (m x n, f32) of the plain GEMM `kernel` of `Op`, scales row-major.
template <class Op, class K>
void run_gemm(const Device& dev, K& kernel, int64_t m, int64_t n, int64_t k) {
  fixtures::gemm_sm120_block_scaled::check_shape(kernel.name().c_str(), m, n, k);
  auto [a, sfa] = random_operand<Op>(m, k, 1);
  auto [b, sfb] = random_operand<Op>(n, k, 2);
  auto da = dev.upload(a), db = dev.upload(b), dsfa = dev.upload(sfa), dsfb = dev.upload(sfb);
  auto dc = dev.upload(std::vector<float>(size_t(m * n), std::nanf("")));
  kernel(dev, fixtures::gemm_sm120_block_scaled::launch_config(m, n), da, db, dsfa, dsfb, dc, int32_t(m), int32_t(n), int32_t(k));
  dev.synchronize();
  compare(dc.to_host(), reference<Op>(a, b, sfa, sfb, m, n, k), n);
}

/// Y (tokens x n) = X W^T: the reference is the product with X as the rows.
template <class Op, class K>
void run_gemv(const Device& dev, K& kernel, int64_t n, int64_t tokens, int64_t k) {
  fixtures::gemv_sm120::check_shape(kernel.name().c_str(), n, tokens, k);
  auto [w, sfw] = random_operand<Op>(n, k, 3);
  auto [x, sfx] = random_operand<Op>(tokens, k, 4);
  auto dw = dev.upload(w), dx = dev.upload(x), dsfw = dev.upload(sfw), dsfx = dev.upload(sfx);
  auto dy = dev.upload(std::vector<float>(size_t(tokens * n), std::nanf("")));
  kernel(dev, fixtures::gemv_sm120::launch_config(n), dw, dx, dsfw, dsfx, dy, int32_t(n), int32_t(tokens), int32_t(k));
  dev.synchronize();
  compare(dy.to_host(), reference<Op>(x, w, sfx, sfw, tokens, n, k), n);
}

/// The TMA-fed GEMM (gemm_tma_block_scaled) of `Op` with output `Out` on m x n x k, ragged M
/// and N allowed; its scales go in the blocked layout.
template <class Op, class Out>
void run_tma_gemm(const Device& dev, int64_t m, int64_t n, int64_t k) {
  auto [a, sfa] = random_operand<Op>(m, k, 7);
  auto [b, sfb] = random_operand<Op>(n, k, 8);
  const int64_t blocks = k / Op::scale_block;
  auto da = dev.upload(a), db = dev.upload(b), dsfa = dev.upload(blocked_scales(sfa, m, blocks)), dsfb = dev.upload(blocked_scales(sfb, n, blocks));
  auto dc = dev.upload(std::vector<Out>(size_t(m * n), Out(std::nanf(""))));
  fixtures::gemm_tma_block_scaled_prepare<Op, Out>(dev, da, db, dsfa, dsfb, dc, m, n, k)();
  dev.synchronize();
  std::vector<float> got;
  for (Out x : dc.to_host()) got.push_back(float(x));
  // A bf16 output: a half-ulp of rounding on the largest values, relative to them.
  compare(got, reference<Op>(a, b, sfa, sfb, m, n, k), n, std::is_same_v<Out, float> ? 1e-5 : 1.0 / 128);
}

}  // namespace

TEST_CASE("the block-scaled sm_120 GEMMs run and match a float64 product of the decoded operands", "[gpu][sm120]") {
  Device dev;
  if (!is_sm120_family(dev.target())) {
    WARN("skipped: the device is " << dev.target().name() << ", not an sm_120/sm_121 target (run with CUTEJIT_DEVICE=emulator:sm_120a)");
    return;
  }
  // 3 x 2 tiles of 64 x 64, the last each way partial (M and N ragged, odd N among them), 8 (FP4)
  // or 16 (FP8) atoms' K steps.
  SECTION("NVFP4") { run_gemm<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(dev, fixtures::gemm_nvfp4_sm120, 150, 100, 512); }
  SECTION("MXFP4") { run_gemm<SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN>(dev, fixtures::gemm_mxfp4_sm120, 129, 127, 512); }
  SECTION("MXFP8") { run_gemm<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>(dev, fixtures::gemm_mxfp8_sm120, 192, 70, 512); }
}

TEST_CASE("the block-scaled sm_120 GEMVs run and match a float64 product of the decoded operands", "[gpu][sm120]") {
  Device dev;
  if (!is_sm120_family(dev.target())) {
    WARN("skipped: the device is " << dev.target().name() << ", not an sm_120/sm_121 target (run with CUTEJIT_DEVICE=emulator:sm_120a)");
    return;
  }
  // 4 CTAs of 16 weight rows (N, a model's width, is a multiple of 16; the tokens are ragged:
  // 1 to 8 of the atom's 8 columns). The four warps take every fourth K step, 4 at a time
  // (Unroll{4}): K of 20, 8, 12 and 22 steps leave each warp a whole number of unrolled groups or not.
  SECTION("NVFP4, 1 token") { run_gemv<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(dev, fixtures::gemv_nvfp4_sm120, 64, 1, 1280); }
  SECTION("NVFP4, 5 tokens") { run_gemv<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(dev, fixtures::gemv_nvfp4_sm120, 64, 5, 512); }
  SECTION("MXFP4, 8 tokens") { run_gemv<SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN>(dev, fixtures::gemv_mxfp4_sm120, 64, 8, 768); }
  SECTION("MXFP8, 3 tokens") { run_gemv<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>(dev, fixtures::gemv_mxfp8_sm120, 64, 3, 704); }
  SECTION("NVFP4 with the SiLU-and-gate epilogue, 6 tokens") {
    const int64_t n = 64, tokens = 6, k = 512;
    using Op = SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN;
    auto [w, sfw] = random_operand<Op>(n, k, 5);
    auto [x, sfx] = random_operand<Op>(tokens, k, 6);
    std::vector<float> gate(size_t(tokens * n));
    for (size_t i = 0; i < gate.size(); ++i) gate[i] = float(int(i % 7) - 3) * 0.25f;
    auto dw = dev.upload(w), dx = dev.upload(x), dsfw = dev.upload(sfw), dsfx = dev.upload(sfx);
    auto dgate = dev.upload(gate);
    auto dy = dev.upload(std::vector<float>(size_t(tokens * n), std::nanf("")));
    fixtures::gemv_nvfp4_sm120_silu_gate(dev, fixtures::gemv_sm120::launch_config(n), dw, dx, dsfw, dsfx, dy, dgate, int32_t(n),
                                         int32_t(tokens), int32_t(k));
    dev.synchronize();
    std::vector<double> ref = reference<Op>(x, w, sfx, sfw, tokens, n, k);
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = ref[i] / (1 + std::exp(-ref[i])) * gate[i];
    compare(dy.to_host(), ref, n);
  }
}

TEST_CASE("the block-scaled TMA-fed sm_120 GEMM (MXFP8) runs and matches a float64 product of the decoded operands, ragged in M and N",
          "[gpu][sm120]") {
  Device dev;
  if (!is_sm120_family(dev.target())) {
    WARN("skipped: the device is " << dev.target().name() << ", not an sm_120/sm_121 target (run with CUTEJIT_DEVICE=emulator:sm_120a)");
    return;
  }
  // M and N ragged across 2 x 2 tiles of 128 x 128, 3 stages of K, the scales' rows padded to 128.
  run_tma_gemm<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN, bf16>(dev, 200, 130, 384);
}

// FP4 packs two elements a byte: the ring's K tiles are counted in bytes (the emulated device
// found the kernel running twice its K tiles, reading scale blocks past the scale tensor).
TEST_CASE("the block-scaled TMA-fed sm_120 GEMMs of FP4 (NVFP4, MXFP4) run their K tiles and match a float64 product",
          "[gpu][sm120]") {
  Device dev;
  if (!is_sm120_family(dev.target())) {
    WARN("skipped: the device is " << dev.target().name() << ", not an sm_120/sm_121 target");
    return;
  }
  SECTION("NVFP4, bf16 out") { run_tma_gemm<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN, bf16>(dev, 200, 130, 768); }
  SECTION("MXFP4, f32 out") { run_tma_gemm<SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN, float>(dev, 200, 130, 768); }
}
