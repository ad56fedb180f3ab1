// The model's row gather, one CTA a row moving 16-byte vectors: the embedding's rows of the
// tokens, and each sequence's last token before the LM head. An index outside its table traps
// with a message instead of reading past it. (New keys and values reach the KV cache from
// split_qkv.hpp.)
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

}  // namespace qwen3
