// Named kernels of cutejit/kernels/gemm/sm120_gemv_block_scaled.hpp, their launches and their checks.
#pragma once

#include "cutejit/kernels/gemm/sm120_gemv_block_scaled.hpp"

#include "gemm_block_scaled_sm120.hpp"

#include "example.hpp"

namespace examples {
using namespace cutejit;

#define CUTEJIT_BLOCK_SCALED_GEMV(NAME, OP)                                                                               \
  inline Kernel NAME{#NAME, [](Tensor<u8> w, Tensor<u8> x, Tensor<u8> sfw, Tensor<u8> sfx, Tensor<f32> y, Int n, Int tokens, \
                               Int k) { gemv_sm120::kernel<OP>(w, x, sfw, sfx, y, n, tokens, k); }};
CUTEJIT_BLOCK_SCALED_GEMV(gemv_nvfp4_sm120, SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN)
CUTEJIT_BLOCK_SCALED_GEMV(gemv_mxfp4_sm120, SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN)
CUTEJIT_BLOCK_SCALED_GEMV(gemv_mxfp8_sm120, SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN)
#undef CUTEJIT_BLOCK_SCALED_GEMV

/// The epilogue hook on the NVFP4 GEMV: Y = silu(X W^T) * gate, a gate per output (T x N, f32),
/// the gated activation of a decode step's MLP.
inline Kernel gemv_nvfp4_sm120_silu_gate{
    "gemv_nvfp4_sm120_silu_gate", [](Tensor<u8> w, Tensor<u8> x, Tensor<u8> sfw, Tensor<u8> sfx, Tensor<f32> y, Tensor<f32> gate, Int n,
                                     Int tokens, Int k) {
      gemv_sm120::kernel<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(w, x, sfw, sfx, y, n, tokens, k, [&](F32 v, Int token, Int row) {
        return v / (F32(1.0f) + exp(-v)) * F32(gate(token * n + row));
      });
    }};

/// A GEMV cross-compiled for `target` at N weight rows, `tokens` tokens and K (elements).
template <class Op, class K>
CompiledKernel gemv_block_scaled_compile(const K& kernel, const Target& target, int64_t n = 4096, int64_t tokens = 1, int64_t k = 4096,
                                         detail::Where w = detail::Where::current()) {
  gemv_sm120::check_shape(kernel.name().c_str(), n, tokens, k, w);
  const int64_t row_bytes = k / (Op::k_elements / Op::k), row_scales = k / Op::scale_block;
  return kernel.compile(target, DeviceTensor<uint8_t>::for_compile({n * row_bytes}), DeviceTensor<uint8_t>::for_compile({tokens * row_bytes}),
                        DeviceTensor<uint8_t>::for_compile({n * row_scales}), DeviceTensor<uint8_t>::for_compile({tokens * row_scales}),
                        DeviceTensor<float>::for_compile({tokens * n}), int32_t(n), int32_t(tokens), int32_t(k));
}

}  // namespace examples
