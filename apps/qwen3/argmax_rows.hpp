// A token chosen per row of logits on the device, so that a decode step returns a token a
// sequence instead of its logits (a batch of 32 has 9.7 MB of them). One CTA a row:
//   - argmax_rows: the largest logit, the first of equals, as qwen3::greedy takes it on the host;
//   - sample_rows: a draw from softmax(logits / temperature), as the largest of logit /
//     temperature + Gumbel noise (the Gumbel-max trick: that argmax is distributed as the
//     softmax), the noise from a hash of the step's seed, the row and the column, so that a
//     step replayed as a CUDA graph draws anew from the seed it is given.
// A row holding a value that is not a finite number gives -1, which the model reports as the
// host's greedy does.
#pragma once

#include <cmath>

#include <cutejit/cutejit.hpp>

namespace qwen3 {

namespace row_choice {

constexpr int threads = 256;

/// Writes out(row) = the column of the row's largest key(logit, column), the first of equals,
/// or -1 when a logit is not a finite number.
template <class Key>
void choose(const cutejit::Tensor<cutejit::bf16>& logits, const cutejit::Tensor<int32_t>& out, Key&& key) {
  using namespace cutejit;
  block_shape(threads);
  Int row = block_idx().x, n = logits.shape(1);
  // Each thread scans a strided slice in increasing order, so `>` keeps its first of equals;
  // the block then takes the largest key and, of the threads holding it, the lowest index.
  Var<f32> best = -INFINITY;
  Var<int32_t> at = n, bad = 0;
  for_(thread_idx().x, n, threads, [&](Int i) {
    F32 v = cast<f32>(BF16(logits(row, i)));
    if_(!(abs(v) <= 3.4028235e38f), [&] { bad = 1; });  // false for NaN and infinities alike
    F32 k = key(v, row, i);
    if_(k > best, [&] {
      best = k;
      at = i;
    });
  });
  F32 top = block_reduce(F32(best), threads, Reduce::max);
  Int first = block_reduce(select(F32(best) == top, Int(at), n), threads, Reduce::min);
  Int any_bad = block_reduce(Int(bad), threads, Reduce::max);
  if_(thread_idx().x == 0, [&] { out(row) = select(any_bad > 0, Int(-1), first); });
}

/// A 32-bit integer hash (Wellons' lowbias32): each input bit moves about half the output bits.
inline cutejit::Value<uint32_t> mix(cutejit::Value<uint32_t> x) {
  x = x ^ (x >> 16u);
  x = x * 0x7feb352du;
  x = x ^ (x >> 15u);
  x = x * 0x846ca68bu;
  return x ^ (x >> 16u);
}

}  // namespace row_choice

inline cutejit::Kernel argmax_rows{"qwen3_argmax_rows", [](cutejit::Tensor<cutejit::bf16> logits, cutejit::Tensor<int32_t> out) {
  row_choice::choose(logits, out, [](const cutejit::F32& v, const cutejit::Int&, const cutejit::Int&) { return v; });
}};

/// `sampling` holds the step's seed (a 32-bit pattern) and 1 / temperature (an f32's bits).
inline cutejit::Kernel sample_rows{
    "qwen3_sample_rows", [](cutejit::Tensor<cutejit::bf16> logits, cutejit::Tensor<int32_t> out, cutejit::Tensor<uint32_t> seed,
                            cutejit::Tensor<cutejit::f32> inv_temperature) {
      using namespace cutejit;
      Value<uint32_t> step = row_choice::mix(Value<uint32_t>(seed(0)));
      F32 scale = inv_temperature(0);
      row_choice::choose(logits, out, [&](const F32& v, const Int& row, const Int& i) {
        Value<uint32_t> h = row_choice::mix(cast<uint32_t>(i) ^ row_choice::mix(cast<uint32_t>(row) ^ step));
        // u uniform in (0, 1), 24 bits, never 0 or 1; then the Gumbel noise -log(-log(u)).
        F32 u = (cast<f32>(h >> 8u) + 0.5f) * (1.0f / 16777216.0f);
        return v * scale - log(-log(u));
      });
    }};

}  // namespace qwen3
