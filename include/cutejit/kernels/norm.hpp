/** \file
 * Row normalisations, compiled into libcutejit: RMSNorm and LayerNorm, each with or without the
 * pre-norm block's fused residual add, for f32, f16 and bf16 rows, on every target.
 *
 *     kernels::rmsnorm(gpu, x, weight, y);                       // y = RMSNorm(x) * weight
 *     kernels::add_rmsnorm(gpu, x, residual, weight, y);         // residual += x; y = RMSNorm(residual) * weight
 *     kernels::layernorm(gpu, x, weight, bias, y);               // y = (x - mean) / sqrt(var + eps) * weight + bias
 *     kernels::add_layernorm(gpu, x, residual, weight, bias, y); // residual += x; y = LayerNorm(residual)
 *
 * LayerNorm's bias may be std::nullopt (a LayerNorm without one); its statistics are in f32,
 * the variance the biased one (over hidden, as PyTorch's), and the result rounded once.
 * x and y are (rows, hidden) with each row contiguous; weight is (hidden). The sum of squares is
 * taken in f32 and the result rounded as Hugging Face's Qwen3/Llama RMSNorm rounds it: the
 * normalised row to the element type, then its product with the weight. A mistake (shapes that
 * differ, a row that is not contiguous, hidden not a multiple of 16 bytes' elements, misaligned
 * memory) is an Error at the caller's line, and nothing is written.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>

#include "cutejit/core/compiled.hpp"
#include "cutejit/core/target.hpp"
#include "cutejit/jit/prepared_launch.hpp"
#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/device.hpp"

namespace cutejit::kernels {

struct NormOptions {
  float eps = 1e-6f;
  StreamHandle stream = nullptr;  ///< the stream the launch is queued on
};

// One overload per element type (f32, f16, bf16): non-template functions, compiled into
// libcutejit, so including this header costs no tracer.
#define CUTEJIT_KERNELS_NORM(T)                                                                                                        \
  /** y = x / sqrt(mean(x^2) + eps) * weight, row by row. */                                                                           \
  void rmsnorm(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& weight, const DeviceTensor<T>& y,                \
               const NormOptions& options = {}, std::source_location where = std::source_location::current());                         \
  /** residual = residual + x (rounded to T), then y = RMSNorm(residual) * weight: a pre-norm transformer's residual stream and        \
      the next norm in one pass. */                                                                                                    \
  void add_rmsnorm(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& residual, const DeviceTensor<T>& weight,     \
                   const DeviceTensor<T>& y, const NormOptions& options = {},                                                          \
                   std::source_location where = std::source_location::current());                                                      \
  /** rmsnorm resolved once: calling it launches with no lookup (same arguments, same memory). */                                      \
  PreparedLaunch rmsnorm_prepare(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& weight,                        \
                                 const DeviceTensor<T>& y, const NormOptions& options = {},                                            \
                                 std::source_location where = std::source_location::current());                                        \
  /** y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias, row by row (NormOptions::eps: set 1e-5 for PyTorch's default). */        \
  void layernorm(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& weight,                                        \
                 const std::optional<DeviceTensor<T>>& bias, const DeviceTensor<T>& y, const NormOptions& options = {},                \
                 std::source_location where = std::source_location::current());                                                        \
  /** residual = residual + x (rounded to T), then y = LayerNorm(residual) * weight + bias. */                                         \
  void add_layernorm(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& residual, const DeviceTensor<T>& weight,   \
                     const std::optional<DeviceTensor<T>>& bias, const DeviceTensor<T>& y, const NormOptions& options = {},            \
                     std::source_location where = std::source_location::current());
CUTEJIT_KERNELS_NORM(f32)
CUTEJIT_KERNELS_NORM(f16)
CUTEJIT_KERNELS_NORM(bf16)
#undef CUTEJIT_KERNELS_NORM

/// The kernel rmsnorm (or, with `add_residual`, add_rmsnorm) launches on rows x hidden
/// contiguous rows of `element` (f32, f16 or bf16), compiled for `target` with no GPU: for
/// warming the cache.
CompiledKernel rmsnorm_compile(const Target& target, DType element, int64_t rows, int64_t hidden, bool add_residual = false,
                               std::source_location where = std::source_location::current());
/// The kernel layernorm (add_layernorm with `add_residual`; with or without a bias) launches on
/// rows x hidden contiguous rows of `element`, compiled for `target` with no GPU.
CompiledKernel layernorm_compile(const Target& target, DType element, int64_t rows, int64_t hidden, bool add_residual = false,
                                 bool has_bias = true, std::source_location where = std::source_location::current());

}  // namespace cutejit::kernels
