// Greedy choice on the device: each row's largest logit, the first of equals as qwen3::greedy
// takes on the host, so a decode step returns a token a sequence instead of its logits (a
// batch of 32 has 9.7 MB of them). A row holding a value that is not a finite number gives -1,
// which the model reports as the host's greedy does. One CTA a row.
#pragma once

#include <cmath>

#include <cutejit/cutejit.hpp>

namespace qwen3 {

inline cutejit::Kernel argmax_rows{"qwen3_argmax_rows", [](cutejit::Tensor<cutejit::bf16> logits, cutejit::Tensor<int32_t> out) {
  using namespace cutejit;
  constexpr int threads = 256;
  block_shape(threads);
  Int row = block_idx().x, n = logits.shape(1);
  // Each thread scans a strided slice in increasing order, so `>` keeps its first of equals;
  // the block then takes the largest value and, of the threads holding it, the lowest index.
  Var<f32> best = -INFINITY;
  Var<int32_t> at = n, bad = 0;
  for_(thread_idx().x, n, threads, [&](Int i) {
    F32 v = cast<f32>(BF16(logits(row, i)));
    if_(!(abs(v) <= 3.4028235e38f), [&] { bad = 1; });  // false for NaN and infinities alike
    if_(v > best, [&] {
      best = v;
      at = i;
    });
  });
  F32 top = block_reduce(F32(best), threads, Reduce::max);
  Int first = block_reduce(select(F32(best) == top, Int(at), n), threads, Reduce::min);
  Int any_bad = block_reduce(Int(bad), threads, Reduce::max);
  if_(thread_idx().x == 0, [&] { out(row) = select(any_bad > 0, Int(-1), first); });
}};

}  // namespace qwen3
