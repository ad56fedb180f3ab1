// Named paged-KV decode kernels of cutejit/kernels/attention/paged_decode.hpp, their launches on
// device buffers, and the inputs and float64 reference of their checks.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cutejit/kernels/attention/paged_decode.hpp"

#include "fmha_sm80.hpp"

namespace examples {
using namespace cutejit;

// The names of the kernel (cutejit/kernels/attention/paged_decode.hpp) where the launches below use them.
namespace decode {
using namespace cutejit::kernels::paged_decode;
}  // namespace decode

/// The decode kernels for one element type: the split kernel (writing the partial results, or
/// O itself), and the combine.
template <Element T, bool Partial>
inline auto fmha_decode_split =
    Kernel{std::string("fmha_decode_") + (std::is_same_v<T, bf16> ? "bf16" : "f16") + (Partial ? "_partial" : ""),
           [](Tensor<T> q, Tensor<T> k_cache, Tensor<T> v_cache, Tensor<int32_t> block_table, Tensor<int32_t> seqlens_k,
              decode::SplitOut<T, Partial> o, Tensor<f32> lse, F32 scale_log2, Constexpr<int> head_dim, Constexpr<int> group,
              Constexpr<int> q_len, Constexpr<int> kv_heads, Constexpr<int> page_size, Constexpr<int> causal, Constexpr<int> stages) {
             decode::Config c{.head_dim = head_dim, .group = group, .q_len = q_len, .kv_heads = kv_heads, .page_size = page_size,
                              .causal = causal != 0, .stages = stages};
             decode::split<T, Partial>(c, q, k_cache, v_cache, block_table, seqlens_k, o, lse, scale_log2);
           }};
template <Element T>
inline auto fmha_decode_combine = Kernel{std::string("fmha_decode_combine_") + (std::is_same_v<T, bf16> ? "bf16" : "f16"),
                                         [](Tensor<f32> o_part, Tensor<f32> lse_part, Tensor<T> o, Tensor<f32> lse, Constexpr<int> head_dim) {
                                           decode::combine<T>(head_dim, o_part, lse_part, o, lse);
                                         }};


/// A prepared decode: the split kernel, and with more than one split the combine and the
/// partial results they pass (owned here).
struct DecodeLaunch {
  PreparedLaunch split, combine;
  int64_t splits = 1, stages = 0;
  Buffer<float> o_part, lse_part;
  void operator()() const {
    split();
    if (splits > 1) combine();
  }
  void operator()(StreamHandle stream) const {
    split(stream);
    if (splits > 1) combine(stream);
  }
};

/// The launch of the decode on device buffers: q, o (batch * q_len, heads, head_dim), the
/// caches (pages, page_size, kv_heads, head_dim), block_table (batch, pages_per_sequence),
/// seqlens_k (batch), lse (heads, batch * q_len); all compact. The problem is checked first.
template <Element T>
  requires(std::is_same_v<T, bf16> || std::is_same_v<T, f16>)
DecodeLaunch fmha_decode_prepare(const Device& gpu, const DecodeProblem& p, const Buffer<T>& q, const Buffer<T>& k_cache,
                                 const Buffer<T>& v_cache, const Buffer<int32_t>& block_table, const Buffer<int32_t>& seqlens_k,
                                 const Buffer<T>& o, const Buffer<f32>& lse, detail::Where w = detail::Where::current()) {
  check_decode(p, w);
  const int64_t H = p.heads, D = p.head_dim, tokens = p.total_q();
  const bool fits = q.size() >= size_t(tokens * H * D) && o.size() >= size_t(tokens * H * D) && lse.size() >= size_t(H * tokens) &&
                    k_cache.size() >= size_t(p.pages * p.page_size * p.kv_heads * D) &&
                    v_cache.size() >= size_t(p.pages * p.page_size * p.kv_heads * D) &&
                    block_table.size() >= size_t(p.batch * p.pages_per_sequence) && seqlens_k.size() >= size_t(p.batch);
  if (!fits) detail::fail("fmha_decode: a buffer is smaller than the problem's tensors", w);
  const decode::Config c = decode::config_for<T>(p, gpu.max_shared_per_block(), gpu.name(), w);
  DecodeLaunch l;
  l.stages = c.stages;
  l.splits = p.splits > 0 ? p.splits : decode::choose_splits(p, gpu.multiprocessors());
  const float scale = (p.softmax_scale > 0 ? p.softmax_scale : 1.0f / std::sqrt(float(D))) * float(M_LOG2E);
  Launch split{.grid = {uint32_t(l.splits), uint32_t(p.kv_heads * c.tiles()), uint32_t(p.batch)},
               .block = uint32_t(decode::Config::threads()),
               .shared_bytes = c.shared_bytes<T>()};
  auto qv = q.view({tokens, H, D}), kv = k_cache.view({p.pages, p.page_size, p.kv_heads, D});
  auto vv = v_cache.view({p.pages, p.page_size, p.kv_heads, D});
  auto table = block_table.view({p.batch, p.pages_per_sequence}), lens = seqlens_k.view({p.batch});
  auto constants = [&](auto& kernel, auto out, auto out_lse) {
    return kernel.prepare(gpu, split, qv, kv, vv, table, lens, out, out_lse, scale, Constexpr<int>{c.head_dim}, Constexpr<int>{c.group},
                          Constexpr<int>{c.q_len}, Constexpr<int>{c.kv_heads}, Constexpr<int>{c.page_size}, Constexpr<int>{c.causal},
                          Constexpr<int>{c.stages});
  };
  if (l.splits == 1) {
    l.split = constants(fmha_decode_split<T, false>, o.view({1, tokens, H, D}), lse.view({1, H, tokens}));
    return l;
  }
  l.o_part = gpu.alloc<float>(size_t(l.splits * tokens * H * D));
  l.lse_part = gpu.alloc<float>(size_t(l.splits * H * tokens));
  l.split = constants(fmha_decode_split<T, true>, l.o_part.view({l.splits, tokens, H, D}), l.lse_part.view({l.splits, H, tokens}));
  l.combine = fmha_decode_combine<T>.prepare(gpu, Launch{.grid = {uint32_t(tokens), uint32_t(H)}, .block = 32},
                                             l.o_part.view({l.splits, tokens, H, D}), l.lse_part.view({l.splits, H, tokens}),
                                             o.view({tokens, H, D}), lse.view({H, tokens}), Constexpr<int>{c.head_dim});
  return l;
}

/// Host inputs of one decode problem: lengths, a shuffled page table, random Q and cache.
template <Element T>
struct DecodeInputs {
  DecodeProblem problem;
  std::vector<int32_t> seqlens_k, block_table;
  std::vector<T> q, k_cache, v_cache;
};

/// Sequences of `k_lens` keys in pages of `page_size`, their pages drawn at random from a cache
/// with a few more pages than they need.
template <Element T>
DecodeInputs<T> decode_inputs(const std::vector<int32_t>& k_lens, int64_t q_len, int64_t heads, int64_t kv_heads, int64_t head_dim,
                              int64_t page_size, unsigned seed) {
  DecodeInputs<T> in;
  DecodeProblem& p = in.problem;
  p = {.batch = int64_t(k_lens.size()), .heads = heads, .kv_heads = kv_heads, .head_dim = head_dim, .q_len = q_len, .page_size = page_size};
  for (int32_t len : k_lens) p.max_seqlen_k = std::max<int64_t>(p.max_seqlen_k, len);
  p.pages_per_sequence = std::max<int64_t>(1, (p.max_seqlen_k + page_size - 1) / page_size);
  p.pages = p.batch * p.pages_per_sequence + 3;
  std::vector<int32_t> order(size_t(p.pages));
  for (size_t i = 0; i < order.size(); ++i) order[i] = int32_t(i);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  in.seqlens_k = k_lens;
  in.block_table.assign(order.begin(), order.begin() + p.batch * p.pages_per_sequence);
  in.q = random_values<T>(size_t(p.total_q() * heads * head_dim), seed + 1);
  in.k_cache = random_values<T>(size_t(p.pages * page_size * kv_heads * head_dim), seed + 2);
  in.v_cache = random_values<T>(size_t(p.pages * page_size * kv_heads * head_dim), seed + 3);
  return in;
}

/// The same problem as the forward's, its K and V gathered from the pages into contiguous
/// sequences: the float64 reference is fmha_reference's.
template <Element T>
FmhaInputs<T> gathered(const DecodeInputs<T>& in) {
  const DecodeProblem& p = in.problem;
  FmhaInputs<T> f;
  f.problem = {.batch = p.batch, .heads = p.heads, .kv_heads = p.kv_heads, .head_dim = p.head_dim, .total_q = p.total_q(),
               .max_seqlen_q = p.q_len, .causal = p.causal, .softmax_scale = p.softmax_scale};
  f.cu_seqlens_q = {0};
  f.cu_seqlens_k = {0};
  f.q = in.q;
  const size_t row = size_t(p.kv_heads * p.head_dim);
  for (int64_t b = 0; b < p.batch; ++b) {
    f.cu_seqlens_q.push_back(int32_t((b + 1) * p.q_len));
    f.cu_seqlens_k.push_back(f.cu_seqlens_k.back() + in.seqlens_k[size_t(b)]);
    for (int64_t j = 0; j < in.seqlens_k[size_t(b)]; ++j) {
      const size_t at = (size_t(in.block_table[size_t(b * p.pages_per_sequence + j / p.page_size)]) * size_t(p.page_size) +
                         size_t(j % p.page_size)) * row;
      f.k.insert(f.k.end(), in.k_cache.begin() + at, in.k_cache.begin() + at + row);
      f.v.insert(f.v.end(), in.v_cache.begin() + at, in.v_cache.begin() + at + row);
    }
  }
  f.problem.total_k = f.cu_seqlens_k.back();
  return f;
}

/// Runs the decode on `in` with poisoned outputs; the error against the float64 reference.
template <Element T>
double decode_check(const Device& gpu, const DecodeInputs<T>& in) {
  const DecodeProblem& p = in.problem;
  check_block_table(p, in.seqlens_k, in.block_table);
  auto q = gpu.upload(in.q), k = gpu.upload(in.k_cache), v = gpu.upload(in.v_cache);
  auto table = gpu.upload(in.block_table), lens = gpu.upload(in.seqlens_k);
  auto o = gpu.upload(std::vector<T>(size_t(p.total_q() * p.heads * p.head_dim), T(NAN)));
  auto lse = gpu.upload(std::vector<float>(size_t(p.heads * p.total_q()), NAN));
  fmha_decode_prepare(gpu, p, q, k, v, table, lens, o, lse)();
  gpu.synchronize();
  std::vector<double> o_ref, lse_ref;
  fmha_reference(gathered(in), o_ref, lse_ref);
  std::vector<float> out;
  for (T x : o.to_host()) out.push_back(float(x));
  return fmha_error(out, o_ref, lse.to_host(), lse_ref);
}

/// Cross-compiles the split kernel (partial results) and the combine for target `t`.
template <Element T>
std::pair<CompiledKernel, CompiledKernel> decode_compile(const Target& t, const decode::Config& c) {
  const int64_t D = c.head_dim, kv_heads = c.kv_heads, H = kv_heads * c.group, tokens = 64 * c.q_len;
  auto q = DeviceTensor<T>::for_compile({tokens, H, D}), cache = DeviceTensor<T>::for_compile({4096, c.page_size, kv_heads, D});
  auto table = DeviceTensor<int32_t>::for_compile({64, 256}), lens = DeviceTensor<int32_t>::for_compile({64});
  auto o_part = DeviceTensor<f32>::for_compile({8, tokens, H, D}), lse_part = DeviceTensor<f32>::for_compile({8, H, tokens});
  CompiledKernel split = fmha_decode_split<T, true>.compile(t, q, cache, cache, table, lens, o_part, lse_part, 1.0f,
                                                            Constexpr<int>{c.head_dim}, Constexpr<int>{c.group},
                                                            Constexpr<int>{c.q_len}, Constexpr<int>{c.kv_heads},
                                                            Constexpr<int>{c.page_size}, Constexpr<int>{c.causal}, Constexpr<int>{c.stages});
  CompiledKernel combine = fmha_decode_combine<T>.compile(t, o_part, lse_part, DeviceTensor<T>::for_compile({tokens, H, D}), DeviceTensor<f32>::for_compile({H, tokens}),
                                                          Constexpr<int>{c.head_dim});
  return {std::move(split), std::move(combine)};
}

/// Six sequences of ragged lengths (one key, one shorter than a block, one a page and a bit,
/// longer ones), two queries each (causal), BF16, head dim 128, GQA 8:1, pages of 16.
inline Example fmha_decode_example() {
  return {"fmha_decode_bf16_partial",
          [](const Device& gpu) {
            return decode_check(gpu, decode_inputs<bf16>({1, 9, 17, 300, 1000, 2049}, 2, 16, 2, 128, 16, 41));
          },
          [](const Target& t) { return decode_compile<bf16>(t, {.head_dim = 128, .group = 8, .q_len = 2, .kv_heads = 2, .stages = 2}).first; },
          1e-2,
          {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_120a"}};
}

}  // namespace examples
