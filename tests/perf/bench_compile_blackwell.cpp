// Cold JIT of the compile-verified Blackwell kernels, with no GPU: one kernel per process (run
// it once per kernel), the disk cache off, so the figure includes MLIR/LLVM set-up and
// nvJitLink's one-time start-up, as a user's first launch would.
//   cutejit_bench_compile_blackwell gemm_bf16_sm100 | gemm_bf16_sm100_clc | gemm_bf16_sm100_2cta |
//                                   gemm_bf16_sm100_2cta_multicast | gemm_fp8_sm100 | gemm_nvfp4_sm100 | gemm_mxfp8_sm100 |
//                                   gemm_nvfp4_sm120 | gemm_mxfp4_sm120 | gemm_mxfp8_sm120 | gemm_tma_tensorop_bf16_sm120 |
//                                   gemm_tma_tensorop_fp8_sm120 | gemm_tma_nvfp4_sm120 | gemm_tma_mxfp8_sm120 | gemv_nvfp4_sm120
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gemm_block_scaled_sm120.hpp"
#include "gemm_sm100.hpp"
#include "gemm_sm100_block_scaled.hpp"
#include "gemm_tma_tensorop.hpp"
#include "gemv_block_scaled_sm120.hpp"

using namespace cutejit;

int main(int argc, char** argv) {
  setenv("CUTEJIT_CACHE", "off", 1);
  const std::string which = argc > 1 ? argv[1] : "gemm_bf16_sm100";
  auto t0 = std::chrono::steady_clock::now();
  CompiledKernel k;
  if (which == "gemm_bf16_sm100") k = fixtures::gemm_bf16_sm100_compile(Target::parse("sm_100a"));
  else if (which == "gemm_bf16_sm100_clc") k = fixtures::gemm_bf16_sm100_clc_compile(Target::parse("sm_100a"));
  else if (which == "gemm_bf16_sm100_2cta") k = fixtures::gemm_bf16_sm100_2cta_compile(Target::parse("sm_100a"));
  else if (which == "gemm_bf16_sm100_2cta_multicast") k = fixtures::gemm_bf16_sm100_2cta_multicast_compile(Target::parse("sm_100a"));
  else if (which == "gemm_fp8_sm100") k = fixtures::gemm_fp8_sm100_compile(Target::parse("sm_100a"));
  else if (which == "gemm_nvfp4_sm100") k = fixtures::gemm_nvfp4_sm100_compile(Target::parse("sm_100a"));
  else if (which == "gemm_mxfp8_sm100") k = fixtures::gemm_mxfp8_sm100_compile(Target::parse("sm_100a"));
  else if (which == "gemm_nvfp4_sm120")
    k = fixtures::gemm_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(fixtures::gemm_nvfp4_sm120, Target::parse("sm_120a"));
  else if (which == "gemm_mxfp4_sm120")
    k = fixtures::gemm_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN>(fixtures::gemm_mxfp4_sm120, Target::parse("sm_120a"));
  else if (which == "gemm_mxfp8_sm120")
    k = fixtures::gemm_block_scaled_compile<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>(fixtures::gemm_mxfp8_sm120, Target::parse("sm_120a"));
  else if (which == "gemm_tma_tensorop_bf16_sm120")
    k = fixtures::gemm_tma_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(8192, 8192, 8192).compile(Target::parse("sm_120a"));
  else if (which == "gemm_tma_tensorop_fp8_sm120")
    k = fixtures::gemm_tma_tensorop_check<SM89_16x8x32_F32E4M3E4M3F32_TN, bf16>(8192, 8192, 8192).compile(Target::parse("sm_120a"));
  else if (which == "gemm_tma_nvfp4_sm120")
    k = fixtures::gemm_tma_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN, bf16>(
        fixtures::gemm_tma_block_scaled<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN, bf16>, Target::parse("sm_120a"), 8192, 8192, 8192);
  else if (which == "gemm_tma_mxfp8_sm120")
    k = fixtures::gemm_tma_block_scaled_compile<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN, bf16>(
        fixtures::gemm_tma_block_scaled<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN, bf16>, Target::parse("sm_120a"), 8192, 8192, 8192);
  else if (which == "gemv_nvfp4_sm120")
    k = fixtures::gemv_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(fixtures::gemv_nvfp4_sm120, Target::parse("sm_120a"));
  else {
    std::fprintf(stderr, "unknown kernel '%s'; see the comment at the top of bench_compile_blackwell.cpp\n", which.c_str());
    return 2;
  }
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s (%s): cold JIT %.1f ms wall (trace %.2f, verify %.2f, lower %.2f, O3+PTX %.2f, assemble %.2f), cubin %zu bytes\n",
              which.c_str(), k.target.name().c_str(), wall, k.times.trace_ms, k.times.verify_ms, k.times.lower_ms,
              k.times.codegen_ms, k.times.assemble_ms, k.cubin.size());
  return 0;
}
