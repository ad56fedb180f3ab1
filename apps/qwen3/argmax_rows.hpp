// A token chosen per row of logits on the device, so that a decode step returns a token a
// sequence instead of its logits (a batch of 32 has 9.7 MB of them). One CTA a row:
//   - argmax_rows: the largest logit, the first of equals, as qwen3::greedy takes it on the host;
//   - sample_rows: a draw from softmax(logits / temperature), as the largest of logit /
//     temperature + Gumbel noise (the Gumbel-max trick: that argmax is distributed as the
//     softmax), the noise from a hash of the step's seed, the row and the column, so that a
//     step replayed as a CUDA graph draws anew from the seed it is given. With a top-k or
//     top-p cut, first the prefix of the row it keeps, and the draw among those. A top-k of up
//     to 1024 (then top-p over it) gathers the top k into shared memory after two radix passes
//     (gathered_prefix); other cuts search thresholds bit by bit (a pass over the row a bit: 16
//     for the logit's key, up to 18 for a column among equals).
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

/// A logit's place in the order the cuts keep a prefix of (larger first): a 16-bit key that
/// orders bf16 values as numbers (-0 as +0), so that a threshold is found bit by bit.
inline cutejit::Value<uint32_t> order_key(const cutejit::BF16& v) {
  using namespace cutejit;
  Value<uint32_t> b = cast<uint32_t>(bitcast<uint16_t>(v));
  b = select(b == 0x8000u, Value<uint32_t>(0u), b);
  return select((b & 0x8000u) != 0u, (~b) & 0xffffu, b | 0x8000u);
}

/// The largest key c with total(c) >= target, total(c) the block's sum of term(v, i) over the
/// row's logits whose key is c or more (a total that shrinks as c grows; total(0) >= target).
/// One pass over the row a bit, from the top bit down.
template <class T, class Term>
cutejit::Value<uint32_t> largest_key(const cutejit::Tensor<cutejit::bf16>& logits, const cutejit::Int& row,
                                     const cutejit::Value<T>& target, Term&& term) {
  using namespace cutejit;
  Var<uint32_t> c = 0u;
  for_(0, 16, [&](Int bit) {
    Value<uint32_t> candidate = Value<uint32_t>(c) | (Value<uint32_t>(0x8000u) >> cast<uint32_t>(bit));
    Var<T> part = T(0);
    for_(thread_idx().x, logits.shape(1), threads, [&](Int i) {
      BF16 v = logits(row, i);
      if_(order_key(v) >= candidate, [&] { part = Value<T>(part) + term(v, i); });
    });
    if_(block_reduce(Value<T>(part), threads, Reduce::sum) >= target, [&] { c = candidate; });
  });
  return c;
}

/// The column of the `nth` (from 1) logit, by column, of those `tie(v, i)` holds (there are at
/// least `nth`): the largest x with fewer than `nth` of them before column x, bit by bit.
template <class Tie>
cutejit::Int nth_column(const cutejit::Tensor<cutejit::bf16>& logits, const cutejit::Int& row, const cutejit::Int& nth, Tie&& tie) {
  using namespace cutejit;
  Int n = logits.shape(1);
  Var<int32_t> x = 0;
  for_(0, 31, [&](Int bit) {
    Int candidate = Int(x) | (Int(1 << 30) >> bit);
    if_(candidate < n, [&] {  // the same for every thread: a pass, or none
      Var<int32_t> before = 0;
      for_(thread_idx().x, candidate, threads, [&](Int i) { if_(tie(BF16(logits(row, i)), i), [&] { before = Int(before) + 1; }); });
      if_(block_reduce(Int(before), threads, Reduce::sum) < nth, [&] { x = candidate; });
    });
  });
  return x;
}

/// The most logits gathered_prefix takes into shared memory: the top k and every logit tied
/// with the k-th.
constexpr int gathered_max = 1024;

/// kept_prefix's fast path, for a top-k cut of k up to gathered_max (then top-p over those):
/// the k-th logit's key in two 8-bit radix passes over the row (256-bin histograms in shared
/// memory, one a warp), then every logit at that key or above gathered into shared memory and
/// ranked there in the cut's order, and top-p a running sum over the first k. Three passes over
/// the row, where the bit-by-bit search takes about seventy. Sets `found` (with `key` and
/// `column`) unless more than gathered_max logits are at or above the k-th's key, which the
/// caller then cuts the slow way. Every thread of the block calls it.
inline void gathered_prefix(const cutejit::Tensor<cutejit::bf16>& logits, const cutejit::Int& row, const cutejit::Int& top_k,
                            const cutejit::F32& top_p, const cutejit::F32& inv_temperature, cutejit::Var<uint32_t>& key,
                            cutejit::Var<int32_t>& column, cutejit::Var<int32_t>& found) {
  using namespace cutejit;
  Int n = logits.shape(1), t = thread_idx().x;
  static_assert(threads == 256, "a thread a histogram bin");
  // A histogram of 256 bins for each warp (a row's logits fall in a few bins, so increments of
  // one shared histogram would queue behind each other), summed into warp 0's after the pass.
  constexpr int warps = threads / 32;
  Pointer<int32_t> bins = shared_array<int32_t>(warps * 256), slots = shared_array<int32_t>(4);
  Int warp = t / 32;
  // The digit d (of `digit(key)`, among the row's keys `in` takes) with fewer than `rank` keys
  // above it and `rank` or more at or above it; the count above, and the count at d.
  struct Digit {
    Int digit, above, at;
  };
  auto kth_digit = [&](const Int& rank, auto&& in, auto&& digit) {
    for (int w = 0; w < warps; ++w) bins[t + w * 256] = Int(0);
    sync_threads();
    for_(t, n, threads, [&](Int i) {
      Value<uint32_t> k = order_key(BF16(logits(row, i)));
      if_(in(k), [&] { atomic_add(bins[warp * 256 + cast<int32_t>(digit(k))], 1); });
    });
    sync_threads();
    Var<int32_t> total = 0;
    for (int w = 0; w < warps; ++w) total = Int(total) + Int(bins[t + w * 256]);
    bins[t] = Int(total);
    sync_threads();
    if_(t == 0, [&] {
      Var<int32_t> above = 0, d = -1;
      for_(0, 256, [&](Int j) {
        if_(Int(d) < 0, [&] {
          Int count = bins[255 - j];
          if_(Int(above) + count >= rank, [&] { d = 255 - j; }).else_([&] { above = Int(above) + count; });
        });
      });
      slots[0] = Int(d);
      slots[1] = Int(above);
      slots[2] = Int(bins[Int(d)]);
      slots[3] = Int(0);  // the gathering's counter; also, the four slots are read as one vector
    });
    sync_threads();
    Digit r{slots[0], slots[1], slots[2]};
    sync_threads();  // before the bins and slots are written again
    return r;
  };
  Digit high = kth_digit(top_k, [](const Value<uint32_t>&) { return Bool(true); }, [](const Value<uint32_t>& k) { return k >> 8u; });
  Value<uint32_t> high_bits = cast<uint32_t>(high.digit) << 8u;
  Digit low = kth_digit(top_k - high.above, [&](const Value<uint32_t>& k) { return (k & 0xff00u) == high_bits; },
                        [](const Value<uint32_t>& k) { return k & 0xffu; });
  Value<uint32_t> c = high_bits | cast<uint32_t>(low.digit);
  Int gathered = high.above + low.above + low.at;  // the keys above c, and those at it
  if_(gathered <= gathered_max, [&] {
    Pointer<uint32_t> keys = shared_array<uint32_t>(gathered_max);
    Pointer<int32_t> columns = shared_array<int32_t>(gathered_max), order = shared_array<int32_t>(gathered_max);
    Pointer<f32> values = shared_array<f32>(gathered_max);
    for_(t, n, threads, [&](Int i) {
      BF16 v = logits(row, i);
      Value<uint32_t> k = order_key(v);
      if_(k >= c, [&] {
        Int at = atomic_add(slots[3], 1);
        keys[at] = k;
        columns[at] = i;
        values[at] = cast<f32>(v);
      });
    });
    sync_threads();
    // Each one's place in the order (key descending, column ascending): the count before it.
    for_(t, gathered, threads, [&](Int p) {
      Value<uint32_t> kp = keys[p];
      Int cp = columns[p];
      Var<int32_t> before = 0;
      for_(0, gathered, [&](Int q) {
        Value<uint32_t> kq = keys[q];
        if_(kq > kp || (kq == kp && Int(columns[q]) < cp), [&] { before = Int(before) + 1; });
      });
      order[Int(before)] = p;
    });
    sync_threads();
    // The first k, or (top-p) the fewest of them whose probabilities reach top_p of theirs.
    if_(t == 0, [&] {
      Var<int32_t> last = top_k - 1;
      if_(top_p < 1.0f, [&] {
        F32 top = values[Int(order[0])];
        auto mass = [&](const Int& r) { return exp((F32(values[Int(order[r])]) - top) * inv_temperature); };
        Var<f32> sum = 0.0f;
        for_(0, top_k, [&](Int r) { sum = F32(sum) + mass(r); });
        F32 target = top_p * F32(sum);
        Var<f32> running = 0.0f;
        Var<int32_t> reached = -1;
        for_(0, top_k, [&](Int r) {
          if_(Int(reached) < 0, [&] {
            running = F32(running) + mass(r);
            if_(F32(running) >= target, [&] { reached = r; });
          });
        });
        if_(Int(reached) >= 0, [&] { last = Int(reached); });
      });
      slots[0] = cast<int32_t>(Value<uint32_t>(keys[Int(order[Int(last)])]));
      slots[1] = Int(columns[Int(order[Int(last)])]);
    });
    sync_threads();
    key = cast<uint32_t>(Int(slots[0]));
    column = Int(slots[1]);
    found = 1;
  });
}

/// The prefix of the row, in the order (logit descending, column ascending), that a draw may
/// take: Hugging Face's top-k (the first k; 0 keeps all), then its top-p over their softmax at
/// the temperature (the fewest whose probabilities sum to top_p of theirs; 1 keeps all), as
/// sampling.hpp's host `sample` takes it. A logit is kept when its key is above `key`, or equal
/// with its column at most `column`. Every thread of the block calls it; the passes over the
/// row run only for a cut that removes something.
struct KeptPrefix {
  cutejit::Value<uint32_t> key;
  cutejit::Int column;
  cutejit::Bool keeps(const cutejit::BF16& v, const cutejit::Int& i) const {
    cutejit::Value<uint32_t> k = order_key(v);
    return k > key || (k == key && i <= column);
  }
};
inline KeptPrefix kept_prefix(const cutejit::Tensor<cutejit::bf16>& logits, const cutejit::Int& row, const cutejit::Int& top_k,
                              const cutejit::F32& top_p, const cutejit::F32& inv_temperature) {
  using namespace cutejit;
  Int n = logits.shape(1);
  Var<uint32_t> key = 0u;
  Var<int32_t> column = n;  // with key 0: everything
  auto current = [&] { return KeptPrefix{Value<uint32_t>(key), Int(column)}; };
  Var<int32_t> found = 0;
  if_(top_k > 0 && top_k < n && top_k <= gathered_max,
      [&] { gathered_prefix(logits, row, top_k, top_p, inv_temperature, key, column, found); });
  // Otherwise, the slow way. The first k: the k-th logit's key, then which of the logits at
  // that key are in.
  if_(Int(found) == 0 && top_k > 0 && top_k < n, [&] {
    Value<uint32_t> c = largest_key<int32_t>(logits, row, top_k, [](const BF16&, const Int&) { return Int(1); });
    Var<int32_t> above = 0;
    for_(thread_idx().x, n, threads, [&](Int i) { if_(order_key(BF16(logits(row, i))) > c, [&] { above = Int(above) + 1; }); });
    Int ties = top_k - block_reduce(Int(above), threads, Reduce::sum);
    column = nth_column(logits, row, ties, [&](const BF16& v, const Int&) { return order_key(v) == c; });
    key = c;
  });
  // Of those, the fewest whose probabilities reach top_p of their sum.
  if_(Int(found) == 0 && top_p < 1.0f, [&] {
    KeptPrefix k = current();
    Var<f32> part = -INFINITY;
    for_(thread_idx().x, n, threads, [&](Int i) { part = max(F32(part), F32(cast<f32>(BF16(logits(row, i))))); });
    F32 top = block_reduce(F32(part), threads, Reduce::max);
    auto mass = [&](const BF16& v, const Int& i) { return select(k.keeps(v, i), exp((cast<f32>(v) - top) * inv_temperature), F32(0.0f)); };
    Var<f32> sum = 0.0f;
    for_(thread_idx().x, n, threads, [&](Int i) { sum = F32(sum) + mass(BF16(logits(row, i)), i); });
    F32 target = top_p * block_reduce(F32(sum), threads, Reduce::sum);
    Value<uint32_t> c = largest_key<f32>(logits, row, target, mass);
    // The mass above that key, and one probability at it: how many of the logits at the key it takes.
    Var<f32> above = 0.0f, at = 0.0f;
    Var<int32_t> kept_at = 0;
    for_(thread_idx().x, n, threads, [&](Int i) {
      BF16 v = logits(row, i);
      Value<uint32_t> kv = order_key(v);
      F32 m = mass(v, i);
      if_(kv > c, [&] { above = F32(above) + m; });
      if_(kv == c && k.keeps(v, i), [&] {
        at = m;
        kept_at = Int(kept_at) + 1;
      });
    });
    F32 mass_above = block_reduce(F32(above), threads, Reduce::sum), one = block_reduce(F32(at), threads, Reduce::max);
    Int kept = block_reduce(Int(kept_at), threads, Reduce::sum);
    // The fewest at the key whose mass, added to the mass above it, reaches the target: the
    // quotient rounded up (at least one: the key was chosen so that some are needed).
    F32 q = max((target - mass_above) / one, F32(0.0f));
    Int whole = cast<int32_t>(min(q, F32(2e9f)));
    Int needed = max(Int(1), whole + select(cast<f32>(whole) < q, Int(1), Int(0)));
    column = Int(select(c == k.key, k.column, n));  // all of those at the key that are in, or fewer:
    if_(needed < kept, [&] {
      column = nth_column(logits, row, needed, [&](const BF16& v, const Int& i) { return order_key(v) == c && k.keeps(v, i); });
    });
    key = c;
  });
  return current();
}

}  // namespace row_choice

inline cutejit::Kernel argmax_rows{"qwen3_argmax_rows", [](cutejit::Tensor<cutejit::bf16> logits, cutejit::Tensor<int32_t> out) {
  row_choice::choose(logits, out, [](const cutejit::F32& v, const cutejit::Int&, const cutejit::Int&) { return v; });
}};

/// The step's seed (a 32-bit pattern), 1 / temperature, and the cuts: top_k (0: none) and
/// top_p (1: none), each one value in device memory, so that a step replayed as a CUDA graph
/// takes the values written before it.
inline cutejit::Kernel sample_rows{
    "qwen3_sample_rows", [](cutejit::Tensor<cutejit::bf16> logits, cutejit::Tensor<int32_t> out, cutejit::Tensor<uint32_t> seed,
                            cutejit::Tensor<cutejit::f32> inv_temperature, cutejit::Tensor<int32_t> top_k,
                            cutejit::Tensor<cutejit::f32> top_p) {
      using namespace cutejit;
      Value<uint32_t> step = row_choice::mix(Value<uint32_t>(seed(0)));
      F32 scale = inv_temperature(0);
      row_choice::KeptPrefix kept = row_choice::kept_prefix(logits, block_idx().x, top_k(0), top_p(0), scale);
      row_choice::choose(logits, out, [&](const F32& v, const Int& row, const Int& i) {
        Value<uint32_t> h = row_choice::mix(cast<uint32_t>(i) ^ row_choice::mix(cast<uint32_t>(row) ^ step));
        // u uniform in (0, 1), 24 bits, never 0 or 1; then the Gumbel noise -log(-log(u)).
        F32 u = (cast<f32>(h >> 8u) + 0.5f) * (1.0f / 16777216.0f);
        return select(kept.keeps(BF16(logits(row, i)), i), v * scale - log(-log(u)), F32(-INFINITY));
      });
    }};

}  // namespace qwen3
