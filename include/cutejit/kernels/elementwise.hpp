/** \file
 * Elementwise and row operators of a transformer block, compiled into libcutejit, for f32, f16
 * and bf16 on every target:
 *
 *     kernels::silu_mul(gpu, gate, up, out);          // out = silu(gate) * up, the SwiGLU MLP's middle
 *     kernels::rope(gpu, q, positions, inv_freq);     // rotary embedding of q (tokens, heads, head_dim), in place
 *     kernels::softmax(gpu, x, y);                    // y = softmax(x) along each row, in place or not
 *
 * Each rounds as Hugging Face's Qwen3/Llama code does where it rounds between steps (said per
 * operator); a mistake is an Error at the caller's line, and nothing is written.
 */
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "cutejit/core/compiled.hpp"
#include "cutejit/core/target.hpp"
#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/device.hpp"

namespace cutejit::kernels {

struct ElementwiseOptions {
  StreamHandle stream = nullptr;  ///< the stream the launch is queued on
};

struct SoftmaxOptions {
  float scale = 1;                ///< softmax(scale * x): an attention's 1 / sqrt(d), or 1 / temperature
  StreamHandle stream = nullptr;  ///< the stream the launch is queued on
};

/// The inverse frequencies of rotary embedding over `head_dim` (even) with base `theta`:
/// theta^(-2i / head_dim) for i < head_dim / 2, computed in float64 and rounded to f32, the
/// table `rope` takes. Upload it once.
std::vector<float> rope_inv_freq(int64_t head_dim, double theta);

// One overload per element type (f32, f16, bf16): non-template functions, compiled into
// libcutejit.
#define CUTEJIT_KERNELS_ELEMENTWISE(T)                                                                                            \
  /** out = silu(gate) * up over (rows, n) tensors (rows contiguous); silu(g) = g / (1 + e^-g) in f32, rounded to T, then         \
      multiplied by up and rounded again. */                                                                                      \
  void silu_mul(const Device& device, const DeviceTensor<T>& gate, const DeviceTensor<T>& up, const DeviceTensor<T>& out,         \
                const ElementwiseOptions& options = {}, std::source_location where = std::source_location::current());            \
  /** Rotary embedding, in place, of x (tokens, heads, head_dim), head_dim contiguous: the halves of each head rotate as          \
      pairs (x_i, x_{i + d/2}) by the angle positions[token] * inv_freq[i] (f32 product; cos and sin in f32), computed in f32     \
      and rounded once. positions: (tokens) int32; inv_freq: (head_dim / 2) f32, as rope_inv_freq makes it. */                    \
  void rope(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<int32_t>& positions,                               \
            const DeviceTensor<float>& inv_freq, const ElementwiseOptions& options = {},                                          \
            std::source_location where = std::source_location::current());                                                        \
  /** y = softmax(scale x) along each row of (rows, n) tensors (rows contiguous; y may be x): exp(scale (x - max)) / sum, in      \
      f32 and rounded once, as PyTorch's softmax of a float tensor. A row of -inf only is NaN, as PyTorch's. */                   \
  void softmax(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& y, const SoftmaxOptions& options = {},      \
               std::source_location where = std::source_location::current());
CUTEJIT_KERNELS_ELEMENTWISE(f32)
CUTEJIT_KERNELS_ELEMENTWISE(f16)
CUTEJIT_KERNELS_ELEMENTWISE(bf16)
#undef CUTEJIT_KERNELS_ELEMENTWISE

/// The kernels silu_mul and rope launch, compiled for `target` with no GPU: silu_mul on rows x n
/// and rope on tokens x heads x head_dim of `element` (f32, f16 or bf16).
CompiledKernel silu_mul_compile(const Target& target, DType element, int64_t rows, int64_t n,
                                std::source_location where = std::source_location::current());
CompiledKernel rope_compile(const Target& target, DType element, int64_t tokens, int64_t heads, int64_t head_dim,
                            std::source_location where = std::source_location::current());
/// The kernel softmax launches on rows x n of `element`, compiled for `target` with no GPU.
CompiledKernel softmax_compile(const Target& target, DType element, int64_t rows, int64_t n,
                               std::source_location where = std::source_location::current());

}  // namespace cutejit::kernels
