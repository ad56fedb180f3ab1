// The attention backward (sm_80 and newer, on mma.sync), as FlashAttention-2 computes it, with
// P recomputed from the forward's log-sum-exp: given O = softmax(scale Q K^T) V, its
// log-sum-exp L and the gradient dO,
//     P = exp(scale Q K^T - L),  dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(dO * O)),
//     dQ = scale dS K,  dK = scale dS^T Q.
// The inputs are the forwards' (sm80.hpp): Q, O, dO and dQ (total_q, heads, head_dim),
// K, V, dK, dV (total_k, kv_heads, head_dim), L (heads, total_q), batches of any lengths through
// cu_seqlens, GQA/MQA, no mask or causal (bottom-right aligned).
//
// Three kernels, none with atomics, so that the result is the same bit for bit on every run:
//   - dot: D = rowsum(dO * O) per (query, head), a warp a row.
//   - dK and dV: a CTA per 64 keys of a key/value head, four warps of 16 keys each. K and V
//     stay in shared memory; the query blocks of every query head of the group stream through a
//     two-stage cp.async ring of Q and dO. Each step computes S^T = K Q^T and dP^T = V dO^T, so
//     that P^T and dS^T come out of the accumulators as the A operands of dV += P^T dO and
//     dK += dS^T Q (accumulator_as_A): nothing goes back to shared memory. A key/value head
//     sums its group's query heads in its own registers, in order.
//   - dQ: a CTA per 64 queries of a head, four warps of 16 queries, K and V blocks streaming
//     through a two-stage ring; S = Q K^T and dP = dO V^T again, and dQ += dS K, dS as the A
//     operand from the accumulator.
// The dQ kernel recomputes the two products the dK/dV kernel made (7 products instead of 5):
// that is the price of determinism without a lock or a second pass over an f32 dQ.
// Causal key blocks above the diagonal are skipped by both. Built for sm_90a it runs on Hopper;
// built for sm_80, sm_86, sm_89, sm_100a and sm_120a it is compile-verified.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>
#include <utility>

#include "cutejit/core/visibility.hpp"
#include "cutejit/cutejit.hpp"
#include "cutejit/pipeline/shared_storage.hpp"
#include "cutejit/kernels/attention/sequences.hpp"
#include "cutejit/kernels/attention/sm80.hpp"

namespace cutejit::kernels {

namespace fmha_backward_sm80 {

/// The static choices of the dK/dV and dQ kernels (their Constexpr parameters).
struct Config {
  int head_dim = 128;
  bool causal = false;
  static constexpr int warps = 4, threads = 32 * warps;
  static constexpr int tile = 16 * warps;  ///< keys per dK/dV CTA, queries per dQ CTA: 16 per warp
  /// Queries per dK/dV step and keys per dQ step: fewer at head dim 128, which keeps S (or S^T)
  /// and dP beside the accumulators in the registers on every target (dK and dV: 128 f32 per
  /// thread; 32 queries a step spill 88 bytes).
  constexpr int dkdv_step() const { return head_dim > 64 ? 16 : 64; }
  constexpr int dq_step() const { return head_dim > 64 ? 32 : 64; }
  /// Resident K and V (or Q and dO), then the two stages of each streamed tile, and the slack
  /// of a 1 KB-aligned start.
  template <Element T>
  struct Shared {
    SharedStorage storage;
    std::array<SharedRegion<T>, 2> resident;  ///< (tile, head_dim) each
    std::array<SharedRegion<T>, 2> rings;     ///< two stages of (step, head_dim) each
  };
  template <Element T>
  constexpr Shared<T> shared(int step) const {
    Shared<T> r;
    for (auto& tile_region : r.resident) tile_region = r.storage.template take<T>(tile * head_dim);
    for (auto& ring_region : r.rings) ring_region = r.storage.template take<T>(step * head_dim, 2);
    return r;
  }
  template <Element T>
  constexpr uint32_t shared_bytes(int step) const {
    return shared<T>(step).storage.bytes();
  }
};

/// A two-stage ring of (rows, head_dim) tiles, each swizzled as the forward's (fmha_sm80::tile_layout).
template <Element T>
Tensor<T> ring(const Pointer<T>& data, int64_t rows, int head_dim) {
  const int chunk_bits = std::countr_zero(16u / unsigned(sizeof(T))), row_bits = std::countr_zero(unsigned(head_dim));
  Layout stages = make_layout(IntTuple{rows, head_dim, 2}, IntTuple{head_dim, 1, rows * head_dim});
  return make_tensor(data, composition(Swizzle(3, chunk_bits, row_bits - chunk_bits), stages));
}

/// L in log2 units for P = exp2(S scale_log2 - L2), where a query outside the sequence or one
/// that saw no key (L = -inf) gets +inf: its P is 0 for every key.
inline F32 log2_lse(const Tensor<f32>& lse, const Int& head, const Int& q_start, const Int& query, const Int& q_len) {
  Bool inside = query < q_len;
  F32 l = F32(lse(head, q_start + min(query, q_len - 1)));
  return select(inside && l != F32(-INFINITY), l * float(M_LOG2E), F32(INFINITY));
}

/// D of a query: 0 outside the sequence.
inline F32 query_delta(const Tensor<f32>& delta, const Int& head, const Int& q_start, const Int& query, const Int& q_len) {
  return select(query < q_len, F32(delta(head, q_start + min(query, q_len - 1))), F32(0.0f));
}

/// The first block of `bm` queries that sees key block `n_block` of `bn` keys (causal; else 0),
/// at most the sequence's number of query blocks.
inline Int first_query_block(const Int& n_block, int bm, int bn, const Int& q_len, const Int& k_len, bool causal) {
  Int m_blocks = (q_len + (bm - 1)) / bm, diagonal = k_len - q_len;
  return causal ? min(m_blocks, max(Int(0), n_block * bn - diagonal) / bm) : Int(0);
}

/// The L2 (log2_lse) and D of the query of each row (`query_mode` 0) or column (1) of a block of
/// scores whose coordinates (accumulator_rowcol) are `coords`, the query in mode `query_mode`.
inline std::pair<Tensor<f32>, Tensor<f32>> query_statistics(const CoordTensor& coords, int query_mode, const Tensor<f32>& lse,
                                                            const Tensor<f32>& delta, const Int& head, const Int& q_start,
                                                            const Int& q_len) {
  const int64_t n = size(mode(coords.layout(), query_mode)).value();
  auto l2 = make_rmem_tensor<f32>(IntTuple{n}), d = make_rmem_tensor<f32>(IntTuple{n});
  for (int64_t i = 0; i < n; ++i) {
    auto at = query_mode == 0 ? coords(IntTuple(i), IntTuple(0)) : coords(IntTuple(0), IntTuple(i));
    Int query = query_mode == 0 ? coordinate<0>(at) : coordinate<1>(at);
    l2(IntTuple(i)) = log2_lse(lse, head, q_start, query, q_len);
    d(IntTuple(i)) = query_delta(delta, head, q_start, query, q_len);
  }
  return {l2, d};
}

/// P = exp2(S scale_log2 - L2) in place of a block of scores (accumulator_rowcol), each with the
/// L2 of its query: the row's (`query_mode` 0) or the column's (1).
inline void probabilities(const Tensor<float>& s_rows, const Tensor<f32>& l2, int query_mode, const F32& scale_log2) {
  const int64_t rows = size(mode(s_rows.layout(), 0)).value(), cols = size(mode(s_rows.layout(), 1)).value();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      s_rows(IntTuple(r), IntTuple(c)) =
          fast::exp2(fma(F32(s_rows(IntTuple(r), IntTuple(c))), scale_log2, -F32(l2(IntTuple(query_mode == 0 ? r : c)))));
}

/// dS = P (dP - D) in place of dP, each with the D of its query (as `probabilities`).
inline void score_gradients(const Tensor<float>& p_rows, const Tensor<float>& dp_rows, const Tensor<f32>& d, int query_mode) {
  const int64_t rows = size(mode(p_rows.layout(), 0)).value(), cols = size(mode(p_rows.layout(), 1)).value();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dp_rows(IntTuple(r), IntTuple(c)) =
          F32(p_rows(IntTuple(r), IntTuple(c))) * (F32(dp_rows(IntTuple(r), IntTuple(c))) - F32(d(IntTuple(query_mode == 0 ? r : c))));
}

/// rowsum(dO * O) of every (query, head): delta (heads, total_q); a warp a row, head_dim / 32
/// columns a lane.
template <Element T>
CUTEJIT_LOCAL void dot(int head_dim, const Tensor<T>& o, const Tensor<T>& d_o, const Tensor<f32>& delta) {
  launch_bounds(128);
  Int lane = thread_idx().x % 32, token = block_idx().x * 4 + thread_idx().x / 32, head = block_idx().y;
  const int cols = head_dim / 32;
  if_(token < o.shape(0), [&] {
    auto a = make_rmem_tensor<T>(IntTuple{cols}), b = make_rmem_tensor<T>(IntTuple{cols});
    copy(local_tile(o(token, head, _), IntTuple{cols}, IntTuple{lane}), a);
    copy(local_tile(d_o(token, head, _), IntTuple{cols}, IntTuple{lane}), b);
    F32 sum = 0.0f;
    for (int i = 0; i < cols; ++i) sum = fma(cast<float>(Value<T>(a(IntTuple(i)))), cast<float>(Value<T>(b(IntTuple(i)))), sum);
    for (int offset = 16; offset > 0; offset /= 2) sum = sum + shuffle_xor(sum, offset);
    if_(lane == 0, [&] { delta(head, token) = sum; });
  });
}

/// Global -> shared for (rows, head_dim) tiles: 16 bytes a thread, a row's threads side by side.
inline auto tile_copy(int head_dim) {
  return make_tiled_copy(CpAsync<16>{}, make_ordered_layout({Config::threads / (head_dim / 8), head_dim / 8}, {1, 0}), make_layout({1, 8}));
}

/// Converts an f32 accumulator to T and stores the rows inside `bound` (scaled by `scale`).
template <Element T, class ThrMma>
void store_rows(const ThrMma& thr, const Tensor<float>& acc, const F32& scale, const CoordTensor& coords, const IntTuple& bound,
                const Tensor<T>& g) {
  auto out = make_rmem_tensor<T>(acc.layout());
  for (int64_t i = 0; i < size(acc.layout()).value(); ++i) out(IntTuple(i)) = cast<T>(F32(acc(IntTuple(i))) * scale);
  copy_if(thr.partition_C(coords), bound, out, thr.partition_C(g));
}

/// The products of both kernels: one TiledMma of the CTA's warps along M, thread `t`'s slice
/// of it, and the ldmatrix copies that fill its fragments from shared (rows, head_dim) tiles:
/// A, B, and B transposed (for the products whose B lies MN-major, (head_dim, rows)).
template <Element T>
struct WarpProducts {
  using Op = fmha_sm80::Atom<T>;
  TiledMma<Op> tiled;
  ThrMma<Op> thr;
  TiledLdMatrix<Op, 4, false> ldsm_a;
  TiledLdMatrix<Op, 2, false> ldsm_b;
  TiledLdMatrix<Op, 2, true> ldsm_bt;
  typename TiledLdMatrix<Op, 4, false>::Slice s2r_a;
  typename TiledLdMatrix<Op, 2, false>::Slice s2r_b;
  typename TiledLdMatrix<Op, 2, true>::Slice s2r_bt;

  explicit WarpProducts(const Int& t)
      : tiled(make_tiled_mma(Op{}, make_layout({Config::warps, 1, 1}))),
        thr(tiled.get_slice(t)),
        ldsm_a(make_tiled_copy_A(LdMatrix<4>{}, tiled)),
        ldsm_b(make_tiled_copy_B(LdMatrix<2>{}, tiled)),
        ldsm_bt(make_tiled_copy_B(LdMatrix<2, true>{}, tiled)),
        s2r_a(ldsm_a.get_slice(t)),
        s2r_b(ldsm_b.get_slice(t)),
        s2r_bt(ldsm_bt.get_slice(t)) {}

  /// acc = A B^T over head_dim, A and B both (rows, head_dim) shared tiles.
  void rows(const Tensor<float>& acc, const Tensor<T>& sa, int64_t a_rows, const Tensor<T>& sb, int64_t b_rows, int head_dim) const {
    fill(acc, 0.0f);
    for (int kk = 0; kk < head_dim / Op::k; ++kk) {
      auto fa = thr.partition_fragment_A({a_rows, Op::k});
      auto fb = thr.partition_fragment_B({b_rows, Op::k});
      copy(ldsm_a, s2r_a.partition_S(local_tile(sa, IntTuple{a_rows, Op::k}, IntTuple{0, kk})), fa);
      copy(ldsm_b, s2r_b.partition_S(local_tile(sb, IntTuple{b_rows, Op::k}, IntTuple{0, kk})), fb);
      cutejit::gemm(tiled, acc, fa, fb);
    }
  }

  /// acc += A B over 64 columns of acc at a time (so that few B fragments are live at once):
  /// `a` the A operand (M x 16), `b_t` the B operand's shared tile as (N, 16) with N = head_dim.
  void columns(const Tensor<float>& acc, const Tensor<T>& a, const Tensor<T>& b_t, int head_dim, int kk) const {
    const int64_t chunk = 64 / Op::n;  // of the accumulator's N atoms
    for (int n = 0; n < head_dim / 64; ++n) {
      auto fb = thr.partition_fragment_B({64, Op::k});
      copy(ldsm_bt, s2r_bt.partition_S(local_tile(b_t, IntTuple{64, Op::k}, IntTuple{n, kk})), fb);
      IntTuple cols{size(mode(acc.layout(), 0)), size(mode(acc.layout(), 1)), chunk};
      cutejit::gemm(tiled, local_tile(acc, cols, IntTuple{0, 0, n}), a, fb);
    }
  }

  /// The k16 slice kk of an accumulator's N atoms: the A operand of the next product.
  Tensor<T> a_slice(const Tensor<float>& acc, int kk) const {
    IntTuple block{size(mode(acc.layout(), 0)), size(mode(acc.layout(), 1)), Op::k / Op::n};
    return accumulator_as_A(tiled, tiled, local_tile(acc, block, IntTuple{0, 0, kk}));
  }
};

/// dK and dV of 64 keys of one key/value head (grid: key blocks x kv_heads x batch).
template <Element T>
CUTEJIT_LOCAL void dkdv(const Config& c, const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const Tensor<T>& d_o, const Tensor<f32>& lse,
          const Tensor<f32>& delta, const Tensor<T>& dk, const Tensor<T>& dv, const Tensor<int32_t>& cu_seqlens_q,
          const Tensor<int32_t>& cu_seqlens_k, const F32& scale_log2, const F32& scale) {
  using Op = fmha_sm80::Atom<T>;
  const int D = c.head_dim, BN = Config::tile, BM = c.dkdv_step();
  launch_bounds(Config::threads);
  Int t = thread_idx().x;
  Int n_block = block_idx().x, kv_head = block_idx().y, batch = block_idx().z;
  auto [q_start, q_len] = sequence(cu_seqlens_q, batch, q.shape(0), bad_cu_seqlens_q);
  auto [k_start, k_len] = sequence(cu_seqlens_k, batch, k.shape(0), bad_cu_seqlens_k);
  Int group = q.shape(1) / k.shape(1);

  if_(n_block * BN < k_len, [&] {
    // Query blocks to visit: all, or (causal) those from the first query that sees this block's
    // first key; for each query head of the group in turn.
    Int diagonal = k_len - q_len;  // query i sees keys j <= i + diagonal
    Int m_begin = first_query_block(n_block, BM, BN, q_len, k_len, c.causal);
    Int per_head = (q_len + (BM - 1)) / BM - m_begin, steps = per_head * group;

    IntTuple q_bound{q_len, D}, kv_bound{k_len, D};
    CoordTensor cKV = local_tile(make_identity_tensor(kv_bound), IntTuple{BN, D}, IntTuple{n_block, 0});
    Tensor<T> gK = local_tile(domain_offset(IntTuple{k_start, 0}, k(_, kv_head, _)), IntTuple{BN, D}, IntTuple{n_block, 0});
    Tensor<T> gV = local_tile(domain_offset(IntTuple{k_start, 0}, v(_, kv_head, _)), IntTuple{BN, D}, IntTuple{n_block, 0});
    const auto shared = c.template shared<T>(BM);
    SharedMemory smem(shared.storage);
    Tensor<T> sK = make_tensor(smem[shared.resident[0]], fmha_sm80::tile_layout<T>(BN, D));
    Tensor<T> sV = make_tensor(smem[shared.resident[1]], fmha_sm80::tile_layout<T>(BN, D));
    Tensor<T> sQ = ring(smem[shared.rings[0]], BM, D), sdO = ring(smem[shared.rings[1]], BM, D);

    auto g2s = tile_copy(D);
    auto thr_g2s = g2s.get_slice(t);
    copy_if(g2s, thr_g2s.partition_S(cKV), kv_bound, thr_g2s.partition_S(gK), thr_g2s.partition_D(sK));
    copy_if(g2s, thr_g2s.partition_S(cKV), kv_bound, thr_g2s.partition_S(gV), thr_g2s.partition_D(sV));
    // Step i is query block m_begin + i % per_head of the group's head i / per_head.
    auto step_head = [&](const Int& i) { return kv_head * group + i / per_head; };
    auto step_block = [&](const Int& i) { return m_begin + i % per_head; };
    auto load = [&](const Int& i) {
      Int head = step_head(i), m = step_block(i), s = i % 2;
      CoordTensor cQ = local_tile(make_identity_tensor(q_bound), IntTuple{BM, D}, IntTuple{m, 0});
      Tensor<T> gQ = local_tile(domain_offset(IntTuple{q_start, 0}, q(_, head, _)), IntTuple{BM, D}, IntTuple{m, 0});
      Tensor<T> gdO = local_tile(domain_offset(IntTuple{q_start, 0}, d_o(_, head, _)), IntTuple{BM, D}, IntTuple{m, 0});
      copy_if(g2s, thr_g2s.partition_S(cQ), q_bound, thr_g2s.partition_S(gQ), thr_g2s.partition_D(sQ(_, _, s)));
      copy_if(g2s, thr_g2s.partition_S(cQ), q_bound, thr_g2s.partition_S(gdO), thr_g2s.partition_D(sdO(_, _, s)));
    };
    if_(steps > 0, [&] { load(Int(0)); });
    cp_async_fence();

    // One TiledMma, its M the keys: S^T, dP^T (keys x queries), then dV, dK (keys x head_dim).
    WarpProducts<T> mma(t);
    const auto &tiled = mma.tiled, &thr = mma.thr;

    auto acc_dk = thr.partition_fragment_C({BN, D}), acc_dv = thr.partition_fragment_C({BN, D});
    fill(acc_dk, 0.0f);
    fill(acc_dv, 0.0f);
    CoordTensor scores = make_identity_tensor(IntTuple{k_len, q_len});  // (key, query)

    for_(0, steps, 1, [&](Int i) {
      // Step i's tiles have landed, and every thread is done with step i - 1's stage: refill it.
      cp_async_wait<0>();
      sync_threads();
      if_(i + 1 < steps, [&] { load(i + 1); });
      cp_async_fence();
      Int head = step_head(i), m = step_block(i), s = i % 2;
      Tensor<T> q_tile = sQ(_, _, s), do_tile = sdO(_, _, s);

      auto acc_s = thr.partition_fragment_C({BN, BM}), acc_dp = thr.partition_fragment_C({BN, BM});
      mma.rows(acc_s, sK, BN, q_tile, BM, D);    // S^T = K Q^T
      mma.rows(acc_dp, sV, BN, do_tile, BM, D);  // dP^T = V dO^T
      auto s_rows = accumulator_rowcol(tiled, acc_s), dp_rows = accumulator_rowcol(tiled, acc_dp);
      CoordTensor cS = accumulator_rowcol(tiled, thr.partition_C(local_tile(scores, IntTuple{BN, BM}, IntTuple{n_block, m})));

      // (causal) Keys past a query's diagonal: only in the blocks the diagonal crosses.
      if (c.causal)
        if_((n_block + 1) * BN - 1 > m * BM + diagonal,
            [&] { mask_scores(s_rows, cS, [&](const Int& key, const Int& query) { return key <= query + diagonal; }); });
      // P^T and dS^T in place: a column is a query, with its L and D.
      auto [l2, d] = query_statistics(cS, 1, lse, delta, head, q_start, q_len);
      probabilities(s_rows, l2, 1, scale_log2);
      score_gradients(s_rows, dp_rows, d, 1);

      // dV += P^T dO and dK += dS^T Q, 16 queries at a time; dO and Q as (head_dim, queries).
      Tensor<T> do_t = fmha_sm80::transposed(do_tile), q_t = fmha_sm80::transposed(q_tile);
      for (int kk = 0; kk < BM / Op::k; ++kk) {
        mma.columns(acc_dv, mma.a_slice(acc_s, kk), do_t, D, kk);
        mma.columns(acc_dk, mma.a_slice(acc_dp, kk), q_t, D, kk);
      }
    });
    cp_async_wait<0>();

    // dK = scale dS^T Q and dV, where the keys lie inside the sequence (0 for keys no query sees).
    CoordTensor cOut = local_tile(make_identity_tensor(kv_bound), IntTuple{BN, D}, IntTuple{n_block, 0});
    Tensor<T> gdK = local_tile(domain_offset(IntTuple{k_start, 0}, dk(_, kv_head, _)), IntTuple{BN, D}, IntTuple{n_block, 0});
    Tensor<T> gdV = local_tile(domain_offset(IntTuple{k_start, 0}, dv(_, kv_head, _)), IntTuple{BN, D}, IntTuple{n_block, 0});
    store_rows(thr, acc_dk, scale, cOut, kv_bound, gdK);
    store_rows(thr, acc_dv, F32(1.0f), cOut, kv_bound, gdV);
  });
}

/// dQ of 64 queries of one head (grid: query blocks x heads x batch).
template <Element T>
CUTEJIT_LOCAL void dq(const Config& c, const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const Tensor<T>& d_o, const Tensor<f32>& lse,
        const Tensor<f32>& delta, const Tensor<T>& d_q, const Tensor<int32_t>& cu_seqlens_q, const Tensor<int32_t>& cu_seqlens_k,
        const F32& scale_log2, const F32& scale) {
  using Op = fmha_sm80::Atom<T>;
  const int D = c.head_dim, BM = Config::tile, BN = c.dq_step();
  launch_bounds(Config::threads);
  Int t = thread_idx().x;
  Int m_block = block_idx().x, head = block_idx().y, batch = block_idx().z;
  auto [q_start, q_len] = sequence(cu_seqlens_q, batch, q.shape(0), bad_cu_seqlens_q);
  auto [k_start, k_len] = sequence(cu_seqlens_k, batch, k.shape(0), bad_cu_seqlens_k);
  Int kv_head = head / (q.shape(1) / k.shape(1));

  if_(m_block * BM < q_len, [&] {
    Int diagonal = k_len - q_len;
    Int n_blocks = key_blocks_seen(m_block, BM, BN, q_len, k_len, c.causal);

    IntTuple q_bound{q_len, D}, kv_bound{k_len, D};
    CoordTensor cQ = local_tile(make_identity_tensor(q_bound), IntTuple{BM, D}, IntTuple{m_block, 0});
    Tensor<T> gQ = local_tile(domain_offset(IntTuple{q_start, 0}, q(_, head, _)), IntTuple{BM, D}, IntTuple{m_block, 0});
    Tensor<T> gdO = local_tile(domain_offset(IntTuple{q_start, 0}, d_o(_, head, _)), IntTuple{BM, D}, IntTuple{m_block, 0});
    Tensor<T> gK = local_tile(domain_offset(IntTuple{k_start, 0}, k(_, kv_head, _)), IntTuple{BN, D}, IntTuple{_, 0});
    Tensor<T> gV = local_tile(domain_offset(IntTuple{k_start, 0}, v(_, kv_head, _)), IntTuple{BN, D}, IntTuple{_, 0});
    CoordTensor cKV = local_tile(make_identity_tensor(kv_bound), IntTuple{BN, D}, IntTuple{_, 0});
    const auto shared = c.template shared<T>(BN);
    SharedMemory smem(shared.storage);
    Tensor<T> sQ = make_tensor(smem[shared.resident[0]], fmha_sm80::tile_layout<T>(BM, D));
    Tensor<T> sdO = make_tensor(smem[shared.resident[1]], fmha_sm80::tile_layout<T>(BM, D));
    Tensor<T> sK = ring(smem[shared.rings[0]], BN, D), sV = ring(smem[shared.rings[1]], BN, D);

    auto g2s = tile_copy(D);
    auto thr_g2s = g2s.get_slice(t);
    copy_if(g2s, thr_g2s.partition_S(cQ), q_bound, thr_g2s.partition_S(gQ), thr_g2s.partition_D(sQ));
    copy_if(g2s, thr_g2s.partition_S(cQ), q_bound, thr_g2s.partition_S(gdO), thr_g2s.partition_D(sdO));
    auto load = [&](const Int& n) {
      Int s = n % 2;
      copy_if(g2s, thr_g2s.partition_S(cKV(_, _, n)), kv_bound, thr_g2s.partition_S(gK(_, _, n)), thr_g2s.partition_D(sK(_, _, s)));
      copy_if(g2s, thr_g2s.partition_S(cKV(_, _, n)), kv_bound, thr_g2s.partition_S(gV(_, _, n)), thr_g2s.partition_D(sV(_, _, s)));
    };
    if_(n_blocks > 0, [&] { load(Int(0)); });
    cp_async_fence();

    WarpProducts<T> mma(t);
    const auto &tiled = mma.tiled, &thr = mma.thr;

    auto acc_dq = thr.partition_fragment_C({BM, D});
    fill(acc_dq, 0.0f);
    // Each of this thread's rows (queries): its L (log2 units) and D, read once.
    auto [l2, dl] = query_statistics(accumulator_rowcol(tiled, thr.partition_C(cQ)), 0, lse, delta, head, q_start, q_len);
    CoordTensor scores = make_identity_tensor(IntTuple{q_len, k_len});  // (query, key)

    for_(0, n_blocks, 1, [&](Int n) {
      cp_async_wait<0>();
      sync_threads();
      if_(n + 1 < n_blocks, [&] { load(n + 1); });
      cp_async_fence();
      Int s = n % 2;
      Tensor<T> k_tile = sK(_, _, s), v_tile = sV(_, _, s);

      auto acc_s = thr.partition_fragment_C({BM, BN}), acc_dp = thr.partition_fragment_C({BM, BN});
      mma.rows(acc_s, sQ, BM, k_tile, BN, D);    // S = Q K^T
      mma.rows(acc_dp, sdO, BM, v_tile, BN, D);  // dP = dO V^T
      auto s_rows = accumulator_rowcol(tiled, acc_s), dp_rows = accumulator_rowcol(tiled, acc_dp);

      // Keys past the sequence, and (causal) past the diagonal: only in the blocks they touch.
      Bool partial = (n + 1) * BN > k_len;
      if (c.causal) partial = partial || (n + 1) * BN - 1 > m_block * BM + diagonal;
      if_(partial, [&] {
        CoordTensor cS = accumulator_rowcol(tiled, thr.partition_C(local_tile(scores, IntTuple{BM, BN}, IntTuple{m_block, n})));
        mask_scores(s_rows, cS, [&](const Int& query, const Int& key) {
          Bool keep = key < k_len;
          if (c.causal) keep = keep && key <= query + diagonal;
          return keep;
        });
      });
      probabilities(s_rows, l2, 0, scale_log2);
      score_gradients(s_rows, dp_rows, dl, 0);

      // dQ += dS K, 16 keys at a time; K as (head_dim, keys).
      Tensor<T> k_t = fmha_sm80::transposed(k_tile);
      for (int kk = 0; kk < BN / Op::k; ++kk) mma.columns(acc_dq, mma.a_slice(acc_dp, kk), k_t, D, kk);
    });
    cp_async_wait<0>();

    Tensor<T> gdQ = local_tile(domain_offset(IntTuple{q_start, 0}, d_q(_, head, _)), IntTuple{BM, D}, IntTuple{m_block, 0});
    store_rows(thr, acc_dq, scale, cQ, q_bound, gdQ);
  });
}

}  // namespace fmha_backward_sm80

}  // namespace cutejit::kernels
