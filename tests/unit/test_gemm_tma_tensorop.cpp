// The TMA-fed mma.sync GEMM (tests/fixtures/gemm_tma_tensorop.hpp) on the CPU: its stage tiles are
// laid out as the TMA's 128-byte swizzle leaves a box, its SASS on sm_120a and sm_121a (the
// targets it cannot run on here) has the tensor-core, ldmatrix and TMA instructions and no
// local memory, and a bad shape is an error at the caller's line.
#include <catch2/catch.hpp>

#include <string>

#include "gemm_tma_tensorop.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
/// The byte at which the 128-byte-swizzled TMA box puts (row, byte) of a box of 128-byte rows:
/// the 16-byte chunk c of row r at chunk c ^ (r % 8), from the CUDA tensor-map swizzle mode.
int64_t tma_swizzled_byte(int64_t row, int64_t byte) { return row * 128 + (((byte / 16) ^ (row % 8)) * 16) + byte % 16; }

template <Element T>
void check_ring_is_the_tma_box(int64_t rows) {
  constexpr int64_t tile_k = cutejit::kernels::gemm_sm80::Config::tile_k<T>(), stages = cutejit::kernels::gemm_sm120::config.stages;
  ComposedLayout ring = cutejit::kernels::gemm_sm80::ring_layout<T>(rows, int(stages), cutejit::kernels::gemm_sm80::Major::k);
  for (int64_t s = 0; s < stages; ++s)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < tile_k; ++k) {
        const int64_t byte = ring(IntTuple{r, k, s}) * int64_t(sizeof(T));
        // Stage s's box lands at s * rows * 128 bytes.
        if (byte != s * rows * 128 + tma_swizzled_byte(r, k * int64_t(sizeof(T)))) {
          INFO("stage " << s << " row " << r << " k " << k);
          CHECK(byte == s * rows * 128 + tma_swizzled_byte(r, k * int64_t(sizeof(T))));
        }
      }
}
}  // namespace

TEST_CASE("the TMA GEMM's stage tiles are where the 128-byte-swizzled boxes put each element", "[unit]") {
  check_ring_is_the_tma_box<bf16>(128);
  check_ring_is_the_tma_box<f8e4m3>(128);
  // The comparison can fail: a tile with the 64-byte swizzle's pattern is elsewhere.
  ComposedLayout wrong = composition(Swizzle(2, 3, 3), make_layout({128, 64}, LayoutRight{}));
  bool differs = false;
  for (int64_t r = 0; r < 128; ++r)
    for (int64_t k = 0; k < 64; ++k) differs |= wrong(IntTuple{r, k}) * 2 != tma_swizzled_byte(r, 2 * k);
  CHECK(differs);
}

TEST_CASE("the TMA GEMM's SASS on sm_120a, sm_121a and sm_90a: HMMA or QMMA, LDSM, two TMA loads per stage, no local memory", "[unit]") {
  for (const char* t : {"sm_120a", "sm_121a", "sm_90a"}) {
    INFO(t);
    CompiledKernel k = fixtures::gemm_tma_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(256, 256, 512).compile(Target::parse(t));
    std::string sass = test::disassemble(k.cubin, "-sass");
    // A warp's 64 x 64 of a 64-wide k tile: 4 x 8 atoms of 16 x 8 x 16, four k steps.
    CHECK(test::count(sass, "HMMA.16816.F32.BF16") == 128);
    CHECK(test::count(sass, "LDSM.16.M88.4") == 16);  // A: 4 blocks of 16 rows, four k steps
    CHECK(test::count(sass, "LDSM.16.M88.2") == 32);  // B: 8 blocks of 8 rows, four k steps
    CHECK(test::count(sass, "UTMALDG.2D") == 2);
    CHECK(test::contains(sass, "SYNCS.PHASECHK.TRANS64.TRYWAIT"));  // the ring's barriers
    test::check_no_local_memory(k.cubin, k.name, sass);
    CompiledKernel f = fixtures::gemm_tma_tensorop_check<SM89_16x8x32_F32E4M3E4M3F32_TN, bf16>(256, 256, 512).compile(Target::parse(t));
    std::string fp8 = test::disassemble(f.cubin, "-sass");
    CHECK(test::count(fp8, "UTMALDG.2D") == 2);
    // sm_120 has FP8 mma.sync (QMMA); Hopper's is emulated, 255 registers and a stack.
    if (std::string(t) == "sm_90a") continue;
    CHECK(test::count(fp8, "QMMA.16832.F32.E4M3.E4M3") == 128);
    test::check_no_local_memory(f.cubin, f.name, fp8);
    // 224 and 223 registers: the 128 accumulators, the fragments and the addresses, unspilled.
    CHECK(test::resource_usage(k.cubin, k.name, "REG") <= 232);
    CHECK(test::resource_usage(f.cubin, f.name, "REG") <= 232);
  }
}

TEST_CASE("the TMA GEMM's epilogue hook is traced into its epilogue: a bias read per column, and nothing read without it", "[unit]") {
  for (const char* t : {"sm_120a", "sm_90a"}) {
    INFO(t);
    CompiledKernel biased = fixtures::gemm_tma_tensorop_bias_relu_check(300, 200, 520).compile(Target::parse(t));
    CHECK(test::contains(biased.ptx, "ld.global"));  // the bias
    CHECK(test::contains(biased.ptx, "max.f32"));    // the ReLU
    std::string sass = test::disassemble(biased.cubin, "-sass");
    CHECK(test::count(sass, "HMMA.16816.F32.BF16") == 128);
    test::check_no_local_memory(biased.cubin, biased.name, sass);
    CompiledKernel plain = fixtures::gemm_tma_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(300, 200, 520).compile(Target::parse(t));
    CHECK_FALSE(test::contains(plain.ptx, "ld.global"));  // the operands come by TMA, and Identity reads nothing
    CHECK_FALSE(test::contains(plain.ptx, "max.f32"));
  }
}

TEST_CASE("the TMA GEMM refuses shapes its tensor maps cannot describe", "[unit]") {
  CHECK_THROWS_WITH(cutejit::kernels::gemm_sm120::check_shape("g", 64, 64, 60, 2),
                    Contains("test_gemm_tma_tensorop.cpp") && Contains("g needs M, N and K from 1 below 2^31, K a multiple of 8 and N of 2, not 64 x 64 x 60"));
  CHECK_THROWS_WITH(cutejit::kernels::gemm_sm120::check_shape("g", 64, 63, 64, 2), Contains("not 64 x 63 x 64"));
  CHECK_THROWS_WITH(cutejit::kernels::gemm_sm120::check_shape("g", 64, 64, 8, 1), Contains("K a multiple of 16"));
  CHECK_NOTHROW(cutejit::kernels::gemm_sm120::check_shape("g", 1, 2, 8, 2));
  // On Ampere and Ada there is no TMA.
  auto bf16_gemm = fixtures::gemm_tma_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(256, 256, 512);
  CHECK_THROWS_WITH(bf16_gemm.compile(Target::parse("sm_89")), Contains("is not available on sm_89"));
}
