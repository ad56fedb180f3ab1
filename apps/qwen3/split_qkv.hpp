// After the fused QKV projection: each token's row of qkv (the query heads, then the key heads,
// then the value heads, head_dim values each) split into compact q, k and v, the query and key
// heads RMS-normed with their weights (Qwen3's q_norm and k_norm, rows 0 and 1 of qk_norm) and
// rotated by RoPE at the token's position, with kernels::rmsnorm's and kernels::rope's roundings:
// the normed value rounded to BF16, times the weight rounded again, then the rotation in f32
// rounded once. With `store`, the key and value heads also go to row slots[token] of the
// layer's KV cache (viewed as (pages x page_size, kv_heads x head_dim)): no separate launch
// copies them there. A slot outside the cache traps. One CTA a (token, head), tokens along the
// grid's x (a prefill may have more than the 65535 blocks y allows); head_dim / 2 threads, each
// a pair (i, i + head_dim / 2).
#pragma once

#include <cutejit/cutejit.hpp>

namespace qwen3 {

inline cutejit::Kernel split_qkv{
    "qwen3_split_qkv",
    [](cutejit::Tensor<cutejit::bf16> qkv, cutejit::Tensor<cutejit::bf16> qk_norm, cutejit::Tensor<int32_t> positions,
       cutejit::Tensor<cutejit::f32> inv_freq, cutejit::Tensor<cutejit::bf16> q, cutejit::Tensor<cutejit::bf16> k,
       cutejit::Tensor<cutejit::bf16> v, cutejit::Tensor<int32_t> slots, cutejit::Tensor<cutejit::bf16> k_cache,
       cutejit::Tensor<cutejit::bf16> v_cache, cutejit::Value<cutejit::f32> eps, cutejit::Constexpr<int> head_dim,
       cutejit::Constexpr<int> store) {
      using namespace cutejit;
      const int half = head_dim / 2;
      block_shape(half);
      Int token = block_idx().x, head = block_idx().y, i = thread_idx().x;
      Int heads = q.shape(1), kv_heads = k.shape(1);
      Int col = head * int(head_dim) + i;
      BF16 a = qkv(token, col), b = qkv(token, col + half);
      Int slot = 0;
      if (store) {
        slot = slots(token);
        device_assert(slot >= 0 && slot < k_cache.shape(0), "qwen3: a KV cache slot is outside the cache");
      }
      // The value heads are copied as they are.
      Int value_head = head - heads - kv_heads;
      if_(value_head >= 0, [&] {
        v(token, value_head, i) = a;
        v(token, value_head, i + half) = b;
        if (store) {
          v_cache(slot, value_head * int(head_dim) + i) = a;
          v_cache(slot, value_head * int(head_dim) + i + half) = b;
        }
      });
      if_(value_head < 0, [&] {
        F32 fa = cast<f32>(a), fb = cast<f32>(b);
        F32 scale = rsqrt(block_reduce(fa * fa + fb * fb, half) / float(int(head_dim)) + eps);
        Int which = min(head / heads, Int(1));  // 0: a query head, 1: a key head
        auto normed = [&](const F32& x, const Int& at) {
          return cast<f32>(cast<bf16>(cast<f32>(cast<bf16>(x * scale)) * cast<f32>(BF16(qk_norm(which, at)))));
        };
        F32 na = normed(fa, i), nb = normed(fb, i + half);
        F32 angle = cast<f32>(Int(positions(token))) * F32(inv_freq(i));
        F32 c = cos(angle), s = sin(angle);
        BF16 ra = cast<bf16>(na * c - nb * s), rb = cast<bf16>(nb * c + na * s);
        if_(which == 0, [&] {
          q(token, head, i) = ra;
          q(token, head, i + half) = rb;
        });
        if_(which == 1, [&] {
          k(token, head - heads, i) = ra;
          k(token, head - heads, i + half) = rb;
          if (store) {
            k_cache(slot, (head - heads) * int(head_dim) + i) = ra;
            k_cache(slot, (head - heads) * int(head_dim) + i + half) = rb;
          }
        });
      });
    }};

}  // namespace qwen3
