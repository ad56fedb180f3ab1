// Attention decode against a paged KV cache (sm_80 and newer, on mma.sync), as FlashDecoding
// splits it: for each sequence b, its q_len newest queries (1 for decode, a few for speculative
// decoding) attend to its seqlens_k[b] cached keys,
//     O = softmax(scale * Q K^T) V, and the log-sum-exp of each row.
//   - The cache is vLLM's and FlashInfer's: K and V are (pages, page_size, kv_heads, head_dim)
//     tensors, and row b of block_table (batch, pages per sequence) names the pages of
//     sequence b in order, key j lying in page block_table[b][j / page_size] at slot
//     j % page_size. Page sizes are multiples of 16, so that 16 consecutive keys lie in one page.
//   - GQA packing: the `group` query heads that share a key/value head, times the q_len
//     queries, are the rows of one tile (row r is query r / group of head r % group of the
//     group), so K and V are read once for all of them. More than 16 rows take several tiles.
//   - Split-KV: each sequence's keys are cut into `splits` ranges of whole 16-key blocks, one
//     CTA each (grid: splits x kv_heads * tiles x batch), so that a few long sequences still
//     fill the GPU. Each CTA writes its rows' O (normalised, f32) and log-sum-exp, and a combine
//     kernel weighs the splits by their log-sum-exps. With one split the CTA writes O directly.
//   - Inside a CTA, each of the four warps is a worker of its own: it takes every fourth key
//     block of the range, streams its K and V through its own ring of `stages` buffers with
//     cp.async (only a warp barrier between them), and runs S = Q K^T (16 x 16) and O += P V
//     on one mma.sync atom, the online softmax in registers (OnlineSoftmax, exp2 with the scale
//     folded in) and P straight from the accumulator (accumulator_as_A). At the end the four
//     warps' results are merged through shared memory as the splits are.
//   - Causal (the default): query i of q_len sees the keys up to seqlens_k - q_len + i, as its
//     own position in the sequence. Keys past the sequence are zero-filled and masked.
//   - Traced `dependent` (programmatic dependent launch, sm_90 and newer), both kernels may be
//     scheduled once the kernel before them has no block left running, and wait for its
//     completion before reading anything.
// Built for sm_90a it runs on Hopper; built for sm_80, sm_86, sm_89, sm_100a and sm_120a it
// is compile-verified.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <bit>
#include <cmath>
#include <type_traits>

#include "cutejit/core/visibility.hpp"
#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/attention/online_softmax.hpp"
#include "cutejit/kernels/attention/sm80.hpp"

namespace cutejit::kernels {

/// One decode problem: `batch` sequences, each with q_len new queries and seqlens_k[b] keys
/// in a paged cache.
struct DecodeProblem {
  int64_t batch = 1, heads = 1, kv_heads = 1, head_dim = 128;
  int64_t q_len = 1;                     ///< queries per sequence (1: decode)
  int64_t pages = 0, page_size = 16;     ///< the cache: (pages, page_size, kv_heads, head_dim)
  int64_t pages_per_sequence = 0;        ///< block_table's row length
  int64_t max_seqlen_k = 0;              ///< the longest sequence (chooses the split count)
  bool causal = true;                    ///< query i sees the keys up to seqlens_k - q_len + i
  float softmax_scale = 0;               ///< 0: 1 / sqrt(head_dim)
  int64_t splits = 0;                    ///< key ranges per sequence; 0: chosen for the GPU
  int64_t stages = 0;                    ///< K and V blocks in flight per warp (2 to 4); 0: the most that fit

  int64_t total_q() const { return batch * q_len; }
  int64_t group() const { return heads / kv_heads; }
};

namespace paged_decode {

/// The split kernel's static choices (the Constexpr parameters of the kernel).
struct Config {
  int head_dim = 128, group = 1, q_len = 1;
  /// The cache's inner extents: static, so that every offset inside a page is a constant.
  int kv_heads = 1, page_size = 16;
  bool causal = true;
  int stages = 4;  ///< K and V blocks in flight per warp
  bool dependent = false;  ///< launched with programmatic dependent launch
  static constexpr int warps = 4, rows = 16, keys = 16;  ///< a tile's rows; a block's keys

  static constexpr int threads() { return 32 * warps; }
  constexpr int tiles() const { return (group * q_len + rows - 1) / rows; }
  /// Shared memory: Q's tile, then each warp's ring (stage s: a K block, then a V block); once
  /// every warp is done with the rings, the merge's scratch over them: each warp's O and
  /// log-sum-exps, f32.
  template <Element T>
  struct Shared {
    SharedStorage storage;
    SharedRegion<T> q, rings;
    SharedRegion<f32> o, lse;
  };
  template <Element T>
  constexpr Shared<T> shared() const {
    Shared<T> r;
    r.q = r.storage.template take<T>(rows * head_dim);
    const int phases = r.storage.used();
    r.rings = r.storage.template take<T>(warps * stages * 2 * keys * head_dim);
    r.storage.overlay(phases);
    r.o = r.storage.template take<f32>(rows * head_dim * warps);
    r.lse = r.storage.template take<f32>(rows * warps);
    return r;
  }
  template <Element T>
  constexpr uint32_t shared_bytes() const {
    return shared<T>().storage.bytes();
  }
};

/// A ring of K (or V) blocks from `first` (the rings' region, or a block further for V): (keys,
/// head_dim, stage, warp), each block swizzled as the FA2's tiles are, the stages of a warp
/// interleaved with the other tensor's.
template <Element T>
Tensor<T> ring(const Config& c, const Pointer<T>& first) {
  const int64_t block = int64_t(Config::keys) * c.head_dim;
  const int chunk_bits = std::countr_zero(16u / unsigned(sizeof(T))), row_bits = std::countr_zero(unsigned(c.head_dim));
  Layout blocks = make_layout(IntTuple{Config::keys, c.head_dim, c.stages, Config::warps},
                              IntTuple{c.head_dim, 1, 2 * block, 2 * block * c.stages});
  return make_tensor(first, composition(Swizzle(3, chunk_bits, row_bits - chunk_bits), blocks));
}

/// The split kernel. o (splits, total_q, heads, head_dim) and lse (splits, heads, total_q) are
/// the f32 partial results when `Partial`, else O itself (one split) in T.
template <Element T, bool Partial>
CUTEJIT_LOCAL void split(const Config& c, const Tensor<T>& q_in, const Tensor<T>& k_in, const Tensor<T>& v_in, const Tensor<int32_t>& block_table,
           const Tensor<int32_t>& seqlens_k, const Tensor<std::conditional_t<Partial, f32, T>>& o_in, const Tensor<f32>& lse,
           const F32& scale_log2) {
  using Op = fmha_sm80::Atom<T>;
  const int D = c.head_dim, G = c.group, QL = c.q_len, R = Config::rows, BK = Config::keys, W = Config::warps, S = c.stages;
  const int H = c.kv_heads * G, P = c.page_size;
  launch_bounds(Config::threads());
  if (c.dependent) griddepcontrol_wait();
  // The tensors with their static strides (the launch passes them compact): every offset inside
  // a page and a query row is then a constant.
  auto compact = [](const auto& x, IntTuple shape, IntTuple stride) { return x.with_layout(make_layout(shape, stride)); };
  auto q = compact(q_in, IntTuple{q_in.shape(0), H, D}, IntTuple{H * D, D, 1});
  auto k_cache = compact(k_in, IntTuple{k_in.shape(0), P, c.kv_heads, D}, IntTuple{P * c.kv_heads * D, c.kv_heads * D, D, 1});
  auto v_cache = compact(v_in, IntTuple{v_in.shape(0), P, c.kv_heads, D}, IntTuple{P * c.kv_heads * D, c.kv_heads * D, D, 1});
  auto o = compact(o_in, IntTuple{o_in.shape(0), o_in.shape(1), H, D}, IntTuple{o_in.shape(1) * (H * D), H * D, D, 1});
  Int t = thread_idx().x, lane = t % 32, warp = t / 32;
  Int split = block_idx().x, kv_head = block_idx().y / c.tiles(), tile = block_idx().y % c.tiles(), b = block_idx().z;
  Int splits = o.shape(0), k_len = seqlens_k(b);

  // The key blocks this split covers: whole blocks of 16, up to the last key a row of the tile sees.
  Int last_key = k_len;  // one past
  if (c.causal) last_key = min(k_len, k_len - QL + min(Int(QL - 1), (tile * R + (R - 1)) / G) + 1);
  Int n_blocks = max(Int(0), last_key + (BK - 1)) / BK;
  Int per_split = (n_blocks + splits - 1) / splits;
  Int begin = split * per_split, count = max(Int(0), min(n_blocks, begin + per_split) - begin);
  Int mine = (max(Int(0), count - warp) + (W - 1)) / W;  // blocks begin + warp, begin + warp + W, ...

  // Q: row r of the tile is query (tile * 16 + r) / G of head kv_head * G + (tile * 16 + r) % G;
  // rows past the group's (padding) repeat its last row, and are never stored.
  const Config::Shared<T> shared = c.shared<T>();
  SharedMemory smem(shared.storage);
  Tensor<T> sQ = make_tensor(smem[shared.q], fmha_sm80::tile_layout<T>(R, D));
  const int chunks = D / 8;  // 16-byte pieces of a row
  for (int i = 0; i < R * chunks / Config::threads(); ++i) {
    Int piece = t + i * Config::threads(), r = piece / chunks, chunk = piece % chunks;
    Int row = min(tile * R + r, Int(G * QL - 1));
    Tensor<T> src = q(b * QL + row / G, kv_head * G + row % G, _);
    copy(CpAsync<16>{}, local_tile(src, IntTuple{8}, IntTuple{chunk}), local_tile(sQ(r, _), IntTuple{8}, IntTuple{chunk}));
  }
  cp_async_fence();

  // Each warp's rings, and its copy: 16 bytes a lane, a row's lanes side by side.
  Tensor<T> sK = ring<T>(c, smem[shared.rings])(_, _, _, warp);
  Tensor<T> sV = ring<T>(c, smem[shared.rings] + BK * D)(_, _, _, warp);
  auto g2s = make_tiled_copy(CpAsync<16>{}, make_ordered_layout({32 / std::min(32, chunks), std::min(32, chunks)}, {1, 0}),
                             make_layout({1, 8}));
  auto thr_g2s = g2s.get_slice(lane);
  IntTuple kv_bound{k_len, D};
  CoordTensor keys = make_identity_tensor(kv_bound);
  // The warp's j-th block into stage s: its 16 keys lie in one page.
  auto load = [&](const Int& j, const Int& s) {
    Int block = begin + warp + j * W, key = block * BK;
    // The host checks the lengths and table it has (check_block_table); these may exist only on
    // the device, so a length past the table's row or a page past the cache traps.
    device_assert(key / P < block_table.shape(1), "fmha_decode: seqlens_k[b] needs more pages than block_table's row b holds");
    Int page = block_table(b, key / P), slot_block = (key % P) / BK;
    device_assert(page >= 0 && page < k_cache.shape(0), "fmha_decode: block_table names a page outside the cache");
    CoordTensor cKV = local_tile(keys, IntTuple{BK, D}, IntTuple{block, 0});
    Tensor<T> gK = local_tile(k_cache(page, _, kv_head, _), IntTuple{BK, D}, IntTuple{slot_block, 0});
    Tensor<T> gV = local_tile(v_cache(page, _, kv_head, _), IntTuple{BK, D}, IntTuple{slot_block, 0});
    copy_if(g2s, thr_g2s.partition_S(cKV), kv_bound, thr_g2s.partition_S(gK), thr_g2s.partition_D(sK(_, _, s)));
    copy_if(g2s, thr_g2s.partition_S(cKV), kv_bound, thr_g2s.partition_S(gV), thr_g2s.partition_D(sV(_, _, s)));
  };
  for (int s = 0; s < S - 1; ++s) {
    if_(Int(s) < mine, [&] { load(Int(s), Int(s)); });
    cp_async_fence();
  }

  // One mma.sync atom per warp: S (16 x 16) = Q K^T, O (16 x D) += P V.
  auto tiled = make_tiled_mma(Op{}, make_layout({1, 1, 1}));
  auto thr = tiled.get_slice(lane);
  auto ldsm_q = make_tiled_copy_A(LdMatrix<4>{}, tiled);
  auto ldsm_k = make_tiled_copy_B(LdMatrix<2>{}, tiled);
  auto ldsm_v = make_tiled_copy_B(LdMatrix<2, true>{}, tiled);
  auto s2r_q = ldsm_q.get_slice(lane), s2r_k = ldsm_k.get_slice(lane), s2r_v = ldsm_v.get_slice(lane);

  // Q's group has landed (at most the ring's are in flight). At head dim 64 its fragments stay
  // in registers; above, they are read again for each block, which keeps O and S in registers.
  cp_async_wait(S - 1);
  sync_threads();
  const bool q_in_registers = D == 64;
  auto q_fragment = [&](int kk) {
    auto f = thr.partition_fragment_A({R, Op::k});
    copy(ldsm_q, s2r_q.partition_S(local_tile(sQ, IntTuple{R, Op::k}, IntTuple{0, kk})), f);
    return f;
  };
  std::vector<Tensor<T>> fq;
  if (q_in_registers)
    for (int kk = 0; kk < D / Op::k; ++kk) fq.push_back(q_fragment(kk));

  auto acc_o = thr.partition_fragment_C({R, D});
  for (int64_t i = 0; i < size(acc_o.layout()).value(); ++i) acc_o(IntTuple(i)) = 0.0f;
  auto o_rows = accumulator_rowcol(tiled, acc_o);
  const int64_t rows = size(mode(o_rows.layout(), 0)).value(), o_cols = size(mode(o_rows.layout(), 1)).value();
  OnlineSoftmax softmax(rows, accumulator_row_lanes(tiled));
  // (row of the tile's packing, key of the sequence) of each score.
  CoordTensor scores = make_identity_tensor(IntTuple{c.tiles() * R, k_len});

  for_(0, mine, 1, [&](Int j) {
    // Block j has landed, and every lane is done with block j - 1's stage: refill it.
    cp_async_wait(S - 2);
    sync_warp();
    if_(j + (S - 1) < mine, [&] { load(j + (S - 1), (j + (S - 1)) % S); });
    cp_async_fence();
    Int s = j % S, block = begin + warp + j * W;

    auto acc_s = thr.partition_fragment_C({R, BK});
    for (int64_t i = 0; i < size(acc_s.layout()).value(); ++i) acc_s(IntTuple(i)) = 0.0f;
    for (int kk = 0; kk < D / Op::k; ++kk) {
      auto fk = thr.partition_fragment_B({BK, Op::k});
      copy(ldsm_k, s2r_k.partition_S(local_tile(sK(_, _, s), IntTuple{BK, Op::k}, IntTuple{0, kk})), fk);
      cutejit::gemm(tiled, acc_s, q_in_registers ? fq[size_t(kk)] : q_fragment(kk), fk);
    }
    auto s_rows = accumulator_rowcol(tiled, acc_s);

    // Keys past the sequence, and (causal) past a row's position, score -inf: only in the
    // blocks they touch (the first row of the tile sees the fewest keys).
    Bool partial = (block + 1) * BK > k_len;
    if (c.causal) partial = partial || (block + 1) * BK > k_len - QL + (tile * R) / G + 1;
    if_(partial, [&] {
      CoordTensor cS = accumulator_rowcol(tiled, thr.partition_C(local_tile(scores, IntTuple{R, BK}, IntTuple{tile, block})));
      softmax.mask(s_rows, cS, [&](const Int& row, const Int& key) {
        Bool keep = key < k_len;
        if (c.causal) keep = keep && key <= k_len - QL + row / G;
        return keep;
      });
    });

    for (int64_t r = 0; r < rows; ++r) {
      F32 rescale = softmax.update(s_rows, r, scale_log2);
      for (int64_t col = 0; col < o_cols; ++col) o_rows(IntTuple(r), IntTuple(col)) = F32(o_rows(IntTuple(r), IntTuple(col))) * rescale;
    }

    // O += P V, P (16 x 16 keys) as the A operand straight from the accumulator; 64 columns
    // of V at a time, so that few of its fragments are live at once.
    auto p = accumulator_as_A(tiled, tiled, acc_s);
    Tensor<T> sVt = fmha_sm80::transposed(sV(_, _, s));
    const int64_t chunk = 64 / Op::n;  // of the accumulator's N atoms
    for (int n = 0; n < D / 64; ++n) {
      auto fv = thr.partition_fragment_B({64, BK});
      copy(ldsm_v, s2r_v.partition_S(local_tile(sVt, IntTuple{64, BK}, IntTuple{n, 0})), fv);
      IntTuple o_chunk{size(mode(acc_o.layout(), 0)), size(mode(acc_o.layout(), 1)), chunk};
      cutejit::gemm(tiled, local_tile(acc_o, o_chunk, IntTuple{0, 0, n}), p, fv);
    }
  });
  cp_async_wait<0>();
  sync_threads();  // every warp is done with the rings: they become the merge's scratch

  // Each warp's O (normalised) and log-sum-exp, by row: sO (16, D, warp), sL (16, warp).
  Tensor<f32> sO = make_tensor(smem[shared.o], make_layout(IntTuple{R, D, W}, IntTuple{D, 1, R * D}));
  Tensor<f32> sL = make_tensor(smem[shared.lse], make_layout(IntTuple{R, W}));
  CoordTensor row_coords = accumulator_rowcol(tiled, thr.partition_C(make_identity_tensor(IntTuple{R, D})));
  for (int64_t r = 0; r < rows; ++r) {
    F32 sum = softmax.row_sum(r), inv = OnlineSoftmax::normalizer(sum), row_lse = softmax.log_sum_exp(r, sum);
    for (int64_t col = 0; col < o_cols; ++col) o_rows(IntTuple(r), IntTuple(col)) = F32(o_rows(IntTuple(r), IntTuple(col))) * inv;
    Int row = coordinate<0>(row_coords(IntTuple(r), IntTuple(0)));
    if_(lane % softmax.row_lanes() == 0, [&] { sL(row, warp) = row_lse; });
  }
  copy(acc_o, thr.partition_C(sO(_, _, warp)));
  sync_threads();

  // The merge: 8 threads a row, D / 8 columns each, weighing the warps by their log-sum-exps.
  Int r = t / 8, part = t % 8;
  const int cols = D / 8;
  F32 m = F32(sL(r, 0));
  for (int w = 1; w < W; ++w) m = max(m, F32(sL(r, w)));
  F32 base = select(m == F32(-INFINITY), F32(0.0f), m);
  F32 total = 0.0f;
  auto out = make_rmem_tensor<f32>(IntTuple{cols});
  for (int i = 0; i < cols; ++i) out(IntTuple(i)) = 0.0f;
  for (int w = 0; w < W; ++w) {
    F32 weight = exp(F32(sL(r, w)) - base);
    total = total + weight;
    auto part_o = make_rmem_tensor<f32>(IntTuple{cols});
    copy(local_tile(sO(r, _, w), IntTuple{cols}, IntTuple{part}), part_o);
    for (int i = 0; i < cols; ++i) out(IntTuple(i)) = fma(weight, F32(part_o(IntTuple(i))), F32(out(IntTuple(i))));
  }
  F32 inv = select(total == F32(0.0f), F32(0.0f), 1.0f / total);
  using Out = std::conditional_t<Partial, f32, T>;
  auto result = make_rmem_tensor<Out>(IntTuple{cols});
  for (int i = 0; i < cols; ++i) result(IntTuple(i)) = cast<Out>(F32(out(IntTuple(i))) * inv);
  Int row = tile * R + r;
  if_(row < G * QL, [&] {
    Int token = b * QL + row / G, head = kv_head * G + row % G;
    copy(result, local_tile(o(split, token, head, _), IntTuple{cols}, IntTuple{part}));
    if_(part == 0, [&] { lse(split, head, token) = select(total == F32(0.0f), F32(-INFINITY), m + log(total)); });
  });
}

/// The combine: O and the log-sum-exp of each (query, head) from the splits' partial results,
/// one warp each, D / 32 columns a lane.
template <Element T>
CUTEJIT_LOCAL void combine(int head_dim, const Tensor<f32>& o_part, const Tensor<f32>& lse_part, const Tensor<T>& o, const Tensor<f32>& lse,
                           bool dependent = false) {
  launch_bounds(32);
  if (dependent) griddepcontrol_wait();
  Int token = block_idx().x, head = block_idx().y, lane = thread_idx().x;
  Int splits = o_part.shape(0);
  const int cols = head_dim / 32;
  Var<f32> m = -INFINITY;
  for_(0, splits, 1, [&](Int s) { m = max(F32(m), F32(lse_part(s, head, token))); });
  F32 base = select(F32(m) == F32(-INFINITY), F32(0.0f), F32(m));
  Var<f32> total = 0.0f;
  auto acc = make_rmem_tensor<f32>(IntTuple{cols});
  for (int i = 0; i < cols; ++i) acc(IntTuple(i)) = 0.0f;
  for_(0, splits, 1, [&](Int s) {
    F32 weight = exp(F32(lse_part(s, head, token)) - base);
    total = F32(total) + weight;
    auto part = make_rmem_tensor<f32>(IntTuple{cols});
    copy(local_tile(o_part(s, token, head, _), IntTuple{cols}, IntTuple{lane}), part);
    for (int i = 0; i < cols; ++i) acc(IntTuple(i)) = fma(weight, F32(part(IntTuple(i))), F32(acc(IntTuple(i))));
  });
  F32 sum = total;
  F32 inv = select(sum == F32(0.0f), F32(0.0f), 1.0f / sum);
  auto result = make_rmem_tensor<T>(IntTuple{cols});
  for (int i = 0; i < cols; ++i) result(IntTuple(i)) = cast<T>(F32(acc(IntTuple(i))) * inv);
  copy(result, local_tile(o(token, head, _), IntTuple{cols}, IntTuple{lane}));
  if_(lane == 0, [&] { lse(head, token) = select(sum == F32(0.0f), F32(-INFINITY), F32(m) + log(sum)); });
}

template <Element T, bool Partial>
using SplitOut = Tensor<std::conditional_t<Partial, f32, T>>;

}  // namespace paged_decode

// ---- host side: the problems the kernels take, and their launch choices ------------------------

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

namespace paged_decode {
/// The split count: about one CTA per multiprocessor in all (fewer splits of longer ranges
/// measured faster than two CTAs per multiprocessor of half the length), each split at least
/// 256 keys long.
inline int64_t choose_splits(const DecodeProblem& p, int multiprocessors) {
  const int64_t ctas = p.batch * p.kv_heads * ((p.group() * p.q_len + Config::rows - 1) / Config::rows);
  return std::clamp<int64_t>(std::min<int64_t>(multiprocessors / ctas, (p.max_seqlen_k + 255) / 256), 1, 64);
}
/// The ring's depth: the deepest (4, 3 or 2 stages) that lets two CTAs share a multiprocessor
/// (3 at head dim 128 on an H200, which measured 2-8% faster than 4), else the deepest that
/// fits one; or the problem's. `shared_limit` is the shared memory a block may have on `gpu` (a
/// GPU's or a target's name, for the messages).
template <Element T>
Config config_for(const DecodeProblem& p, int shared_limit, const std::string& gpu, detail::Where w) {
  Config c{.head_dim = int(p.head_dim), .group = int(p.group()), .q_len = int(p.q_len), .kv_heads = int(p.kv_heads),
           .page_size = int(p.page_size), .causal = p.causal};
  const auto limit = uint32_t(shared_limit);
  if (p.stages > 0) {
    c.stages = int(p.stages);
    if (c.shared_bytes<T>() > limit)
      detail::fail("fmha_decode: " + std::to_string(p.stages) + " stages need " + std::to_string(c.shared_bytes<T>()) +
                       " bytes of shared memory, more than a block of " + gpu + " has (" + std::to_string(limit) + ")",
                   w);
    return c;
  }
  for (uint32_t ctas : {2u, 1u})
    for (c.stages = 4; c.stages >= 2; --c.stages)
      if (ctas * c.shared_bytes<T>() <= limit) return c;
  c.stages = 2;
  detail::fail("fmha_decode: head dim " + std::to_string(p.head_dim) + " needs " + std::to_string(c.shared_bytes<T>()) +
                   " bytes of shared memory per block, more than " + gpu + " has (" + std::to_string(limit) + ")",
               w);
}
}  // namespace paged_decode

}  // namespace cutejit::kernels
