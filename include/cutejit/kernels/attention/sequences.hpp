// The sequences of an attention batch as the kernels see them on the device: where each starts
// and how long it is (checked against the tensors), and the key blocks a query block sees.
#pragma once

#include <string_view>

#include "cutejit/cutejit.hpp"

namespace cutejit::kernels {

/// Sequence b of a batch: its first token and its length, from cu_seqlens. The host checks
/// offsets it has (check_seqlens); on the device, a sequence that starts below 0, ends before it
/// starts or ends past the `tokens` its tensors hold traps with `message` and the kernel's file
/// and line, before any read or write outside them.
struct Sequence {
  Int start, len;
};
inline Sequence sequence(const Tensor<int32_t>& cu_seqlens, const Int& b, const Int& tokens, std::string_view message) {
  Int start = cu_seqlens(b), end = cu_seqlens(b + 1);
  device_assert(start >= 0 && start <= end && end <= tokens, message);
  return {start, end - start};
}
inline constexpr const char* bad_cu_seqlens_q =
    "fmha: cu_seqlens_q has a sequence that starts below 0, ends before it starts, or ends past the tensors' tokens";
inline constexpr const char* bad_cu_seqlens_k =
    "fmha: cu_seqlens_k has a sequence that starts below 0, ends before it starts, or ends past the tensors' tokens";

/// The blocks of `bn` keys that query block `m_block` of `bm` queries sees (bottom-right
/// aligned): all of the sequence's, or (causal) those up to its last query's diagonal.
inline Int key_blocks_seen(const Int& m_block, int bm, int bn, const Int& q_len, const Int& k_len, bool causal) {
  Int diagonal = k_len - q_len;  // query i sees keys j <= i + diagonal
  Int n_blocks = (k_len + (bn - 1)) / bn;
  if (causal) n_blocks = min(n_blocks, max(Int(0), (m_block + 1) * bm + diagonal + (bn - 1)) / bn);
  return n_blocks;
}

}  // namespace cutejit::kernels
