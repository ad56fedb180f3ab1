// After the fused QKV projection: each token's row of qkv (the query heads, then the key heads,
// then the value heads, head_dim values each) split into compact q, k and v, the query and key
// heads RMS-normed with their weights (Qwen3's q_norm and k_norm, rows 0 and 1 of qk_norm) and
// rotated by RoPE at the token's position, with kernels::rmsnorm's and kernels::rope's roundings:
// the normed value rounded to BF16, times the weight rounded again, then the rotation in f32
// rounded once. With `store`, the key and value heads also go to row slots[token] of the
// layer's KV cache (viewed as (pages x page_size, kv_heads x head_dim)): no separate launch
// copies them there. A slot outside the cache traps.
//
// A head is a few lanes of one warp (`split_qkv_shape`): each lane holds a vector of up to 16
// bytes from each half of the head, the pairs (i, i + head_dim / 2) that RoPE rotates together,
// and the head's sum of squares is a shuffle reduction over its lanes, with no shared memory
// and no barrier. Tokens go along the grid's x (a prefill may have more than the 65535 blocks
// y allows), groups of heads along y. Traced `dependent` (a decode step's programmatic dependent
// launch, sm_90 and newer), it may be scheduled once the projection before it has no block left
// running, and waits for its completion before reading anything.
#pragma once

#include <array>

#include <cutejit/cutejit.hpp>

namespace qwen3 {

/// How split_qkv spreads a token's heads over a CTA's threads.
struct SplitQkvShape {
  int vector;         // elements a lane holds from each half of a head: 8, 4, 2 or 1
  int lanes;          // lanes a head takes (a power of two, at most 32)
  int heads_per_cta;  // heads a CTA of `threads` takes
  static constexpr int threads = 128;
};

/// The shape for heads of `head_dim` values (even, at most 512: a head's half in 32 lanes of
/// 8 values).
constexpr SplitQkvShape split_qkv_shape(int head_dim) {
  const int half = head_dim / 2;
  int vector = 8;
  while (half % vector) vector /= 2;
  int lanes = 1;
  while (lanes * vector < half) lanes *= 2;
  return {vector, lanes, SplitQkvShape::threads / lanes};
}

/// The launch for `tokens` tokens of `heads` heads in all (query, key and value), with
/// programmatic dependent launch where the kernel is traced `dependent`.
inline cutejit::Launch split_qkv_launch(int64_t tokens, int64_t heads, int head_dim, cutejit::StreamHandle stream, bool dependent = false) {
  const int per_cta = split_qkv_shape(head_dim).heads_per_cta;
  return cutejit::Launch{.grid = {uint32_t(tokens), uint32_t((heads + per_cta - 1) / per_cta)},
                         .block = uint32_t(SplitQkvShape::threads),
                         .stream = stream,
                         .programmatic_dependent_launch = dependent};
}

inline cutejit::Kernel split_qkv{
    "qwen3_split_qkv",
    [](cutejit::Tensor<cutejit::bf16> qkv, cutejit::Tensor<cutejit::bf16> qk_norm, cutejit::Tensor<int32_t> positions,
       cutejit::Tensor<cutejit::f32> inv_freq, cutejit::Tensor<cutejit::bf16> q, cutejit::Tensor<cutejit::bf16> k,
       cutejit::Tensor<cutejit::bf16> v, cutejit::Tensor<int32_t> slots, cutejit::Tensor<cutejit::bf16> k_cache,
       cutejit::Tensor<cutejit::bf16> v_cache, cutejit::Value<cutejit::f32> eps, cutejit::Constexpr<int> head_dim,
       cutejit::Constexpr<int> store, cutejit::Constexpr<bool> dependent) {
      using namespace cutejit;
      const SplitQkvShape shape = split_qkv_shape(head_dim);
      if (head_dim < 2 || head_dim % 2 || shape.lanes > 32)
        throw Error("error: qwen3_split_qkv takes an even head_dim up to 512, not " + std::to_string(int(head_dim)));
      const int half = head_dim / 2;
      block_shape(SplitQkvShape::threads);
      if (dependent) griddepcontrol_wait();
      Int token = block_idx().x, t = thread_idx().x;
      Int heads = q.shape(1), kv_heads = k.shape(1), all_heads = heads + 2 * kv_heads;
      // This lane's head, and its values i ... i + vector - 1 and the same half a head further
      // on. A lane past the last head or past the half (when the half is not a power of two of
      // vectors) reads its neighbour's values, adds nothing to the sums and stores nothing.
      Int head = block_idx().y * shape.heads_per_cta + t / shape.lanes;
      Int lane_i = (t % shape.lanes) * shape.vector;
      Bool mine = head < all_heads && lane_i < half;
      // (i is lane_i with the idle lanes folded back into the half: a multiple of the vector, so
      // the vector accesses are provably aligned.)
      Int h = min(head, all_heads - 1), i = ((t % shape.lanes) % (half / shape.vector)) * shape.vector;
      Int slot = 0;
      if (store) {
        slot = slots(token);
        device_assert(slot >= 0 && slot < k_cache.shape(0), "qwen3: a KV cache slot is outside the cache");
      }
      Int col = h * int(head_dim) + i;
      auto work = [&]<int N>() {
        using Values = std::array<BF16, N>;
        const Values a = qkv.pointer_at({token, col}).template load_vector<N>();
        const Values b = qkv.pointer_at({token, col + half}).template load_vector<N>();
        // Stores x at element i of a head and y half a head further on; `at(e)` points at the
        // head's element e.
        auto put = [&](auto&& at, const Values& x, const Values& y) {
          at(i).template store_vector<N>(x);
          at(i + half).template store_vector<N>(y);
        };
        // The value heads are copied as they are.
        Int value_head = h - heads - kv_heads;
        if_(mine && value_head >= 0, [&] {
          put([&](const Int& e) { return v.pointer_at({token, value_head, e}); }, a, b);
          if (store) put([&](const Int& e) { return v_cache.pointer_at({slot, value_head * int(head_dim) + e}); }, a, b);
        });
        // The query and key heads: the RMS over the head's lanes (every lane of the warp takes
        // part in the shuffles, whichever its head), the norm's weight, the rotation.
        F32 squares = 0.0f;
        for (int j = 0; j < N; ++j) {
          F32 fa = cast<f32>(a[size_t(j)]), fb = cast<f32>(b[size_t(j)]);
          squares = squares + fa * fa + fb * fb;
        }
        squares = select(Bool(mine), squares, F32(0.0f));
        F32 scale = rsqrt(warp_reduce(squares, Reduce::sum, shape.lanes) / float(int(head_dim)) + eps);
        Int which = min(h / heads, Int(1));  // 0: a query head, 1: a key head
        F32 position = cast<f32>(Int(positions(token)));
        Values ra, rb;
        for (int j = 0; j < N; ++j) {
          auto normed = [&](const BF16& x, const Int& at) {
            return cast<f32>(cast<bf16>(cast<f32>(cast<bf16>(cast<f32>(x) * scale)) * cast<f32>(BF16(qk_norm(which, at)))));
          };
          F32 na = normed(a[size_t(j)], i + j), nb = normed(b[size_t(j)], i + j + half);
          F32 angle = position * F32(inv_freq(i + j));
          F32 c = cos(angle), s = sin(angle);
          ra[size_t(j)] = cast<bf16>(na * c - nb * s);
          rb[size_t(j)] = cast<bf16>(nb * c + na * s);
        }
        if_(mine && h < heads, [&] { put([&](const Int& e) { return q.pointer_at({token, h, e}); }, ra, rb); });
        if_(mine && h >= heads && value_head < 0, [&] {
          put([&](const Int& e) { return k.pointer_at({token, h - heads, e}); }, ra, rb);
          if (store) put([&](const Int& e) { return k_cache.pointer_at({slot, (h - heads) * int(head_dim) + e}); }, ra, rb);
        });
      };
      switch (shape.vector) {
        case 8: work.template operator()<8>(); break;
        case 4: work.template operator()<4>(); break;
        case 2: work.template operator()<2>(); break;
        default: work.template operator()<1>(); break;
      }
    }};

}  // namespace qwen3
