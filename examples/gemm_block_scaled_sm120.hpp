// Named kernels of cutejit/kernels/gemm/sm120_block_scaled.hpp, their launches and their checks.
#pragma once

#include "cutejit/kernels/gemm/sm120_block_scaled.hpp"

#include "example.hpp"

namespace examples {
using namespace cutejit;

#define CUTEJIT_BLOCK_SCALED_GEMM(NAME, OP)                                                                          \
  inline Kernel NAME{#NAME, [](Tensor<u8> a, Tensor<u8> b, Tensor<u8> sfa, Tensor<u8> sfb, Tensor<f32> c, Int m, Int n, \
                               Int k) { gemm_sm120_block_scaled::kernel<OP>(a, b, sfa, sfb, c, m, n, k); }};
CUTEJIT_BLOCK_SCALED_GEMM(gemm_nvfp4_sm120, SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN)
CUTEJIT_BLOCK_SCALED_GEMM(gemm_mxfp4_sm120, SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN)
CUTEJIT_BLOCK_SCALED_GEMM(gemm_mxfp8_sm120, SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN)
#undef CUTEJIT_BLOCK_SCALED_GEMM

/// A kernel cross-compiled for `target` at an m x n x k shape (elements of K).
template <class Op, class K>
CompiledKernel gemm_block_scaled_compile(const K& kernel, const Target& target, int64_t m = 256, int64_t n = 256, int64_t k = 512) {
  gemm_sm120_block_scaled::check_shape(kernel.name().c_str(), m, n, k);
  const int64_t row_bytes = k / (Op::k_elements / Op::k), row_scales = k / Op::scale_block;
  return kernel.compile(target, DeviceTensor<uint8_t>::for_compile({m * row_bytes}), DeviceTensor<uint8_t>::for_compile({n * row_bytes}),
                        DeviceTensor<uint8_t>::for_compile({m * row_scales}), DeviceTensor<uint8_t>::for_compile({n * row_scales}),
                        DeviceTensor<float>::for_compile({m * n}), int32_t(m), int32_t(n), int32_t(k));
}

}  // namespace examples
