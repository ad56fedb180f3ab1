// One attention problem on the host: the batch, heads, head dim, token counts and mask, and the
// checks of it and of its sequence offsets that every attention kernel shares.
#pragma once

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>

#include "cutejit/cutejit.hpp"

namespace cutejit::kernels {

/// One attention problem: `batch` sequences packed along tokens, as FlashAttention's varlen API.
struct FmhaProblem {
  int64_t batch = 1, heads = 1, kv_heads = 1, head_dim = 128;
  int64_t total_q = 0, total_k = 0;  ///< tokens of all sequences: cu_seqlens_q[batch], cu_seqlens_k[batch]
  int64_t max_seqlen_q = 0;          ///< the longest query sequence (the grid's extent)
  int64_t max_seqlen_k = 0;          ///< the longest key sequence (the backward's grid); 0: total_k
  bool causal = false;
  float softmax_scale = 0;  ///< 0: 1 / sqrt(head_dim)
  /// A sliding window: query i sees the keys from window_left before its diagonal to
  /// window_right after it (-1: no bound; causal is window_right = 0). The Hopper kernels only.
  int64_t window_left = -1, window_right = -1;
  /// Masks aligned top-left (query i's diagonal is key i, as PyTorch's is_causal) instead of
  /// bottom-right (key i + S_k - S_q, as FlashAttention's). The Hopper kernels only.
  bool top_left = false;

  /// The scale of the scores: softmax_scale, or 1 / sqrt(head_dim) when it is 0.
  float scale() const { return softmax_scale > 0 ? softmax_scale : 1.0f / std::sqrt(float(head_dim)); }

  /// A batch of equal sequences, `seqlen_q` queries and `seqlen_k` keys each: the problem of the
  /// Hopper forward on dense (batch, seqlen, heads, head_dim) tensors. Masks are set after.
  static FmhaProblem dense(int64_t batch, int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t seqlen_q, int64_t seqlen_k) {
    return {.batch = batch, .heads = heads, .kv_heads = kv_heads, .head_dim = head_dim, .total_q = batch * seqlen_q,
            .total_k = batch * seqlen_k, .max_seqlen_q = seqlen_q, .max_seqlen_k = seqlen_k};
  }

  /// The keys query i of a sequence of `sq` queries and `sk` keys sees: [first, last], empty
  /// when first > last.
  std::pair<int64_t, int64_t> visible_keys(int64_t i, int64_t sq, int64_t sk) const {
    const int64_t diagonal = i + (top_left ? 0 : sk - sq);
    int64_t last = sk - 1;
    if (causal) last = std::min(last, diagonal);
    if (window_right >= 0) last = std::min(last, diagonal + window_right);
    const int64_t first = window_left >= 0 ? std::max<int64_t>(0, diagonal - window_left) : 0;
    return {first, last};
  }
};

/// Throws a cutejit::Error at the caller's line unless `p` is a problem `kernel` supports: one
/// of `head_dims`, query heads a multiple of the key/value heads, token counts whose offsets fit
/// 32 bits, and windows (where `windows` allows them) shorter than the keys.
inline void check_problem(const FmhaProblem& p, std::initializer_list<int64_t> head_dims, bool windows, const char* kernel,
                          detail::Where w) {
  auto bad = [&](const std::string& what) { detail::fail(std::string(kernel) + ": " + what, w); };
  if (std::find(head_dims.begin(), head_dims.end(), p.head_dim) == head_dims.end()) {
    std::string list;
    for (size_t i = 0; i < head_dims.size(); ++i)
      list += (i == 0 ? "" : i + 1 == head_dims.size() ? " and " : ", ") + std::to_string(head_dims.begin()[i]);
    bad("head dims " + list + " are supported, not " + std::to_string(p.head_dim));
  }
  if (p.batch < 1 || p.heads < 1 || p.kv_heads < 1 || p.heads % p.kv_heads != 0)
    bad("needs a batch of at least 1 and query heads a multiple of the key/value heads, not batch " + std::to_string(p.batch) + ", " +
        std::to_string(p.heads) + " query and " + std::to_string(p.kv_heads) + " key/value heads");
  const int64_t limit = (int64_t(1) << 31) / (p.heads * p.head_dim);
  if (p.total_q < 0 || p.total_k < 0 || p.total_q >= limit || p.total_k >= limit || p.max_seqlen_q < 0 || p.max_seqlen_q > p.total_q ||
      p.max_seqlen_k < 0 || p.max_seqlen_k > p.total_k)
    bad("token counts must be from 0 to " + std::to_string(limit - 1) + " (32-bit offsets), max_seqlen_q at most total_q and " +
        "max_seqlen_k at most total_k, not " + std::to_string(p.total_q) + " and " + std::to_string(p.total_k) + " tokens, max_seqlen_q " +
        std::to_string(p.max_seqlen_q) + ", max_seqlen_k " + std::to_string(p.max_seqlen_k));
  const bool windowed = p.window_left >= 0 || p.window_right >= 0;
  if (!windows && (windowed || p.top_left))
    bad("sliding windows and top-left aligned masks are not supported by this kernel (the sm_90a kernels, which "
        "attention_forward and attention_backward pick on sm_90a, have both)");
  if (p.window_left < -1 || p.window_right < -1)
    bad("a window bound is a number of keys from 0, or -1 for none, not " + std::to_string(std::min(p.window_left, p.window_right)));
  if (p.window_left >= p.total_k || p.window_right >= p.total_k)
    bad("a window of " + std::to_string(std::max(p.window_left, p.window_right)) + " keys is as long as all " + std::to_string(p.total_k) +
        " keys of the batch; give -1 for no bound");
  if (p.causal && p.window_right > 0)
    bad("a causal mask sees no key after the diagonal, but window_right is " + std::to_string(p.window_right) +
        "; give causal, or a window_right, not both");
}

/// Throws a cutejit::Error at the caller's line unless the host copies of cu_seqlens_q and
/// cu_seqlens_k describe the problem: batch + 1 offsets each, from 0, never decreasing, ending at
/// total_q and total_k, no query sequence longer than max_seqlen_q and, where it is given, no
/// key sequence longer than max_seqlen_k (the grids' extents: the tokens past them would be left
/// unwritten). On the device the kernels check only that each sequence lies inside the tensors
/// (`sequence`); call this where the offsets are on the host.
inline void check_seqlens(const FmhaProblem& p, std::span<const int32_t> cu_q, std::span<const int32_t> cu_k,
                          detail::Where w = detail::Where::current()) {
  auto check = [&](std::span<const int32_t> cu, const char* name, int64_t total, int64_t longest, const char* longest_name, const char* tokens) {
    auto bad = [&](const std::string& what) { detail::fail(std::string("fmha: ") + name + " " + what, w); };
    if (int64_t(cu.size()) != p.batch + 1)
      bad("has " + std::to_string(cu.size()) + " offsets; a batch of " + std::to_string(p.batch) + " needs " + std::to_string(p.batch + 1));
    if (cu[0] != 0) bad("starts at " + std::to_string(cu[0]) + ", not 0");
    for (size_t b = 0; b + 1 < cu.size(); ++b) {
      if (cu[b + 1] < cu[b])
        bad("decreases from " + std::to_string(cu[b]) + " to " + std::to_string(cu[b + 1]) + " at sequence " + std::to_string(b));
      if (longest >= 0 && cu[b + 1] - cu[b] > longest)
        bad("gives sequence " + std::to_string(b) + " " + std::to_string(cu[b + 1] - cu[b]) + " " + tokens + ", more than " + longest_name + " (" +
            std::to_string(longest) + ")");
    }
    if (cu.back() != total) bad("ends at " + std::to_string(cu.back()) + ", but the tensors hold " + std::to_string(total) + " tokens");
  };
  check(cu_q, "cu_seqlens_q", p.total_q, p.max_seqlen_q, "max_seqlen_q", "queries");
  check(cu_k, "cu_seqlens_k", p.total_k, p.max_seqlen_k > 0 ? p.max_seqlen_k : -1, "max_seqlen_k", "keys");
}

}  // namespace cutejit::kernels
