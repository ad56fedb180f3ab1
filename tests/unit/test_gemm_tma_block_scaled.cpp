// The block-scaled GEMM on the TMA mma.sync ring (tests/fixtures/gemm_tma_tensorop.hpp), which no GPU
// here can run: its SASS on sm_120a and sm_121a (the block-scaled MMAs, the ring's ldmatrix and
// TMA loads, one word of NVFP4 scales per row and MMA step, no local memory), its epilogue
// hook, and its refusals. What it computes rests on pieces checked elsewhere: the ring and its
// ldmatrix partitions are the FP8 GEMM's (run on the H200), the scale partitions are checked
// against the ISA in atom/test_sm120_scale_partition.cpp, and the blocked layout against its
// definition in arch/test_sm100_scale_factors.cpp.
#include <catch2/catch.hpp>

#include <string>

#include "gemm_tma_tensorop.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
using Nvfp4 = SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN;
using Mxfp4 = SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN;
using Mxfp8 = SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN;
}  // namespace

TEST_CASE("the block-scaled TMA GEMMs' SASS: 128 block-scaled MMAs, 2 TMA loads and the scales of each stage, no local memory", "[unit]") {
  for (const char* t : {"sm_120a", "sm_121a"}) {
    INFO(t);
    const Target target = Target::parse(t);
    CompiledKernel nv = fixtures::gemm_tma_block_scaled_compile<Nvfp4, bf16>(fixtures::gemm_tma_block_scaled<Nvfp4, bf16>, target);
    CHECK(nv.name == "gemm_tma_nvfp4_bf16");
    std::string sass = test::disassemble(nv.cubin, "-sass");
    // A stage (128 bytes of K, 4 MMA steps) per warp: 4 x 8 atoms of 16 x 8 a step.
    CHECK(test::count(sass, "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X") == 128);
    CHECK(test::count(sass, "UTMALDG.2D") == 2);
    CHECK(test::count(sass, "LDSM.16.M88.4") == 4 * 4);  // A: 4 atoms of 16 rows a step
    // A row's four UE4M3 scales of a step are one word of the blocked layout, and the rows 32
    // apart that a thread's atoms hold share 16 bytes of it: one 16-byte load a step for A's
    // four atoms, two for B's eight, and no narrower ones.
    CHECK(test::count(sass, "LDG.E.128.CONSTANT") == 4 * 3);
    CHECK(test::count(sass, "LDG.E.CONSTANT ") + test::count(sass, "LDG.E.U8") + test::count(sass, "LDG.E.64") == 0);
    test::check_no_local_memory(nv.cubin, nv.name, sass);
    CHECK(test::resource_usage(nv.cubin, nv.name, "REG") <= 255);  // 255

    CompiledKernel mx4 = fixtures::gemm_tma_block_scaled_compile<Mxfp4, float>(fixtures::gemm_tma_block_scaled<Mxfp4, float>, target);
    std::string mx4_sass = test::disassemble(mx4.cubin, "-sass");
    CHECK(test::count(mx4_sass, "OMMA.SF.16864.F32.E2M1.E2M1.E8") == 128);
    CHECK(test::count(mx4_sass, "LDG.E.U16.CONSTANT") == 4 * (4 + 8));  // two scales a row and step
    test::check_no_local_memory(mx4.cubin, mx4.name, mx4_sass);

    CompiledKernel mx8 = fixtures::gemm_tma_block_scaled_compile<Mxfp8, bf16>(fixtures::gemm_tma_block_scaled<Mxfp8, bf16>, target);
    CHECK(mx8.name == "gemm_tma_mxfp8_bf16");
    std::string mx8_sass = test::disassemble(mx8.cubin, "-sass");
    CHECK(test::count(mx8_sass, "QMMA.SF.16832.F32.E4M3.E4M3.E8") == 128);
    CHECK(test::count(mx8_sass, "UTMALDG.2D") == 2);
    // MXFP8 has one scale a row per step, 4 bytes apart for the rows 32 apart: byte loads.
    CHECK(test::count(mx8_sass, "LDG.E.U8.CONSTANT") == 4 * (4 + 8));
    test::check_no_local_memory(mx8.cubin, mx8.name, mx8_sass);
  }
}

TEST_CASE("the block-scaled TMA GEMM's epilogue hook reads its bias; the plain one reads only scales", "[unit]") {
  const Target target = Target::parse("sm_120a");
  const int64_t m = 1000, n = 600, k = 1024;
  namespace tma = cutejit::kernels::gemm_sm120;
  CompiledKernel biased = fixtures::gemm_tma_nvfp4_bias_relu.compile(
      target, tma::operand_map_for_compile<uint8_t>(), tma::operand_map_for_compile<uint8_t>(),
      DeviceTensor<uint8_t>::for_compile({tma::scale_bytes<Nvfp4>(m, k)}), DeviceTensor<uint8_t>::for_compile({tma::scale_bytes<Nvfp4>(n, k)}),
      DeviceTensor<bf16>::make(256, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1}), test::vector_arg<float>(n, 256),
      int32_t(m), int32_t(n), int32_t(k));
  CompiledKernel plain = fixtures::gemm_tma_block_scaled_compile<Nvfp4, bf16>(fixtures::gemm_tma_block_scaled<Nvfp4, bf16>, target);
  CHECK(test::contains(biased.ptx, "max.f32"));
  CHECK_FALSE(test::contains(plain.ptx, "max.f32"));
  // The plain kernel reads only its scales from global memory (12 vector loads per stage), the
  // biased one its bias besides.
  CHECK(test::count(plain.ptx, "ld.global") == 12);
  CHECK(test::count(biased.ptx, "ld.global") > 12);
  std::string sass = test::disassemble(biased.cubin, "-sass");
  CHECK(test::count(sass, "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X") == 128);
  test::check_no_local_memory(biased.cubin, biased.name, sass);
}

TEST_CASE("the block-scaled TMA GEMM refuses shapes without whole stages of scales, and targets without block-scaled mma.sync", "[unit]") {
  const auto& nv = fixtures::gemm_tma_block_scaled<Nvfp4, bf16>;
  auto compile = [&](const char* t, int64_t m, int64_t n, int64_t k) {
    return fixtures::gemm_tma_block_scaled_compile<Nvfp4, bf16>(nv, Target::parse(t), m, n, k);
  };
  CHECK_THROWS_WITH(compile("sm_120a", 256, 256, 1000), Contains("test_gemm_tma_block_scaled.cpp") &&
                                                            Contains("gemm_tma_nvfp4_bf16 needs M, N and K from 1 below 2^31, K a multiple of 256 "
                                                                     "and N of 2, not 256 x 256 x 1000"));
  CHECK_THROWS_WITH(compile("sm_120a", 256, 255, 1024), Contains("not 256 x 255 x 1024"));
  CHECK_THROWS_WITH((fixtures::gemm_tma_block_scaled_compile<Mxfp8, bf16>(fixtures::gemm_tma_block_scaled<Mxfp8, bf16>,
                                                                           Target::parse("sm_120a"), 256, 256, 192)),
                    Contains("K a multiple of 128"));
  // Block-scaled mma.sync is the sm_120 family's: sm_100a and sm_90a refuse it at the atom's line.
  CHECK_THROWS_WITH(compile("sm_100a", 256, 256, 1024), Contains("is not available on sm_100a"));
  CHECK_THROWS_WITH(compile("sm_90a", 256, 256, 1024), Contains("is not available on sm_90a"));
}
