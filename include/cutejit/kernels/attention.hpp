/** \file
 * Attention forward, compiled into libcutejit, the kernel picked for the device's architecture:
 *
 *     O = softmax(scale * Q K^T + mask) V,  lse = log(sum(exp(scale * Q K^T + mask)))  per row,
 *
 * for a batch of sequences packed along tokens, FlashAttention's variable-length layout:
 *
 *     kernels::attention_forward(gpu, q, k, v, o, lse,
 *                                {.cu_seqlens_q = cu_q, .cu_seqlens_k = cu_k, .max_seqlen_q = 512, .causal = true});
 *
 * q and o are (total_q, heads, head_dim), k and v (total_k, kv_heads, head_dim), lse (heads,
 * total_q) in f32; sequence b is tokens cu_seqlens[b] to cu_seqlens[b + 1] (batch + 1 int32
 * offsets on the device, from 0). Query heads are a multiple of the key/value heads (GQA, MQA:
 * query head h reads key/value head h / (heads / kv_heads), in place). head_dim is contiguous,
 * the other strides multiples of 16 bytes. Or, on sm_90a, dense tensors of any such strides:
 * q, o (batch, seqlen_q, heads, head_dim), k, v (batch, seqlen_k, kv_heads, head_dim), lse
 * (batch, heads, seqlen_q), with no offsets (BSHD, BHSD, a fused QKV as views).
 *
 * Masks: none; causal (query i of a sequence of S_q queries and S_k keys sees keys up to
 * i + S_k - S_q, FlashAttention's bottom-right alignment, or up to i with `top_left`, PyTorch's
 * is_causal); a sliding window of window_left keys before and window_right after the diagonal.
 * A row that sees no key gets O = 0 and lse = -inf.
 *
 * The kernel for each architecture (cutejit/kernels/attention/):
 *   - sm_90a: the FlashAttention-3-style forward (sm90.hpp): head dims 64, 128, 256, every mask;
 *   - sm_80 and newer otherwise: the FlashAttention-2 forward on mma.sync (sm80.hpp): head dims
 *     64 and 128, no mask or causal (bottom-right).
 * What a kernel cannot take is an Error at the caller's line naming what it can, and nothing is
 * written. The offsets are read on the device, where a sequence outside the tensors traps
 * rather than reading or writing past them.
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

struct AttentionOptions {
  /// The packed batch's offsets, (batch + 1) int32 each; absent for dense tensors.
  std::optional<DeviceTensor<int32_t>> cu_seqlens_q, cu_seqlens_k;
  /// The longest query sequence (the grid covers it); 0: all of q's tokens.
  int64_t max_seqlen_q = 0;
  bool causal = false;
  /// The keys before and after the diagonal a query sees; -1: no bound.
  int64_t window_left = -1, window_right = -1;
  /// Align masks top-left (query i's diagonal is key i) rather than bottom-right.
  bool top_left = false;
  /// 0: 1 / sqrt(head_dim).
  float softmax_scale = 0;
  StreamHandle stream = nullptr;  ///< the stream the launch is queued on
};

#define CUTEJIT_KERNELS_ATTENTION(T)                                                                                                  \
  /** O and the log-sum-exp of softmax(scale Q K^T + mask) V (see the file's comment). */                                           \
  void attention_forward(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v,         \
                         const DeviceTensor<T>& o, const DeviceTensor<f32>& lse, const AttentionOptions& options = {},               \
                         std::source_location where = std::source_location::current());                                             \
  /** attention_forward resolved once: calling it launches with no lookup (same tensors, same memory). */                          \
  PreparedLaunch attention_forward_prepare(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k,                 \
                                           const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<f32>& lse,         \
                                           const AttentionOptions& options = {},                                                     \
                                           std::source_location where = std::source_location::current());                           \
  /** The kernel attention_forward launches on `target` for these tensors (descriptions, DeviceTensor::for_compile, the    \
      offsets included), compiled with no GPU: for warming the cache. */                                                             \
  CompiledKernel attention_forward_compile(const Target& target, const DeviceTensor<T>& q, const DeviceTensor<T>& k,                 \
                                           const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<f32>& lse,         \
                                           const AttentionOptions& options = {},                                                     \
                                           std::source_location where = std::source_location::current());
CUTEJIT_KERNELS_ATTENTION(bf16)
CUTEJIT_KERNELS_ATTENTION(f16)
#undef CUTEJIT_KERNELS_ATTENTION

}  // namespace cutejit::kernels
