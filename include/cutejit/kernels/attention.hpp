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
 * Decode against a paged KV cache (vLLM's and FlashInfer's layout), on mma.sync from sm_80:
 *
 *     kernels::attention_decode(gpu, q, k_cache, v_cache, block_table, seqlens_k, o, lse);
 *
 * q and o are (batch * q_len, heads, head_dim): each sequence's q_len newest queries (1 for a
 * decode step, a few for speculative decoding), attending causally to its seqlens_k[b] cached
 * keys (query i sees keys up to seqlens_k[b] - q_len + i). k_cache and v_cache are (pages,
 * page_size, kv_heads, head_dim); row b of block_table (batch, pages per sequence) names
 * sequence b's pages in order; lse is (heads, batch * q_len). All compact. Long sequences are
 * split across CTAs (FlashDecoding) and combined, through a workspace the caller may give.
 *
 * The backward of the forward, from its log-sum-exp (FlashAttention-2's recomputation):
 *
 *     kernels::attention_backward(gpu, q, k, v, o, d_o, lse, d_q, d_k, d_v,
 *                                 {.cu_seqlens_q = cu_q, .cu_seqlens_k = cu_k, .causal = true});
 *
 * on the packed layout above (d_q as q, d_k and d_v as k), deterministic (no atomics: the same
 * bits on every run): on sm_90a on wgmma with every mask of the forward, elsewhere from sm_80 on
 * mma.sync with none or causal (bottom-right); head dims 64 and 128.
 *
 * What a kernel cannot take is an Error at the caller's line naming what it can, and nothing is
 * written. The offsets are read on the device, where a sequence outside the tensors traps
 * rather than reading or writing past them.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <vector>

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

struct DecodeOptions {
  int64_t q_len = 1;          ///< queries per sequence (1 to 16)
  int64_t max_seqlen_k = 0;   ///< the longest sequence's keys (chooses the splits); 0: a full block table row
  bool causal = true;
  float softmax_scale = 0;    ///< 0: 1 / sqrt(head_dim)
  int64_t splits = 0;         ///< key ranges per sequence (1 to 256); 0: chosen for the GPU
  StreamHandle stream = nullptr;
  /// Launch with programmatic dependent launch (sm_90 and newer; ignored below): as
  /// GemmOptions::programmatic_dependent_launch, for both kernels of the decode.
  bool programmatic_dependent_launch = false;
  /// Where more than one split leaves its partial results: a compact f32 vector of at least
  /// attention_decode_workspace(...) values, reused call after call (and fixed, so a CUDA graph
  /// can capture the decode). Absent: allocated on each call, or owned by the prepared decode.
  std::optional<DeviceTensor<f32>> workspace;
};

struct AttentionBackwardOptions {
  /// The packed batch's offsets, (batch + 1) int32 each.
  std::optional<DeviceTensor<int32_t>> cu_seqlens_q, cu_seqlens_k;
  /// The longest query and key sequences (the grids cover them); 0: all of q's (k's) tokens.
  int64_t max_seqlen_q = 0, max_seqlen_k = 0;
  bool causal = false;
  int64_t window_left = -1, window_right = -1;  ///< as AttentionOptions' (sm_90a)
  bool top_left = false;                        ///< as AttentionOptions' (sm_90a)
  float softmax_scale = 0;                      ///< 0: 1 / sqrt(head_dim)
  StreamHandle stream = nullptr;
  /// Where rowsum(dO * O) goes between the kernels: compact f32 of at least heads * total_q
  /// values. Absent: allocated on each call, or owned by the prepared backward.
  std::optional<DeviceTensor<f32>> workspace;
};

/// A prepared backward: rowsum(dO * O), then the dK/dV kernel, then the dQ kernel, with the
/// rowsum they pass owned here. Calling it launches the three, with no lookup.
class PreparedBackward {
 public:
  PreparedBackward(PreparedLaunch dot, PreparedLaunch dkdv, PreparedLaunch dq, Buffer<float> workspace);
  void operator()() const;

 private:
  PreparedLaunch dot_, dkdv_, dq_;
  Buffer<float> workspace_;  // empty with a workspace of the caller's
};

/// A prepared decode: the split kernel and, with more than one split, the combine and the
/// partial results they pass, owned here. Calling it launches both, with no lookup.
class PreparedDecode {
 public:
  PreparedDecode(PreparedLaunch split, PreparedLaunch combine, Buffer<float> workspace, int64_t splits);
  void operator()() const;
  int64_t splits() const { return splits_; }

 private:
  PreparedLaunch split_, combine_;
  Buffer<float> workspace_;  // empty with one split or a workspace of the caller's
  int64_t splits_;
};

#define CUTEJIT_KERNELS_ATTENTION(T)                                                                                                   \
  /** O and the log-sum-exp of softmax(scale Q K^T + mask) V (see the file's comment). */                                              \
  void attention_forward(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v,           \
                         const DeviceTensor<T>& o, const DeviceTensor<f32>& lse, const AttentionOptions& options = {},                 \
                         std::source_location where = std::source_location::current());                                                \
  /** attention_forward resolved once: calling it launches with no lookup (same tensors, same memory). */                              \
  PreparedLaunch attention_forward_prepare(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k,                   \
                                           const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<f32>& lse,           \
                                           const AttentionOptions& options = {},                                                       \
                                           std::source_location where = std::source_location::current());                              \
  /** The kernel attention_forward launches on `target` for these tensors (descriptions, DeviceTensor::for_compile, the                \
      offsets included), compiled with no GPU: for warming the cache. */                                                               \
  CompiledKernel attention_forward_compile(const Target& target, const DeviceTensor<T>& q, const DeviceTensor<T>& k,                   \
                                           const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<f32>& lse,           \
                                           const AttentionOptions& options = {},                                                       \
                                           std::source_location where = std::source_location::current());                              \
  /** Decode against a paged KV cache (see the file's comment); with more than one split and no options.workspace it                   \
      allocates one on each call (cuMemFree then waits for the GPU): give one, or prepare it once, for repeated steps. */              \
  void attention_decode(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache,                                \
                        const DeviceTensor<T>& v_cache, const DeviceTensor<int32_t>& block_table,                                      \
                        const DeviceTensor<int32_t>& seqlens_k, const DeviceTensor<T>& o, const DeviceTensor<f32>& lse,                \
                        const DecodeOptions& options = {}, std::source_location where = std::source_location::current());              \
  PreparedDecode attention_decode_prepare(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache,              \
                                          const DeviceTensor<T>& v_cache, const DeviceTensor<int32_t>& block_table,                    \
                                          const DeviceTensor<int32_t>& seqlens_k, const DeviceTensor<T>& o,                            \
                                          const DeviceTensor<f32>& lse, const DecodeOptions& options = {},                             \
                                          std::source_location where = std::source_location::current());                               \
  /** The f32 values DecodeOptions::workspace must hold for this decode (0 when it runs in one split). */                              \
  int64_t attention_decode_workspace(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache,                   \
                                     const DeviceTensor<int32_t>& block_table, const DecodeOptions& options = {},                      \
                                     std::source_location where = std::source_location::current());                                    \
  /** Every kernel attention_decode may launch on `target` for these tensors (descriptions, DeviceTensor::for_compile), compiled       \
      with no GPU, for warming the cache: the one-split kernel, and the split and combine kernels of each split count it may           \
      choose (the choice depends on the GPU), or of options.splits alone. */                                                           \
  std::vector<CompiledKernel> attention_decode_compile(const Target& target, const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache, \
                                                       const DeviceTensor<T>& v_cache, const DeviceTensor<int32_t>& block_table,       \
                                                       const DeviceTensor<int32_t>& seqlens_k, const DeviceTensor<T>& o,               \
                                                       const DeviceTensor<f32>& lse, const DecodeOptions& options = {},                \
                                                       std::source_location where = std::source_location::current());                  \
  /** dQ, dK and dV of the forward's O = softmax(scale Q K^T + mask) V, given dO and the forward's lse (see the file's comment). */    \
  void attention_backward(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v,          \
                          const DeviceTensor<T>& o, const DeviceTensor<T>& d_o, const DeviceTensor<f32>& lse,                          \
                          const DeviceTensor<T>& d_q, const DeviceTensor<T>& d_k, const DeviceTensor<T>& d_v,                          \
                          const AttentionBackwardOptions& options = {},                                                                \
                          std::source_location where = std::source_location::current());                                               \
  PreparedBackward attention_backward_prepare(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k,                \
                                              const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<T>& d_o,          \
                                              const DeviceTensor<f32>& lse, const DeviceTensor<T>& d_q, const DeviceTensor<T>& d_k,    \
                                              const DeviceTensor<T>& d_v, const AttentionBackwardOptions& options = {},                \
                                              std::source_location where = std::source_location::current());                           \
  /** The three kernels attention_backward launches on `target` for these tensors (descriptions), compiled with no GPU. */             \
  std::vector<CompiledKernel> attention_backward_compile(const Target& target, const DeviceTensor<T>& q, const DeviceTensor<T>& k,     \
                                                         const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<T>& d_o, \
                                                         const DeviceTensor<f32>& lse, const DeviceTensor<T>& d_q,                     \
                                                         const DeviceTensor<T>& d_k, const DeviceTensor<T>& d_v,                       \
                                                         const AttentionBackwardOptions& options = {},                                 \
                                                         std::source_location where = std::source_location::current());
CUTEJIT_KERNELS_ATTENTION(bf16)
CUTEJIT_KERNELS_ATTENTION(f16)
#undef CUTEJIT_KERNELS_ATTENTION

}  // namespace cutejit::kernels
