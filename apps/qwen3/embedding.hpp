// The embedding's row gather: out[t] = table[ids[t]], one CTA a token copying 16-byte vectors;
// an id outside the table traps with a message instead of reading past it.
#pragma once

#include <cutejit/cutejit.hpp>

namespace qwen3 {

inline cutejit::Kernel embedding_gather{"qwen3_embedding_gather", [](cutejit::Tensor<cutejit::bf16> table, cutejit::Tensor<int32_t> ids,
                                                                     cutejit::Tensor<cutejit::bf16> out) {
  using namespace cutejit;
  constexpr int vec = 8, threads = 128;
  block_shape(threads);
  Int token = block_idx().x;
  Int id = ids(token);
  device_assert(id >= 0 && id < table.shape(0), "qwen3: a token id is outside the vocabulary");
  for_(thread_idx().x, table.shape(1) / vec, threads, [&](Int c) {
    out.pointer_at({token, c * vec}).store_vector<vec>(table.pointer_at({id, c * vec}).load_vector<vec>());
  });
}};

}  // namespace qwen3
