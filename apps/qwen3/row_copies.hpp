// The model's two row copies, a gather and a scatter, one CTA a row moving 16-byte vectors:
// the embedding and each sequence's last token before the LM head are gathers, writing new keys
// and values into the paged KV cache a scatter. An index outside its table traps with a message
// instead of reading or writing past it.
#pragma once

#include <cutejit/cutejit.hpp>

namespace qwen3 {

namespace row_copies {

constexpr int vec = 8, threads = 128;

/// The block's threads copy row `from` of `src` to row `to` of `dst`, 16 bytes a thread at a time.
inline void copy_row(const cutejit::Tensor<cutejit::bf16>& src, const cutejit::Int& from, const cutejit::Tensor<cutejit::bf16>& dst,
                     const cutejit::Int& to) {
  using namespace cutejit;
  for_(thread_idx().x, src.shape(1) / vec, threads, [&](Int c) {
    dst.pointer_at({to, c * vec}).store_vector<vec>(src.pointer_at({from, c * vec}).load_vector<vec>());
  });
}

}  // namespace row_copies

inline cutejit::Kernel gather_rows{"qwen3_gather_rows", [](cutejit::Tensor<cutejit::bf16> table, cutejit::Tensor<int32_t> rows,
                                                           cutejit::Tensor<cutejit::bf16> out) {
  using namespace cutejit;
  block_shape(row_copies::threads);
  Int i = block_idx().x;
  Int row = rows(i);
  device_assert(row >= 0 && row < table.shape(0), "qwen3: a row index (a token id) is outside the table");
  row_copies::copy_row(table, row, out, i);
}};

/// Writes each new token's keys and values into its cache slot: row i of k and v (kv_heads x
/// head_dim, after RoPE) goes to row slots[i] of the layer's cache, viewed as (pages x
/// page_size, kv_heads x head_dim). A slot outside the cache traps.
inline cutejit::Kernel store_kv{"qwen3_store_kv", [](cutejit::Tensor<cutejit::bf16> k, cutejit::Tensor<cutejit::bf16> v,
                                                     cutejit::Tensor<int32_t> slots, cutejit::Tensor<cutejit::bf16> k_cache,
                                                     cutejit::Tensor<cutejit::bf16> v_cache) {
  using namespace cutejit;
  block_shape(row_copies::threads);
  Int i = block_idx().x;
  Int slot = slots(i);
  device_assert(slot >= 0 && slot < k_cache.shape(0), "qwen3: a KV cache slot is outside the cache");
  row_copies::copy_row(k, i, k_cache, slot);
  row_copies::copy_row(v, i, v_cache, slot);
}};

}  // namespace qwen3
