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

/// Throws a cutejit::Error at the caller's line unless the decode supports `p`: head dim 64,
/// 128 or 256, query heads a multiple of the key/value heads (at most 16 per key/value head
/// times queries per sequence: 64 rows), 1 to 16 queries per sequence, page sizes that are
/// multiples of 16, and sizes whose offsets fit 32 bits.
inline void check_decode(const DecodeProblem& p, detail::Where w = detail::Where::current()) {
  auto bad = [&](const std::string& what) { detail::fail("fmha_decode: " + what, w); };
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    bad("head dims 64, 128 and 256 are supported, not " + std::to_string(p.head_dim));
  if (p.batch < 1 || p.heads < 1 || p.kv_heads < 1 || p.heads % p.kv_heads != 0)
    bad("needs a batch of at least 1 and query heads a multiple of the key/value heads, not batch " + std::to_string(p.batch) + ", " +
        std::to_string(p.heads) + " query and " + std::to_string(p.kv_heads) + " key/value heads");
  if (p.q_len < 1 || p.q_len > 16) bad("takes 1 to 16 queries per sequence, not " + std::to_string(p.q_len));
  if (p.group() * p.q_len > 64)
    bad(std::to_string(p.group()) + " query heads per key/value head times " + std::to_string(p.q_len) +
        " queries make " + std::to_string(p.group() * p.q_len) + " rows per key/value head; at most 64 are supported");
  if (p.page_size < 16 || p.page_size % 16 != 0)
    bad("page sizes are multiples of 16 tokens (16 keys are read from one page at a time), not " + std::to_string(p.page_size));
  if (p.pages < 1 || p.pages_per_sequence < 1)
    bad("needs a cache of at least one page and a block table of at least one page per sequence, not " + std::to_string(p.pages) +
        " pages and " + std::to_string(p.pages_per_sequence) + " per sequence");
  if (p.max_seqlen_k < 0 || p.max_seqlen_k > p.pages_per_sequence * p.page_size)
    bad("max_seqlen_k is " + std::to_string(p.max_seqlen_k) + ", but a sequence holds at most " +
        std::to_string(p.pages_per_sequence * p.page_size) + " keys (" + std::to_string(p.pages_per_sequence) + " pages of " +
        std::to_string(p.page_size) + ")");
  const int64_t limit = int64_t(1) << 31;
  if (p.pages * p.page_size * p.kv_heads * p.head_dim >= limit || p.total_q() * p.heads * p.head_dim * std::max<int64_t>(p.splits, 1) >= limit)
    bad("the cache or the queries exceed 2^31 elements (32-bit offsets)");
  if (p.splits < 0 || p.splits > 256) bad("splits is from 1 to 256, or 0 to choose, not " + std::to_string(p.splits));
  if (p.stages != 0 && (p.stages < 2 || p.stages > 4)) bad("stages is from 2 to 4, or 0 to choose, not " + std::to_string(p.stages));
}

/// Throws a cutejit::Error at the caller's line unless the host copies of seqlens_k and
/// block_table describe the problem: every length from 0 to max_seqlen_k, and every page a
/// sequence's keys use inside the cache. The kernel cannot check them on the device; call it
/// where they are on the host.
inline void check_block_table(const DecodeProblem& p, std::span<const int32_t> seqlens_k, std::span<const int32_t> block_table,
                              detail::Where w = detail::Where::current()) {
  auto bad = [&](const std::string& what) { detail::fail("fmha_decode: " + what, w); };
  if (int64_t(seqlens_k.size()) != p.batch)
    bad("seqlens_k has " + std::to_string(seqlens_k.size()) + " lengths for a batch of " + std::to_string(p.batch));
  if (int64_t(block_table.size()) != p.batch * p.pages_per_sequence)
    bad("block_table has " + std::to_string(block_table.size()) + " entries; " + std::to_string(p.batch) + " sequences of " +
        std::to_string(p.pages_per_sequence) + " pages need " + std::to_string(p.batch * p.pages_per_sequence));
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t len = seqlens_k[size_t(b)];
    if (len < 0 || len > p.max_seqlen_k)
      bad("sequence " + std::to_string(b) + " has " + std::to_string(len) + " keys, outside 0 to max_seqlen_k (" +
          std::to_string(p.max_seqlen_k) + ")");
    for (int64_t i = 0; i < (len + p.page_size - 1) / p.page_size; ++i) {
      const int32_t page = block_table[size_t(b * p.pages_per_sequence + i)];
      if (page < 0 || page >= p.pages)
        bad("block_table[" + std::to_string(b) + "][" + std::to_string(i) + "] is page " + std::to_string(page) +
            ", outside the cache's " + std::to_string(p.pages) + " pages");
    }
  }
}

namespace decode {
/// The split count: about one CTA per multiprocessor in all (fewer splits of longer ranges
/// measured faster than two CTAs per multiprocessor of half the length), each split at least
/// 256 keys long.
inline int64_t choose_splits(const DecodeProblem& p, int multiprocessors) {
  const int64_t ctas = p.batch * p.kv_heads * ((p.group() * p.q_len + Config::rows - 1) / Config::rows);
  return std::clamp<int64_t>(std::min<int64_t>(multiprocessors / ctas, (p.max_seqlen_k + 255) / 256), 1, 64);
}
/// The ring's depth: the deepest (4, 3 or 2 stages) that lets two CTAs share a multiprocessor
/// (3 at head dim 128 on an H200, which measured 2-8% faster than 4), else the deepest that
/// fits one; or the problem's.
template <Element T>
Config config_for(const DecodeProblem& p, const Device& gpu, detail::Where w) {
  Config c{.head_dim = int(p.head_dim), .group = int(p.group()), .q_len = int(p.q_len), .kv_heads = int(p.kv_heads),
           .page_size = int(p.page_size), .causal = p.causal};
  const auto limit = uint32_t(gpu.max_shared_per_block());
  if (p.stages > 0) {
    c.stages = int(p.stages);
    if (c.shared_bytes<T>() > limit)
      detail::fail("fmha_decode: " + std::to_string(p.stages) + " stages need " + std::to_string(c.shared_bytes<T>()) +
                       " bytes of shared memory, more than a block of " + gpu.name() + " has (" + std::to_string(limit) + ")",
                   w);
    return c;
  }
  for (uint32_t ctas : {2u, 1u})
    for (c.stages = 4; c.stages >= 2; --c.stages)
      if (ctas * c.shared_bytes<T>() <= limit) return c;
  c.stages = 2;
  detail::fail("fmha_decode: head dim " + std::to_string(p.head_dim) + " needs " + std::to_string(c.shared_bytes<T>()) +
                   " bytes of shared memory per block, more than " + gpu.name() + " has (" + std::to_string(limit) + ")",
               w);
}
}  // namespace decode

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
  const decode::Config c = decode::config_for<T>(p, gpu, w);
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
