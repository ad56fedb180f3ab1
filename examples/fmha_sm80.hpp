// A FlashAttention-2 forward on the warp-level path (sm_80 and newer), written as CuTe's
// flash_fwd kernel is: O = softmax(scale * Q K^T) V for every (query block, head, sequence).
//   - Q, K and V are (tokens, heads, head_dim) tensors of one batch of sequences of any length,
//     sequence b being tokens cu_seqlens[b] to cu_seqlens[b + 1] (fixed lengths are the special
//     case cu_seqlens = 0, S, 2 S, ...); H_q a multiple of H_kv (GQA/MQA) reads K and V in place;
//   - a CTA takes 128 queries of one head (64 at head dim 128): four warps of mma.sync atoms
//     (TiledMma) along M, 32 rows each (16 at head dim 128); Q stays in shared memory, K and V
//     blocks of 64 keys stream through it with cp.async, K's next block in flight during
//     softmax and P V, V's during Q K^T (FA2's single-buffered schedule);
//   - S = Q K^T and O += P V on the same TiledMma: ldmatrix for Q and K (K-major), ldmatrix.trans
//     for V (the B operand V^T is stored N-major); P never leaves registers
//     (accumulator_as_A);
//   - the online softmax in registers, on the accumulator's rows (accumulator_rowcol), with
//     exp2 of the scale folded into log2(e), the row maximum and sum reduced over the lanes
//     that share a row; only the blocks on a sequence's end or the causal diagonal are masked,
//     and causal blocks past the diagonal are never loaded;
//   - O written from registers, predicated on the sequence's length, and the log-sum-exp of
//     each row (natural log, -inf for a row that sees no key).
// Causal masks are aligned bottom-right, as FlashAttention's: query i of a sequence of S_q
// queries and S_k keys sees the keys j <= i + S_k - S_q.
// Built for sm_90a it runs on Hopper; built for sm_80, sm_86, sm_89 and sm_120a it is
// compile-verified.
#pragma once

#include <algorithm>
#include <array>
#include <span>
#include <string_view>
#include <bit>
#include <cmath>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "example.hpp"
#include "fmha_softmax.hpp"

namespace examples {
using namespace cutejit;

/// Sequence b of a batch: its first token and its length, from cu_seqlens. The host checks
/// offsets it has (check_seqlens); on the device, a sequence that starts below 0, ends before it
/// starts or ends past the `tokens` its tensors hold traps with `message` and the kernel's file
/// and line, before any read or write outside them.
struct Sequence {
  Int start, len;
};
inline Sequence sequence(const Tensor<int32_t>& cu_seqlens, const Int& b, const Int& tokens, std::string_view message) {
  Int start = cu_seqlens(b), end = cu_seqlens(b + 1);
  device_assert(start >= 0 && start <= end && end <= tokens, message);
  return {start, end - start};
}
inline constexpr const char* bad_cu_seqlens_q =
    "fmha: cu_seqlens_q has a sequence that starts below 0, ends before it starts, or ends past the tensors' tokens";
inline constexpr const char* bad_cu_seqlens_k =
    "fmha: cu_seqlens_k has a sequence that starts below 0, ends before it starts, or ends past the tensors' tokens";

/// The blocks of `bn` keys that query block `m_block` of `bm` queries sees (bottom-right
/// aligned): all of the sequence's, or (causal) those up to its last query's diagonal.
inline Int key_blocks_seen(const Int& m_block, int bm, int bn, const Int& q_len, const Int& k_len, bool causal) {
  Int diagonal = k_len - q_len;  // query i sees keys j <= i + diagonal
  Int n_blocks = (k_len + (bn - 1)) / bn;
  if (causal) n_blocks = min(n_blocks, max(Int(0), (m_block + 1) * bm + diagonal + (bn - 1)) / bn);
  return n_blocks;
}

namespace fmha80 {

/// The kernel's static choices.
struct Config {
  int head_dim = 128;
  bool causal = false;
  int tile_m = 128, tile_n = 64, warps = 4;
  constexpr int threads() const { return 32 * warps; }
  /// Q's tile, then K's and V's, and the slack of a 1 KB-aligned start.
  template <Element T>
  constexpr uint32_t shared_bytes() const {
    return uint32_t((tile_m + 2 * tile_n) * head_dim * sizeof(T)) + dynamic_shared_slack(1024);
  }
  friend constexpr bool operator==(const Config&, const Config&) = default;
  std::string name(const char* type) const {
    return std::string("fmha_fwd_") + type + "_hd" + std::to_string(head_dim) + (causal ? "_causal" : "") + "_" + std::to_string(tile_m) +
           "x" + std::to_string(tile_n) + "_w" + std::to_string(warps);
  }
};

/// The mma.sync atom of each input type (f32 accumulation).
template <Element T>
using Atom = std::conditional_t<std::is_same_v<T, bf16>, SM80_16x8x16_F32BF16BF16F32_TN, SM80_16x8x16_F32F16F16F32_TN>;

/// A (rows x head_dim) shared tile, its rows' 16-byte chunks swizzled by the row (chunk c of
/// row r at c ^ (r % 8)): the 16-byte cp.async writes, ldmatrix's eight rows and
/// ldmatrix.trans's eight rows all touch eight different chunks (tests/unit/layout/
/// test_bank_conflicts.cpp counts them).
template <Element T>
ComposedLayout tile_layout(int64_t rows, int head_dim) {
  const int chunk_bits = std::countr_zero(16u / unsigned(sizeof(T))), row_bits = std::countr_zero(unsigned(head_dim));
  return composition(Swizzle(3, chunk_bits, row_bits - chunk_bits), make_layout({rows, head_dim}, LayoutRight{}));
}
template <Element T>
Tensor<T> shared_tile(int64_t rows, int head_dim, int64_t byte_offset) {
  return make_tensor(dynamic_shared_aligned<T>(1024, byte_offset), tile_layout<T>(rows, head_dim));
}

/// The same tile with its two modes swapped: V (keys, head_dim) as the B operand V^T (head_dim, keys).
template <Element T>
Tensor<T> transposed(const Tensor<T>& t) {
  return t.transform([](const Layout& l) { return SlicedLayout{make_layout(mode(l, 1), mode(l, 0)), 0}; });
}

template <Element T, Config C>
void forward(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const Tensor<T>& o, const Tensor<f32>& lse,
             const Tensor<int32_t>& cu_seqlens_q, const Tensor<int32_t>& cu_seqlens_k, const F32& scale_log2) {
  using Op = Atom<T>;
  constexpr int D = C.head_dim, BM = C.tile_m, BN = C.tile_n;
  launch_bounds(C.threads());
  Int t = thread_idx().x;
  Int m_block = block_idx().x, head = block_idx().y, batch = block_idx().z;
  auto [q_start, q_len] = sequence(cu_seqlens_q, batch, q.shape(0), bad_cu_seqlens_q);
  auto [k_start, k_len] = sequence(cu_seqlens_k, batch, k.shape(0), bad_cu_seqlens_k);
  Int kv_head = head / (q.shape(1) / k.shape(1));

  if_(m_block * BM < q_len, [&] {
    // Key blocks to visit: all of them, or (causal) those up to this block's last row's diagonal.
    Int diagonal = k_len - q_len;  // query i sees keys j <= i + diagonal
    Int n_blocks = key_blocks_seen(m_block, BM, BN, q_len, k_len, C.causal);

    // This CTA's tiles in global memory (K and V: one per key block), with their coordinates.
    Tensor<T> gQ = local_tile(domain_offset(IntTuple{q_start, 0}, q(_, head, _)), IntTuple{BM, D}, IntTuple{m_block, 0});
    Tensor<T> gK = local_tile(domain_offset(IntTuple{k_start, 0}, k(_, kv_head, _)), IntTuple{BN, D}, IntTuple{_, 0});
    Tensor<T> gV = local_tile(domain_offset(IntTuple{k_start, 0}, v(_, kv_head, _)), IntTuple{BN, D}, IntTuple{_, 0});
    Tensor<T> gO = local_tile(domain_offset(IntTuple{q_start, 0}, o(_, head, _)), IntTuple{BM, D}, IntTuple{m_block, 0});
    IntTuple q_bound{q_len, D}, kv_bound{k_len, D};
    CoordTensor cQ = local_tile(make_identity_tensor(q_bound), IntTuple{BM, D}, IntTuple{m_block, 0});
    CoordTensor cKV = local_tile(make_identity_tensor(kv_bound), IntTuple{BN, D}, IntTuple{_, 0});
    Tensor<T> sQ = shared_tile<T>(BM, D, 0);
    Tensor<T> sK = shared_tile<T>(BN, D, int64_t(BM) * D * sizeof(T));
    Tensor<T> sV = shared_tile<T>(BN, D, int64_t(BM + BN) * D * sizeof(T));

    // Global -> shared: each thread 16 bytes of a row, a row's threads side by side.
    auto g2s = make_tiled_copy(CpAsync<16>{}, make_ordered_layout({C.threads() / (D / 8), D / 8}, {1, 0}), make_layout({1, 8}));
    auto thr_g2s = g2s.get_slice(t);
    auto load_kv = [&](const Tensor<T>& g, const Tensor<T>& s, const Int& n) {
      copy_if(g2s, thr_g2s.partition_S(cKV(_, _, n)), kv_bound, thr_g2s.partition_S(g(_, _, n)), thr_g2s.partition_D(s));
    };
    copy_if(g2s, thr_g2s.partition_S(cQ), q_bound, thr_g2s.partition_S(gQ), thr_g2s.partition_D(sQ));
    load_kv(gK, sK, Int(0));
    cp_async_fence();

    // One TiledMma for both products: S (BM x BN) = Q K^T, then O (BM x D) += P V.
    auto tiled = make_tiled_mma(Op{}, make_layout({C.warps, 1, 1}));
    auto thr = tiled.get_slice(t);
    auto ldsm_q = make_tiled_copy_A(LdMatrix<4>{}, tiled);
    auto ldsm_k = make_tiled_copy_B(LdMatrix<2>{}, tiled);
    auto ldsm_v = make_tiled_copy_B(LdMatrix<2, true>{}, tiled);
    auto s2r_q = ldsm_q.get_slice(t), s2r_k = ldsm_k.get_slice(t), s2r_v = ldsm_v.get_slice(t);
    Tensor<T> sVt = transposed(sV);

    auto acc_o = thr.partition_fragment_C({BM, D});
    for (int64_t i = 0; i < size(acc_o.layout()).value(); ++i) acc_o(IntTuple(i)) = 0.0f;
    // The accumulators as rows and columns: row r of acc_o, of each S and of cO is one query.
    auto o_rows = accumulator_rowcol(tiled, acc_o);
    const int64_t rows = size(mode(o_rows.layout(), 0)).value(), o_cols = size(mode(o_rows.layout(), 1)).value();
    OnlineSoftmax softmax(rows, accumulator_row_lanes(tiled));

    for_(0, n_blocks, 1, [&](Int n) {
      auto acc_s = thr.partition_fragment_C({BM, BN});
      for (int64_t i = 0; i < size(acc_s.layout()).value(); ++i) acc_s(IntTuple(i)) = 0.0f;
      // K's block n has landed, and every thread is done with V's block n - 1.
      cp_async_wait<0>();
      sync_threads();
      load_kv(gV, sV, n);
      cp_async_fence();
      for (int kk = 0; kk < D / Op::k; ++kk) {
        auto fq = thr.partition_fragment_A({BM, Op::k});
        auto fk = thr.partition_fragment_B({BN, Op::k});
        copy(ldsm_q, s2r_q.partition_S(local_tile(sQ, IntTuple{BM, Op::k}, IntTuple{0, kk})), fq);
        copy(ldsm_k, s2r_k.partition_S(local_tile(sK, IntTuple{BN, Op::k}, IntTuple{0, kk})), fk);
        cutejit::gemm(tiled, acc_s, fq, fk);
      }
      auto s_rows = accumulator_rowcol(tiled, acc_s);

      // Keys past the sequence, and (causal) past the diagonal, score -inf: only in the blocks they touch.
      Bool partial = (n + 1) * BN > k_len;
      if (C.causal) partial = partial || (n + 1) * BN - 1 > m_block * BM + diagonal;
      if_(partial, [&] {
        CoordTensor cS = accumulator_rowcol(
            tiled, thr.partition_C(local_tile(make_identity_tensor(IntTuple{q_len, k_len}), IntTuple{BM, BN}, IntTuple{m_block, n})));
        softmax.mask(s_rows, cS, [&](const Int& row, const Int& col) {
          Bool keep = col < k_len;
          if (C.causal) keep = keep && col <= row + diagonal;
          return keep;
        });
      });

      // V's block n has landed, and every thread is done with K's block n: fetch K's next.
      cp_async_wait<0>();
      sync_threads();
      if_(n + 1 < n_blocks, [&] { load_kv(gK, sK, n + 1); });
      cp_async_fence();

      // Online softmax: rescale what came before to the new row maximum, P = exp2(S scale - max).
      for (int64_t r = 0; r < rows; ++r) {
        F32 rescale = softmax.update(s_rows, r, scale_log2);
        for (int64_t c = 0; c < o_cols; ++c) o_rows(IntTuple(r), IntTuple(c)) = F32(o_rows(IntTuple(r), IntTuple(c))) * rescale;
      }

      // O += P V, P as the A operand straight from the accumulator, 16 keys at a time (so
      // that each block of S is dead once its P is made).
      const int64_t n_per_k = Op::k / Op::n;
      IntTuple s_block{size(mode(acc_s.layout(), 0)), size(mode(acc_s.layout(), 1)), n_per_k};
      for (int kk = 0; kk < BN / Op::k; ++kk) {
        auto p = accumulator_as_A(tiled, tiled, local_tile(acc_s, s_block, IntTuple{0, 0, kk}));
        auto fv = thr.partition_fragment_B({D, Op::k});
        copy(ldsm_v, s2r_v.partition_S(local_tile(sVt, IntTuple{D, Op::k}, IntTuple{0, kk})), fv);
        cutejit::gemm(tiled, acc_o, p, fv);
      }
    });
    cp_async_wait<0>();

    // O / sum, in T, stored where it lies inside the sequence; the log-sum-exp by one lane per row.
    CoordTensor o_coords = thr.partition_C(cQ);
    CoordTensor row_coords = accumulator_rowcol(tiled, o_coords);
    softmax.store(thr, acc_o, o_rows, o_coords, row_coords, q_bound, gO, lse, t, head, q_start, q_len);
  });
}

}  // namespace fmha80

/// The forward kernel for one element type and Config.
template <Element T, fmha80::Config C>
inline auto fmha_forward = Kernel{C.name(std::is_same_v<T, bf16> ? "bf16" : "f16"),
                                  [](Tensor<T> q, Tensor<T> k, Tensor<T> v, Tensor<T> o, Tensor<f32> lse, Tensor<int32_t> cu_seqlens_q,
                                     Tensor<int32_t> cu_seqlens_k, F32 scale_log2) {
                                    fmha80::forward<T, C>(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, scale_log2);
                                  }};

/// One attention problem: `batch` sequences packed along tokens, as FlashAttention's varlen API.
struct FmhaProblem {
  int64_t batch = 1, heads = 1, kv_heads = 1, head_dim = 128;
  int64_t total_q = 0, total_k = 0;  ///< tokens of all sequences: cu_seqlens_q[batch], cu_seqlens_k[batch]
  int64_t max_seqlen_q = 0;          ///< the longest query sequence (the grid's extent)
  int64_t max_seqlen_k = 0;          ///< the longest key sequence (the backward's grid); 0: total_k
  bool causal = false;
  float softmax_scale = 0;  ///< 0: 1 / sqrt(head_dim)
  /// A sliding window: query i sees the keys from window_left before its diagonal to
  /// window_right after it (-1: no bound; causal is window_right = 0). The Hopper kernels only.
  int64_t window_left = -1, window_right = -1;
  /// Masks aligned top-left (query i's diagonal is key i, as PyTorch's is_causal) instead of
  /// bottom-right (key i + S_k - S_q, as FlashAttention's). The Hopper kernels only.
  bool top_left = false;

  /// A batch of equal sequences, `seqlen_q` queries and `seqlen_k` keys each: the problem of the
  /// Hopper forward on dense (batch, seqlen, heads, head_dim) tensors. Masks are set after.
  static FmhaProblem dense(int64_t batch, int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t seqlen_q, int64_t seqlen_k) {
    return {.batch = batch, .heads = heads, .kv_heads = kv_heads, .head_dim = head_dim, .total_q = batch * seqlen_q,
            .total_k = batch * seqlen_k, .max_seqlen_q = seqlen_q, .max_seqlen_k = seqlen_k};
  }

  /// The keys query i of a sequence of `sq` queries and `sk` keys sees: [first, last], empty
  /// when first > last.
  std::pair<int64_t, int64_t> visible_keys(int64_t i, int64_t sq, int64_t sk) const {
    const int64_t diagonal = i + (top_left ? 0 : sk - sq);
    int64_t last = sk - 1;
    if (causal) last = std::min(last, diagonal);
    if (window_right >= 0) last = std::min(last, diagonal + window_right);
    const int64_t first = window_left >= 0 ? std::max<int64_t>(0, diagonal - window_left) : 0;
    return {first, last};
  }
};

/// Throws a cutejit::Error at the caller's line unless `p` is a problem `kernel` supports: one
/// of `head_dims`, query heads a multiple of the key/value heads, token counts whose offsets fit
/// 32 bits, and windows (where `windows` allows them) shorter than the keys.
inline void check_problem(const FmhaProblem& p, std::initializer_list<int64_t> head_dims, bool windows, const char* kernel,
                          detail::Where w) {
  auto bad = [&](const std::string& what) { detail::fail(std::string(kernel) + ": " + what, w); };
  if (std::find(head_dims.begin(), head_dims.end(), p.head_dim) == head_dims.end()) {
    std::string list;
    for (size_t i = 0; i < head_dims.size(); ++i)
      list += (i == 0 ? "" : i + 1 == head_dims.size() ? " and " : ", ") + std::to_string(head_dims.begin()[i]);
    bad("head dims " + list + " are supported, not " + std::to_string(p.head_dim));
  }
  if (p.batch < 1 || p.heads < 1 || p.kv_heads < 1 || p.heads % p.kv_heads != 0)
    bad("needs a batch of at least 1 and query heads a multiple of the key/value heads, not batch " + std::to_string(p.batch) + ", " +
        std::to_string(p.heads) + " query and " + std::to_string(p.kv_heads) + " key/value heads");
  const int64_t limit = (int64_t(1) << 31) / (p.heads * p.head_dim);
  if (p.total_q < 0 || p.total_k < 0 || p.total_q >= limit || p.total_k >= limit || p.max_seqlen_q < 0 || p.max_seqlen_q > p.total_q ||
      p.max_seqlen_k < 0 || p.max_seqlen_k > p.total_k)
    bad("token counts must be from 0 to " + std::to_string(limit - 1) + " (32-bit offsets), max_seqlen_q at most total_q and " +
        "max_seqlen_k at most total_k, not " + std::to_string(p.total_q) + " and " + std::to_string(p.total_k) + " tokens, max_seqlen_q " +
        std::to_string(p.max_seqlen_q) + ", max_seqlen_k " + std::to_string(p.max_seqlen_k));
  const bool windowed = p.window_left >= 0 || p.window_right >= 0;
  if (!windows && (windowed || p.top_left))
    bad("sliding windows and top-left aligned masks are not supported by this kernel (the Hopper kernels, "
        "fmha_forward_sm90_prepare and fmha_backward_sm90_prepare, have both)");
  if (p.window_left < -1 || p.window_right < -1)
    bad("a window bound is a number of keys from 0, or -1 for none, not " + std::to_string(std::min(p.window_left, p.window_right)));
  if (p.window_left >= p.total_k || p.window_right >= p.total_k)
    bad("a window of " + std::to_string(std::max(p.window_left, p.window_right)) + " keys is as long as all " + std::to_string(p.total_k) +
        " keys of the batch; give -1 for no bound");
  if (p.causal && p.window_right > 0)
    bad("a causal mask sees no key after the diagonal, but window_right is " + std::to_string(p.window_right) +
        "; give causal, or a window_right, not both");
}

/// Throws a cutejit::Error at the caller's line unless the host copies of cu_seqlens_q and
/// cu_seqlens_k describe the problem: batch + 1 offsets each, from 0, never decreasing, ending at
/// total_q and total_k, no query sequence longer than max_seqlen_q and, where it is given, no
/// key sequence longer than max_seqlen_k (the grids' extents: the tokens past them would be left
/// unwritten). On the device the kernels check only that each sequence lies inside the tensors
/// (`sequence`); call this where the offsets are on the host.
inline void check_seqlens(const FmhaProblem& p, std::span<const int32_t> cu_q, std::span<const int32_t> cu_k,
                          detail::Where w = detail::Where::current()) {
  auto check = [&](std::span<const int32_t> cu, const char* name, int64_t total, int64_t longest, const char* longest_name, const char* tokens) {
    auto bad = [&](const std::string& what) { detail::fail(std::string("fmha: ") + name + " " + what, w); };
    if (int64_t(cu.size()) != p.batch + 1)
      bad("has " + std::to_string(cu.size()) + " offsets; a batch of " + std::to_string(p.batch) + " needs " + std::to_string(p.batch + 1));
    if (cu[0] != 0) bad("starts at " + std::to_string(cu[0]) + ", not 0");
    for (size_t b = 0; b + 1 < cu.size(); ++b) {
      if (cu[b + 1] < cu[b])
        bad("decreases from " + std::to_string(cu[b]) + " to " + std::to_string(cu[b + 1]) + " at sequence " + std::to_string(b));
      if (longest >= 0 && cu[b + 1] - cu[b] > longest)
        bad("gives sequence " + std::to_string(b) + " " + std::to_string(cu[b + 1] - cu[b]) + " " + tokens + ", more than " + longest_name + " (" +
            std::to_string(longest) + ")");
    }
    if (cu.back() != total) bad("ends at " + std::to_string(cu.back()) + ", but the tensors hold " + std::to_string(total) + " tokens");
  };
  check(cu_q, "cu_seqlens_q", p.total_q, p.max_seqlen_q, "max_seqlen_q", "queries");
  check(cu_k, "cu_seqlens_k", p.total_k, p.max_seqlen_k > 0 ? p.max_seqlen_k : -1, "max_seqlen_k", "keys");
}

namespace fmha80 {
/// The configurations the launch picks.
constexpr Config hd64{64, false, 128, 64}, hd64_causal{64, true, 128, 64}, hd128{128, false, 64, 64}, hd128_causal{128, true, 64, 64};

/// Throws a cutejit::Error at the caller's line unless the forward supports the problem.
inline void check(const FmhaProblem& p, detail::Where w = detail::Where::current()) {
  check_problem(p, {64, 128}, /*windows=*/false, "fmha_forward", w);
}
/// Throws a cutejit::Error at the caller's line unless every buffer holds the problem's tensor.
template <Element T>
void check_buffers(const FmhaProblem& p, const Buffer<T>& q, const Buffer<T>& k, const Buffer<T>& v, const Buffer<T>& o,
                   const Buffer<f32>& lse, const Buffer<int32_t>& cu_q, const Buffer<int32_t>& cu_k, detail::Where w) {
  auto sizes_fit = q.size() >= size_t(p.total_q * p.heads * p.head_dim) && o.size() >= size_t(p.total_q * p.heads * p.head_dim) &&
                   k.size() >= size_t(p.total_k * p.kv_heads * p.head_dim) && v.size() >= size_t(p.total_k * p.kv_heads * p.head_dim) &&
                   lse.size() >= size_t(p.heads * p.total_q) && cu_q.size() >= size_t(p.batch + 1) && cu_k.size() >= size_t(p.batch + 1);
  if (!sizes_fit) detail::fail("fmha_forward: a buffer is smaller than the problem's tensors", w);
}
template <Element T, Config C>
PreparedLaunch prepare(const Device& gpu, const FmhaProblem& p, const Buffer<T>& q, const Buffer<T>& k, const Buffer<T>& v,
                       const Buffer<T>& o, const Buffer<f32>& lse, const Buffer<int32_t>& cu_q, const Buffer<int32_t>& cu_k) {
  const float scale = p.softmax_scale > 0 ? p.softmax_scale : 1.0f / std::sqrt(float(p.head_dim));
  Launch l{.grid = {uint32_t(ceil_div(std::max<int64_t>(p.max_seqlen_q, 1), C.tile_m)), uint32_t(p.heads), uint32_t(p.batch)},
           .block = uint32_t(C.threads()),
           .shared_bytes = C.template shared_bytes<T>()};
  return fmha_forward<T, C>.prepare(gpu, l, q.view({p.total_q, p.heads, p.head_dim}), k.view({p.total_k, p.kv_heads, p.head_dim}),
                                    v.view({p.total_k, p.kv_heads, p.head_dim}), o.view({p.total_q, p.heads, p.head_dim}),
                                    lse.view({p.heads, p.total_q}), cu_q.view({p.batch + 1}), cu_k.view({p.batch + 1}),
                                    scale * float(M_LOG2E));
}
}  // namespace fmha80

/// The launch of the forward on device buffers: q, o (total_q, heads, head_dim), k, v
/// (total_k, kv_heads, head_dim), lse (heads, total_q), cu_seqlens_q/k (batch + 1 offsets,
/// from 0), all compact; the problem is checked first.
template <Element T>
  requires(std::is_same_v<T, bf16> || std::is_same_v<T, f16>)
PreparedLaunch fmha_forward_prepare(const Device& gpu, const FmhaProblem& p, const Buffer<T>& q, const Buffer<T>& k, const Buffer<T>& v,
                                    const Buffer<T>& o, const Buffer<f32>& lse, const Buffer<int32_t>& cu_seqlens_q,
                                    const Buffer<int32_t>& cu_seqlens_k, detail::Where w = detail::Where::current()) {
  fmha80::check(p, w);
  fmha80::check_buffers(p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, w);
  // hd 64: 128 queries x 64 keys per step; hd 128: 64 x 64, which keeps O, S and P in the
  // registers (128 x 64 spills at hd 128).
  using fmha80::Config;
  const bool c = p.causal;
  if (p.head_dim == 64)
    return c ? fmha80::prepare<T, fmha80::hd64_causal>(gpu, p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k)
             : fmha80::prepare<T, fmha80::hd64>(gpu, p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k);
  return c ? fmha80::prepare<T, fmha80::hd128_causal>(gpu, p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k)
           : fmha80::prepare<T, fmha80::hd128>(gpu, p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k);
}

/// Host inputs of one problem: sequence lengths, their offsets, and random Q, K and V.
template <Element T>
struct FmhaInputs {
  FmhaProblem problem;
  std::vector<int32_t> cu_seqlens_q, cu_seqlens_k;
  std::vector<T> q, k, v;
};

template <Element T>
FmhaInputs<T> fmha_inputs(const std::vector<int32_t>& q_lens, const std::vector<int32_t>& k_lens, int64_t heads, int64_t kv_heads,
                          int64_t head_dim, bool causal, unsigned seed) {
  FmhaInputs<T> in;
  FmhaProblem& p = in.problem;
  p = {.batch = int64_t(q_lens.size()), .heads = heads, .kv_heads = kv_heads, .head_dim = head_dim, .causal = causal};
  in.cu_seqlens_q = {0};
  in.cu_seqlens_k = {0};
  for (size_t b = 0; b < q_lens.size(); ++b) {
    in.cu_seqlens_q.push_back(in.cu_seqlens_q.back() + q_lens[b]);
    in.cu_seqlens_k.push_back(in.cu_seqlens_k.back() + k_lens[b]);
    p.max_seqlen_q = std::max<int64_t>(p.max_seqlen_q, q_lens[b]);
    p.max_seqlen_k = std::max<int64_t>(p.max_seqlen_k, k_lens[b]);
  }
  p.total_q = in.cu_seqlens_q.back();
  p.total_k = in.cu_seqlens_k.back();
  in.q = random_values<T>(size_t(p.total_q * heads * head_dim), seed);
  in.k = random_values<T>(size_t(p.total_k * kv_heads * head_dim), seed + 1);
  in.v = random_values<T>(size_t(p.total_k * kv_heads * head_dim), seed + 2);
  return in;
}

/// The float64 reference: O (total_q, heads, head_dim) and the log-sum-exp (heads, total_q) of
/// the problem's masks (FmhaProblem::visible_keys; -inf where a row sees no key, and O 0 there).
template <Element T>
void fmha_reference(const FmhaInputs<T>& in, std::vector<double>& o, std::vector<double>& lse) {
  const FmhaProblem& p = in.problem;
  const int64_t H = p.heads, Hk = p.kv_heads, D = p.head_dim;
  const double scale = p.softmax_scale > 0 ? p.softmax_scale : 1.0 / std::sqrt(double(D));
  o.assign(size_t(p.total_q * H * D), 0.0);
  lse.assign(size_t(H * p.total_q), -INFINITY);
  std::vector<double> s;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t q0 = in.cu_seqlens_q[b], sq = in.cu_seqlens_q[b + 1] - q0, k0 = in.cu_seqlens_k[b], sk = in.cu_seqlens_k[b + 1] - k0;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t hk = h / (H / Hk);
      for (int64_t i = 0; i < sq; ++i) {
        auto [first, last] = p.visible_keys(i, sq, sk);
        if (first > last) continue;
        s.assign(size_t(last - first + 1), 0.0);
        double m = -INFINITY;
        for (int64_t j = first; j <= last; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += double(float(in.q[((q0 + i) * H + h) * D + d])) * double(float(in.k[((k0 + j) * Hk + hk) * D + d]));
          s[size_t(j - first)] = dot * scale;
          m = std::max(m, s[size_t(j - first)]);
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - m));
        double* out = &o[size_t(((q0 + i) * H + h) * D)];
        for (int64_t j = first; j <= last; ++j)
          for (int64_t d = 0; d < D; ++d) out[d] += s[size_t(j - first)] / sum * double(float(in.v[((k0 + j) * Hk + hk) * D + d]));
        lse[size_t(h * p.total_q + q0 + i)] = m + std::log(sum);
      }
    }
  }
}

/// The largest element-wise error of O and of the log-sum-exp, each as |out - ref| / (1 + |ref|);
/// infinite where an element was left unwritten (NaN) or an infinity disagrees.
inline double fmha_error(const std::vector<float>& o, const std::vector<double>& o_ref, const std::vector<float>& lse,
                         const std::vector<double>& lse_ref) {
  double worst = 0;
  auto compare = [&](double out, double ref) {
    if (std::isinf(ref) || std::isinf(out)) {
      if (out != ref) worst = INFINITY;
      return;
    }
    worst = std::isnan(out) ? INFINITY : std::max(worst, std::abs(out - ref) / (1 + std::abs(ref)));
  };
  for (size_t i = 0; i < o_ref.size(); ++i) compare(o[i], o_ref[i]);
  for (size_t i = 0; i < lse_ref.size(); ++i) compare(lse[i], lse_ref[i]);
  return worst;
}

/// Runs a forward on `in` with poisoned outputs; the error against the float64 reference.
/// `prepare(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k)` makes the launch on the buffers.
template <Element T, class Prepare>
double fmha_check_with(const Device& gpu, const FmhaInputs<T>& in, Prepare&& prepare) {
  const FmhaProblem& p = in.problem;
  auto q = gpu.upload(in.q), k = gpu.upload(in.k), v = gpu.upload(in.v);
  auto cu_q = gpu.upload(in.cu_seqlens_q), cu_k = gpu.upload(in.cu_seqlens_k);
  auto o = gpu.upload(std::vector<T>(size_t(p.total_q * p.heads * p.head_dim), T(NAN)));
  auto lse = gpu.upload(std::vector<float>(size_t(p.heads * p.total_q), NAN));
  prepare(q, k, v, o, lse, cu_q, cu_k)();
  gpu.synchronize();
  std::vector<double> o_ref, lse_ref;
  fmha_reference(in, o_ref, lse_ref);
  std::vector<float> out;
  for (T x : o.to_host()) out.push_back(float(x));
  return fmha_error(out, o_ref, lse.to_host(), lse_ref);
}

/// The same for the FA2 forward (fmha_forward_prepare).
template <Element T>
double fmha_check(const Device& gpu, const FmhaInputs<T>& in) {
  return fmha_check_with(gpu, in, [&](auto&&... buffers) { return fmha_forward_prepare(gpu, in.problem, buffers...); });
}

/// Cross-compiles the forward of `C` for target `t` (tensor descriptions, no memory).
template <Element T, fmha80::Config C>
CompiledKernel fmha_compile(const Target& t) {
  auto view = [](std::array<int64_t, 3> shape) {
    return DeviceTensor<T>::make(256, shape, std::array<int64_t, 3>{shape[1] * shape[2], shape[2], 1});
  };
  auto lse = DeviceTensor<f32>::make(256, std::array<int64_t, 2>{16, 4096}, std::array<int64_t, 2>{4096, 1});
  auto cu = DeviceTensor<int32_t>::make(256, std::array<int64_t, 1>{5}, std::array<int64_t, 1>{1});
  auto x = view({4096, 16, C.head_dim});
  return fmha_forward<T, C>.compile(t, x, x, x, x, lse, cu, cu, 1.0f);
}

/// Four sequences of ragged lengths (one shorter than a tile, one with residues in queries and
/// keys, one token, one with more queries than keys), BF16, head dim 128, GQA 4:2, causal.
inline Example fmha_forward_example() {
  return {"fmha_fwd_bf16_hd128_causal_64x64_w4",
          [](const Device& gpu) { return fmha_check(gpu, fmha_inputs<bf16>({77, 200, 1, 150}, {77, 260, 33, 40}, 4, 2, 128, true, 31)); },
          [](const Target& t) { return fmha_compile<bf16, fmha80::hd128_causal>(t); },
          1e-2,
          {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_120a"}};
}

}  // namespace examples
