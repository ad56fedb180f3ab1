// The attention backward (sm_80 and newer, on mma.sync), as FlashAttention-2 computes it, with
// P recomputed from the forward's log-sum-exp: given O = softmax(scale Q K^T) V, its
// log-sum-exp L and the gradient dO,
//     P = exp(scale Q K^T - L),  dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(dO * O)),
//     dQ = scale dS K,  dK = scale dS^T Q.
// The inputs are the forwards' (fmha_sm80.hpp): Q, O, dO and dQ (total_q, heads, head_dim),
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
#include <bit>
#include <cstdint>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "fmha_sm80.hpp"

namespace examples {
using namespace cutejit;

namespace fmha_bwd {

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
  constexpr uint32_t shared_bytes(int step) const {
    return uint32_t((2 * tile + 4 * step) * head_dim * sizeof(T)) + dynamic_shared_slack(1024);
  }
};

/// A two-stage ring of (rows, head_dim) tiles, each swizzled as the forward's (fmha80::tile_layout).
template <Element T>
Tensor<T> ring(int64_t rows, int head_dim, int64_t byte_offset) {
  const int chunk_bits = std::countr_zero(16u / unsigned(sizeof(T))), row_bits = std::countr_zero(unsigned(head_dim));
  Layout stages = make_layout(IntTuple{rows, head_dim, 2}, IntTuple{head_dim, 1, rows * head_dim});
  return make_tensor(dynamic_shared_aligned<T>(1024, byte_offset), composition(Swizzle(3, chunk_bits, row_bits - chunk_bits), stages));
}

/// L in log2 units for P = exp2(S scale_log2 - L2), where a query outside the sequence or one
/// that saw no key (L = -inf) gets +inf: its P is 0 for every key.
inline F32 log2_lse(const Tensor<f32>& lse, const Int& head, const Int& q_start, const Int& query, const Int& q_len) {
  Bool inside = query < q_len;
  F32 l = F32(lse(head, q_start + min(query, q_len - 1)));
  return select(inside && l != F32(-INFINITY), l * float(M_LOG2E), F32(INFINITY));
}

/// rowsum(dO * O) of every (query, head): delta (heads, total_q); a warp a row, head_dim / 32
/// columns a lane.
template <Element T>
void dot(int head_dim, const Tensor<T>& o, const Tensor<T>& d_o, const Tensor<f32>& delta) {
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

/// acc += A B over 64 columns of acc at a time (so that few B fragments are live at once):
/// `a` the A operand (M x 16), `b_t` the B operand's shared tile as (N, 16) with N = head_dim,
/// read with ldmatrix.trans.
template <class Tiled, class ThrMma, class Ldsm, class Slice, Element T>
void gemm_columns(const Tiled& tiled, const ThrMma& thr, const Ldsm& ldsm, const Slice& s2r, const Tensor<float>& acc,
                  const Tensor<T>& a, const Tensor<T>& b_t, int head_dim, int kk) {
  using Op = fmha80::Atom<T>;
  const int64_t chunk = 64 / Op::n;  // of the accumulator's N atoms
  for (int n = 0; n < head_dim / 64; ++n) {
    auto fb = thr.partition_fragment_B({64, Op::k});
    copy(ldsm, s2r.partition_S(local_tile(b_t, IntTuple{64, Op::k}, IntTuple{n, kk})), fb);
    IntTuple cols{size(mode(acc.layout(), 0)), size(mode(acc.layout(), 1)), chunk};
    cutejit::gemm(tiled, local_tile(acc, cols, IntTuple{0, 0, n}), a, fb);
  }
}

/// acc = A B^T over head_dim, A and B both (rows, head_dim) shared tiles read with ldmatrix.
template <class Tiled, class ThrMma, class LdsmA, class SliceA, class LdsmB, class SliceB, Element T>
void gemm_rows(const Tiled& tiled, const ThrMma& thr, const LdsmA& ldsm_a, const SliceA& s2r_a, const LdsmB& ldsm_b,
               const SliceB& s2r_b, const Tensor<float>& acc, const Tensor<T>& sa, int64_t a_rows, const Tensor<T>& sb, int64_t b_rows,
               int head_dim) {
  using Op = fmha80::Atom<T>;
  for (int64_t i = 0; i < size(acc.layout()).value(); ++i) acc(IntTuple(i)) = 0.0f;
  for (int kk = 0; kk < head_dim / Op::k; ++kk) {
    auto fa = thr.partition_fragment_A({a_rows, Op::k});
    auto fb = thr.partition_fragment_B({b_rows, Op::k});
    copy(ldsm_a, s2r_a.partition_S(local_tile(sa, IntTuple{a_rows, Op::k}, IntTuple{0, kk})), fa);
    copy(ldsm_b, s2r_b.partition_S(local_tile(sb, IntTuple{b_rows, Op::k}, IntTuple{0, kk})), fb);
    cutejit::gemm(tiled, acc, fa, fb);
  }
}

/// The k16 slice kk of an accumulator's N atoms: the A operand of the next product.
template <Element T, class Tiled>
Tensor<T> a_slice(const Tiled& tiled, const Tensor<float>& acc, int kk) {
  using Op = fmha80::Atom<T>;
  IntTuple block{size(mode(acc.layout(), 0)), size(mode(acc.layout(), 1)), Op::k / Op::n};
  return accumulator_as_A(tiled, tiled, local_tile(acc, block, IntTuple{0, 0, kk}));
}

/// dK and dV of 64 keys of one key/value head (grid: key blocks x kv_heads x batch).
template <Element T>
void dkdv(const Config& c, const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const Tensor<T>& d_o, const Tensor<f32>& lse,
          const Tensor<f32>& delta, const Tensor<T>& dk, const Tensor<T>& dv, const Tensor<int32_t>& cu_seqlens_q,
          const Tensor<int32_t>& cu_seqlens_k, const F32& scale_log2, const F32& scale) {
  using Op = fmha80::Atom<T>;
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
    Int m_blocks = (q_len + (BM - 1)) / BM;
    Int m_begin = c.causal ? min(m_blocks, max(Int(0), n_block * BN - diagonal) / BM) : Int(0);
    Int per_head = m_blocks - m_begin, steps = per_head * group;

    IntTuple q_bound{q_len, D}, kv_bound{k_len, D};
    CoordTensor cKV = local_tile(make_identity_tensor(kv_bound), IntTuple{BN, D}, IntTuple{n_block, 0});
    Tensor<T> gK = local_tile(domain_offset(IntTuple{k_start, 0}, k(_, kv_head, _)), IntTuple{BN, D}, IntTuple{n_block, 0});
    Tensor<T> gV = local_tile(domain_offset(IntTuple{k_start, 0}, v(_, kv_head, _)), IntTuple{BN, D}, IntTuple{n_block, 0});
    const int64_t tile_bytes = int64_t(BN) * D * sizeof(T), step_bytes = int64_t(BM) * D * sizeof(T);
    Tensor<T> sK = fmha80::shared_tile<T>(BN, D, 0), sV = fmha80::shared_tile<T>(BN, D, tile_bytes);
    Tensor<T> sQ = ring<T>(BM, D, 2 * tile_bytes), sdO = ring<T>(BM, D, 2 * tile_bytes + 2 * step_bytes);

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
    auto tiled = make_tiled_mma(Op{}, make_layout({Config::warps, 1, 1}));
    auto thr = tiled.get_slice(t);
    auto ldsm_a = make_tiled_copy_A(LdMatrix<4>{}, tiled);
    auto ldsm_b = make_tiled_copy_B(LdMatrix<2>{}, tiled);
    auto ldsm_bt = make_tiled_copy_B(LdMatrix<2, true>{}, tiled);
    auto s2r_a = ldsm_a.get_slice(t), s2r_b = ldsm_b.get_slice(t), s2r_bt = ldsm_bt.get_slice(t);

    auto acc_dk = thr.partition_fragment_C({BN, D}), acc_dv = thr.partition_fragment_C({BN, D});
    for (int64_t i = 0; i < size(acc_dk.layout()).value(); ++i) {
      acc_dk(IntTuple(i)) = 0.0f;
      acc_dv(IntTuple(i)) = 0.0f;
    }
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
      gemm_rows(tiled, thr, ldsm_a, s2r_a, ldsm_b, s2r_b, acc_s, sK, BN, q_tile, BM, D);    // S^T = K Q^T
      gemm_rows(tiled, thr, ldsm_a, s2r_a, ldsm_b, s2r_b, acc_dp, sV, BN, do_tile, BM, D);  // dP^T = V dO^T
      auto s_rows = accumulator_rowcol(tiled, acc_s), dp_rows = accumulator_rowcol(tiled, acc_dp);
      CoordTensor cS = accumulator_rowcol(tiled, thr.partition_C(local_tile(scores, IntTuple{BN, BM}, IntTuple{n_block, m})));
      const int64_t rows = size(mode(s_rows.layout(), 0)).value(), cols = size(mode(s_rows.layout(), 1)).value();

      // (causal) Keys past a query's diagonal: only in the blocks the diagonal crosses.
      if (c.causal)
        if_((n_block + 1) * BN - 1 > m * BM + diagonal, [&] {
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t col = 0; col < cols; ++col) {
              Int key = coordinate<0>(cS(IntTuple(r), IntTuple(col))), query = coordinate<1>(cS(IntTuple(r), IntTuple(col)));
              s_rows(IntTuple(r), IntTuple(col)) = select(key <= query + diagonal, F32(s_rows(IntTuple(r), IntTuple(col))), F32(-INFINITY));
            }
        });
      // P^T and dS^T in place: a column is a query, with its L and D.
      for (int64_t col = 0; col < cols; ++col) {
        Int query = coordinate<1>(cS(IntTuple(0), IntTuple(col)));
        F32 l2 = log2_lse(lse, head, q_start, query, q_len);
        F32 d = select(query < q_len, F32(delta(head, q_start + min(query, q_len - 1))), F32(0.0f));
        for (int64_t r = 0; r < rows; ++r) {
          F32 p = fast::exp2(fma(F32(s_rows(IntTuple(r), IntTuple(col))), scale_log2, -l2));
          s_rows(IntTuple(r), IntTuple(col)) = p;
          dp_rows(IntTuple(r), IntTuple(col)) = p * (F32(dp_rows(IntTuple(r), IntTuple(col))) - d);
        }
      }

      // dV += P^T dO and dK += dS^T Q, 16 queries at a time; dO and Q as (head_dim, queries).
      Tensor<T> do_t = fmha80::transposed(do_tile), q_t = fmha80::transposed(q_tile);
      for (int kk = 0; kk < BM / Op::k; ++kk) {
        gemm_columns(tiled, thr, ldsm_bt, s2r_bt, acc_dv, a_slice<T>(tiled, acc_s, kk), do_t, D, kk);
        gemm_columns(tiled, thr, ldsm_bt, s2r_bt, acc_dk, a_slice<T>(tiled, acc_dp, kk), q_t, D, kk);
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
void dq(const Config& c, const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const Tensor<T>& d_o, const Tensor<f32>& lse,
        const Tensor<f32>& delta, const Tensor<T>& d_q, const Tensor<int32_t>& cu_seqlens_q, const Tensor<int32_t>& cu_seqlens_k,
        const F32& scale_log2, const F32& scale) {
  using Op = fmha80::Atom<T>;
  const int D = c.head_dim, BM = Config::tile, BN = c.dq_step();
  launch_bounds(Config::threads);
  Int t = thread_idx().x;
  Int m_block = block_idx().x, head = block_idx().y, batch = block_idx().z;
  auto [q_start, q_len] = sequence(cu_seqlens_q, batch, q.shape(0), bad_cu_seqlens_q);
  auto [k_start, k_len] = sequence(cu_seqlens_k, batch, k.shape(0), bad_cu_seqlens_k);
  Int kv_head = head / (q.shape(1) / k.shape(1));

  if_(m_block * BM < q_len, [&] {
    Int diagonal = k_len - q_len;
    Int n_blocks = (k_len + (BN - 1)) / BN;
    if (c.causal) n_blocks = min(n_blocks, max(Int(0), (m_block + 1) * BM + diagonal + (BN - 1)) / BN);

    IntTuple q_bound{q_len, D}, kv_bound{k_len, D};
    CoordTensor cQ = local_tile(make_identity_tensor(q_bound), IntTuple{BM, D}, IntTuple{m_block, 0});
    Tensor<T> gQ = local_tile(domain_offset(IntTuple{q_start, 0}, q(_, head, _)), IntTuple{BM, D}, IntTuple{m_block, 0});
    Tensor<T> gdO = local_tile(domain_offset(IntTuple{q_start, 0}, d_o(_, head, _)), IntTuple{BM, D}, IntTuple{m_block, 0});
    Tensor<T> gK = local_tile(domain_offset(IntTuple{k_start, 0}, k(_, kv_head, _)), IntTuple{BN, D}, IntTuple{_, 0});
    Tensor<T> gV = local_tile(domain_offset(IntTuple{k_start, 0}, v(_, kv_head, _)), IntTuple{BN, D}, IntTuple{_, 0});
    CoordTensor cKV = local_tile(make_identity_tensor(kv_bound), IntTuple{BN, D}, IntTuple{_, 0});
    const int64_t tile_bytes = int64_t(BM) * D * sizeof(T), step_bytes = int64_t(BN) * D * sizeof(T);
    Tensor<T> sQ = fmha80::shared_tile<T>(BM, D, 0), sdO = fmha80::shared_tile<T>(BM, D, tile_bytes);
    Tensor<T> sK = ring<T>(BN, D, 2 * tile_bytes), sV = ring<T>(BN, D, 2 * tile_bytes + 2 * step_bytes);

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

    auto tiled = make_tiled_mma(Op{}, make_layout({Config::warps, 1, 1}));
    auto thr = tiled.get_slice(t);
    auto ldsm_a = make_tiled_copy_A(LdMatrix<4>{}, tiled);
    auto ldsm_b = make_tiled_copy_B(LdMatrix<2>{}, tiled);
    auto ldsm_bt = make_tiled_copy_B(LdMatrix<2, true>{}, tiled);
    auto s2r_a = ldsm_a.get_slice(t), s2r_b = ldsm_b.get_slice(t), s2r_bt = ldsm_bt.get_slice(t);

    auto acc_dq = thr.partition_fragment_C({BM, D});
    for (int64_t i = 0; i < size(acc_dq.layout()).value(); ++i) acc_dq(IntTuple(i)) = 0.0f;
    // Each of this thread's rows (queries): its L (log2 units) and D, read once.
    CoordTensor row_coords = accumulator_rowcol(tiled, thr.partition_C(cQ));
    const int64_t rows = size(mode(row_coords.layout(), 0)).value();
    auto l2 = make_rmem_tensor<f32>(IntTuple{rows}), dl = make_rmem_tensor<f32>(IntTuple{rows});
    for (int64_t r = 0; r < rows; ++r) {
      Int query = coordinate<0>(row_coords(IntTuple(r), IntTuple(0)));
      l2(IntTuple(r)) = log2_lse(lse, head, q_start, query, q_len);
      dl(IntTuple(r)) = select(query < q_len, F32(delta(head, q_start + min(query, q_len - 1))), F32(0.0f));
    }
    CoordTensor scores = make_identity_tensor(IntTuple{q_len, k_len});  // (query, key)

    for_(0, n_blocks, 1, [&](Int n) {
      cp_async_wait<0>();
      sync_threads();
      if_(n + 1 < n_blocks, [&] { load(n + 1); });
      cp_async_fence();
      Int s = n % 2;
      Tensor<T> k_tile = sK(_, _, s), v_tile = sV(_, _, s);

      auto acc_s = thr.partition_fragment_C({BM, BN}), acc_dp = thr.partition_fragment_C({BM, BN});
      gemm_rows(tiled, thr, ldsm_a, s2r_a, ldsm_b, s2r_b, acc_s, sQ, BM, k_tile, BN, D);    // S = Q K^T
      gemm_rows(tiled, thr, ldsm_a, s2r_a, ldsm_b, s2r_b, acc_dp, sdO, BM, v_tile, BN, D);  // dP = dO V^T
      auto s_rows = accumulator_rowcol(tiled, acc_s), dp_rows = accumulator_rowcol(tiled, acc_dp);
      const int64_t cols = size(mode(s_rows.layout(), 1)).value();

      // Keys past the sequence, and (causal) past the diagonal: only in the blocks they touch.
      Bool partial = (n + 1) * BN > k_len;
      if (c.causal) partial = partial || (n + 1) * BN - 1 > m_block * BM + diagonal;
      if_(partial, [&] {
        CoordTensor cS = accumulator_rowcol(tiled, thr.partition_C(local_tile(scores, IntTuple{BM, BN}, IntTuple{m_block, n})));
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t col = 0; col < cols; ++col) {
            Int query = coordinate<0>(cS(IntTuple(r), IntTuple(col))), key = coordinate<1>(cS(IntTuple(r), IntTuple(col)));
            Bool keep = key < k_len;
            if (c.causal) keep = keep && key <= query + diagonal;
            s_rows(IntTuple(r), IntTuple(col)) = select(keep, F32(s_rows(IntTuple(r), IntTuple(col))), F32(-INFINITY));
          }
      });
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t col = 0; col < cols; ++col) {
          F32 p = fast::exp2(fma(F32(s_rows(IntTuple(r), IntTuple(col))), scale_log2, -F32(l2(IntTuple(r)))));
          dp_rows(IntTuple(r), IntTuple(col)) = p * (F32(dp_rows(IntTuple(r), IntTuple(col))) - F32(dl(IntTuple(r))));
        }

      // dQ += dS K, 16 keys at a time; K as (head_dim, keys).
      Tensor<T> k_t = fmha80::transposed(k_tile);
      for (int kk = 0; kk < BN / Op::k; ++kk) gemm_columns(tiled, thr, ldsm_bt, s2r_bt, acc_dq, a_slice<T>(tiled, acc_dp, kk), k_t, D, kk);
    });
    cp_async_wait<0>();

    Tensor<T> gdQ = local_tile(domain_offset(IntTuple{q_start, 0}, d_q(_, head, _)), IntTuple{BM, D}, IntTuple{m_block, 0});
    store_rows(thr, acc_dq, scale, cQ, q_bound, gdQ);
  });
}

}  // namespace fmha_bwd

/// The element type in a kernel's name.
template <Element T>
inline const char* fmha_type_name = std::is_same_v<T, bf16> ? "bf16" : "f16";

/// The backward's kernels for one element type.
template <Element T>
inline auto fmha_backward_dot = Kernel{std::string("fmha_bwd_dot_") + fmha_type_name<T>,
                                       [](Tensor<T> o, Tensor<T> d_o, Tensor<f32> delta, Constexpr<int> head_dim) {
                                         fmha_bwd::dot<T>(head_dim, o, d_o, delta);
                                       }};
template <Element T>
inline auto fmha_backward_dkdv =
    Kernel{std::string("fmha_bwd_dkdv_") + fmha_type_name<T>,
           [](Tensor<T> q, Tensor<T> k, Tensor<T> v, Tensor<T> d_o, Tensor<f32> lse, Tensor<f32> delta, Tensor<T> dk, Tensor<T> dv,
              Tensor<int32_t> cu_seqlens_q, Tensor<int32_t> cu_seqlens_k, F32 scale_log2, F32 scale, Constexpr<int> head_dim,
              Constexpr<int> causal) {
             fmha_bwd::dkdv<T>({.head_dim = head_dim, .causal = causal != 0}, q, k, v, d_o, lse, delta, dk, dv, cu_seqlens_q, cu_seqlens_k,
                               scale_log2, scale);
           }};
template <Element T>
inline auto fmha_backward_dq =
    Kernel{std::string("fmha_bwd_dq_") + fmha_type_name<T>,
           [](Tensor<T> q, Tensor<T> k, Tensor<T> v, Tensor<T> d_o, Tensor<f32> lse, Tensor<f32> delta, Tensor<T> d_q,
              Tensor<int32_t> cu_seqlens_q, Tensor<int32_t> cu_seqlens_k, F32 scale_log2, F32 scale, Constexpr<int> head_dim,
              Constexpr<int> causal) {
             fmha_bwd::dq<T>({.head_dim = head_dim, .causal = causal != 0}, q, k, v, d_o, lse, delta, d_q, cu_seqlens_q, cu_seqlens_k,
                             scale_log2, scale);
           }};

/// Throws a cutejit::Error at the caller's line unless the backward supports the problem: head
/// dims 64 and 128, no mask or causal (no sliding window, bottom-right aligned).
inline void check_backward(const FmhaProblem& p, detail::Where w = detail::Where::current()) {
  check_problem(p, {64, 128}, /*windows=*/false, "fmha_backward", w);
}

/// A prepared backward: the three kernels and the rowsum(dO * O) they pass (owned here).
struct BackwardLaunch {
  PreparedLaunch dot, dkdv, dq;
  Buffer<float> delta;
  void operator()() const {
    dot();
    dkdv();
    dq();
  }
  void operator()(StreamHandle stream) const {
    dot(stream);
    dkdv(stream);
    dq(stream);
  }
};

namespace fmha_bwd {
/// Throws a cutejit::Error at the caller's line unless every gradient buffer holds its tensor.
template <Element T>
void check_gradients(const FmhaProblem& p, const Buffer<T>& d_o, const Buffer<T>& d_q, const Buffer<T>& d_k, const Buffer<T>& d_v,
                     detail::Where w) {
  const size_t q_elems = size_t(p.total_q * p.heads * p.head_dim), kv_elems = size_t(p.total_k * p.kv_heads * p.head_dim);
  if (d_o.size() < q_elems || d_q.size() < q_elems || d_k.size() < kv_elems || d_v.size() < kv_elems)
    detail::fail("fmha_backward: a gradient buffer is smaller than the problem's tensors", w);
}

/// The rowsum(dO * O) kernel's launch, into `delta` (heads, total_q).
template <Element T>
PreparedLaunch prepare_dot(const Device& gpu, const FmhaProblem& p, const Buffer<T>& o, const Buffer<T>& d_o, const Buffer<f32>& delta) {
  const int64_t H = p.heads, D = p.head_dim;
  Launch l{.grid = {uint32_t(ceil_div(std::max<int64_t>(p.total_q, 1), 4)), uint32_t(H)}, .block = 128};
  return fmha_backward_dot<T>.prepare(gpu, l, o.view({p.total_q, H, D}), d_o.view({p.total_q, H, D}), delta.view({H, p.total_q}),
                                      Constexpr<int>{int(D)});
}
}  // namespace fmha_bwd

/// The launch of the backward on device buffers: q, o, d_o, d_q (total_q, heads, head_dim), k,
/// v, d_k, d_v (total_k, kv_heads, head_dim), lse (heads, total_q) as the forward wrote it,
/// cu_seqlens_q/k (batch + 1 offsets, from 0), all compact. The problem is checked first.
template <Element T>
  requires(std::is_same_v<T, bf16> || std::is_same_v<T, f16>)
BackwardLaunch fmha_backward_prepare(const Device& gpu, const FmhaProblem& p, const Buffer<T>& q, const Buffer<T>& k,
                                     const Buffer<T>& v, const Buffer<T>& o, const Buffer<T>& d_o, const Buffer<f32>& lse,
                                     const Buffer<int32_t>& cu_seqlens_q, const Buffer<int32_t>& cu_seqlens_k, const Buffer<T>& d_q,
                                     const Buffer<T>& d_k, const Buffer<T>& d_v, detail::Where w = detail::Where::current()) {
  check_backward(p, w);
  fmha80::check_buffers(p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, w);
  fmha_bwd::check_gradients(p, d_o, d_q, d_k, d_v, w);
  const fmha_bwd::Config c{.head_dim = int(p.head_dim), .causal = p.causal};
  const int64_t H = p.heads, Hk = p.kv_heads, D = p.head_dim;
  const float scale = p.softmax_scale > 0 ? p.softmax_scale : 1.0f / std::sqrt(float(D));
  auto qv = [&](const Buffer<T>& b) { return b.view({p.total_q, H, D}); };
  auto kv = [&](const Buffer<T>& b) { return b.view({p.total_k, Hk, D}); };
  BackwardLaunch l;
  l.delta = gpu.alloc<float>(size_t(std::max<int64_t>(H * p.total_q, 1)));
  auto delta = l.delta.view({H, p.total_q});
  l.dot = fmha_bwd::prepare_dot(gpu, p, o, d_o, l.delta);
  const int64_t max_k = p.max_seqlen_k > 0 ? p.max_seqlen_k : p.total_k;
  Launch dkdv{.grid = {uint32_t(ceil_div(std::max<int64_t>(max_k, 1), fmha_bwd::Config::tile)), uint32_t(Hk), uint32_t(p.batch)},
              .block = uint32_t(fmha_bwd::Config::threads),
              .shared_bytes = c.shared_bytes<T>(c.dkdv_step())};
  l.dkdv = fmha_backward_dkdv<T>.prepare(gpu, dkdv, qv(q), kv(k), kv(v), qv(d_o), lse.view({H, p.total_q}), delta, kv(d_k), kv(d_v),
                                         cu_seqlens_q.view({p.batch + 1}), cu_seqlens_k.view({p.batch + 1}), scale * float(M_LOG2E),
                                         scale, Constexpr<int>{c.head_dim}, Constexpr<int>{c.causal});
  Launch dq{.grid = {uint32_t(ceil_div(std::max<int64_t>(p.max_seqlen_q, 1), fmha_bwd::Config::tile)), uint32_t(H), uint32_t(p.batch)},
            .block = uint32_t(fmha_bwd::Config::threads),
            .shared_bytes = c.shared_bytes<T>(c.dq_step())};
  l.dq = fmha_backward_dq<T>.prepare(gpu, dq, qv(q), kv(k), kv(v), qv(d_o), lse.view({H, p.total_q}), delta, qv(d_q),
                                     cu_seqlens_q.view({p.batch + 1}), cu_seqlens_k.view({p.batch + 1}), scale * float(M_LOG2E), scale,
                                     Constexpr<int>{c.head_dim}, Constexpr<int>{c.causal});
  return l;
}

/// Host inputs of one backward: the forward's inputs, O and L from the float64 reference (O
/// rounded to T, L to f32), and a random dO.
template <Element T>
struct BackwardInputs {
  FmhaInputs<T> forward;
  std::vector<T> o, d_o;
  std::vector<float> lse;
};

template <Element T>
BackwardInputs<T> backward_inputs(FmhaInputs<T> forward, unsigned seed) {
  BackwardInputs<T> in;
  std::vector<double> o, lse;
  fmha_reference(forward, o, lse);
  for (double x : o) in.o.push_back(T(float(x)));
  for (double x : lse) in.lse.push_back(float(x));
  in.d_o = random_values<T>(o.size(), seed);
  in.forward = std::move(forward);
  return in;
}

/// The float64 reference gradients of the problem's masks (FmhaProblem::visible_keys), in the
/// layouts of Q, K and V: P and rowsum(dO * O) recomputed exactly, not from the rounded O and L.
template <Element T>
void backward_reference(const BackwardInputs<T>& in, std::vector<double>& dq, std::vector<double>& dk, std::vector<double>& dv) {
  const FmhaInputs<T>& f = in.forward;
  const FmhaProblem& p = f.problem;
  const int64_t H = p.heads, Hk = p.kv_heads, D = p.head_dim;
  const double scale = p.softmax_scale > 0 ? p.softmax_scale : 1.0 / std::sqrt(double(D));
  dq.assign(size_t(p.total_q * H * D), 0.0);
  dk.assign(size_t(p.total_k * Hk * D), 0.0);
  dv.assign(size_t(p.total_k * Hk * D), 0.0);
  auto at = [](const std::vector<T>& x, int64_t row, int64_t heads, int64_t h, int64_t D) { return &x[size_t((row * heads + h) * D)]; };
  std::vector<double> prob, dprob;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t q0 = f.cu_seqlens_q[b], sq = f.cu_seqlens_q[b + 1] - q0, k0 = f.cu_seqlens_k[b], sk = f.cu_seqlens_k[b + 1] - k0;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t hk = h / (H / Hk);
      for (int64_t i = 0; i < sq; ++i) {
        auto [first, last] = p.visible_keys(i, sq, sk);
        if (first > last) continue;
        const T* qi = at(f.q, q0 + i, H, h, D);
        const T* doi = at(in.d_o, q0 + i, H, h, D);
        prob.assign(size_t(last - first + 1), 0.0);
        dprob.assign(prob.size(), 0.0);
        double m = -INFINITY, sum = 0, delta = 0;
        for (int64_t j = first; j <= last; ++j) {
          const T* kj = at(f.k, k0 + j, Hk, hk, D);
          const T* vj = at(f.v, k0 + j, Hk, hk, D);
          double s = 0, dp = 0;
          for (int64_t d = 0; d < D; ++d) {
            s += double(float(qi[d])) * double(float(kj[d]));
            dp += double(float(doi[d])) * double(float(vj[d]));
          }
          prob[size_t(j - first)] = s * scale;
          dprob[size_t(j - first)] = dp;
          m = std::max(m, s * scale);
        }
        for (double& x : prob) sum += (x = std::exp(x - m));
        for (size_t j = 0; j < prob.size(); ++j) delta += (prob[j] /= sum) * dprob[j];
        for (int64_t j = first; j <= last; ++j) {
          const double pj = prob[size_t(j - first)], ds = pj * (dprob[size_t(j - first)] - delta);
          const T* kj = at(f.k, k0 + j, Hk, hk, D);
          double* dqi = &dq[size_t(((q0 + i) * H + h) * D)];
          double* dkj = &dk[size_t(((k0 + j) * Hk + hk) * D)];
          double* dvj = &dv[size_t(((k0 + j) * Hk + hk) * D)];
          for (int64_t d = 0; d < D; ++d) {
            dqi[d] += scale * ds * double(float(kj[d]));
            dkj[d] += scale * ds * double(float(qi[d]));
            dvj[d] += pj * double(float(doi[d]));
          }
        }
      }
    }
  }
}

/// The largest element-wise error of a gradient, |out - ref| / (rms(ref) + |ref|): relative to
/// the element, or to the tensor's typical size where the element is near 0; infinite where an
/// element was left unwritten (NaN).
template <Element T>
double gradient_error(const std::vector<T>& out, const std::vector<double>& ref) {
  double squares = 0, worst = 0;
  for (double x : ref) squares += x * x;
  const double rms = std::sqrt(squares / double(std::max<size_t>(ref.size(), 1)));
  for (size_t i = 0; i < ref.size(); ++i) {
    const double x = float(out[i]);
    worst = std::isnan(x) ? INFINITY : std::max(worst, std::abs(x - ref[i]) / (rms + std::abs(ref[i])));
  }
  return worst;
}

/// The errors of dQ, dK and dV, and whether a second run gave the same bits.
struct BackwardErrors {
  double dq = 0, dk = 0, dv = 0;
  bool deterministic = false;
  double worst() const { return std::max({dq, dk, dv}); }
};

/// Runs a backward on `in` twice with poisoned gradients; their errors against the float64
/// reference, and whether the two runs agree bit for bit. `prepare(q, k, v, o, d_o, lse,
/// cu_seqlens_q, cu_seqlens_k, d_q, d_k, d_v)` makes the launch on the buffers.
template <Element T, class Prepare>
BackwardErrors backward_check_with(const Device& gpu, const BackwardInputs<T>& in, Prepare&& prepare) {
  const FmhaProblem& p = in.forward.problem;
  check_seqlens(p, in.forward.cu_seqlens_q, in.forward.cu_seqlens_k);
  auto q = gpu.upload(in.forward.q), k = gpu.upload(in.forward.k), v = gpu.upload(in.forward.v);
  auto o = gpu.upload(in.o), d_o = gpu.upload(in.d_o), lse = gpu.upload(in.lse);
  auto cu_q = gpu.upload(in.forward.cu_seqlens_q), cu_k = gpu.upload(in.forward.cu_seqlens_k);
  auto poisoned = [&](size_t n) { return gpu.upload(std::vector<T>(n, T(NAN))); };
  auto d_q = poisoned(in.forward.q.size()), d_k = poisoned(in.forward.k.size()), d_v = poisoned(in.forward.v.size());
  auto launch = prepare(q, k, v, o, d_o, lse, cu_q, cu_k, d_q, d_k, d_v);
  launch();
  gpu.synchronize();
  auto first_q = d_q.to_host(), first_k = d_k.to_host(), first_v = d_v.to_host();
  launch();
  gpu.synchronize();
  auto same = [](const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](T x, T y) {
             return std::bit_cast<uint16_t>(x) == std::bit_cast<uint16_t>(y);
           });
  };
  std::vector<double> rq, rk, rv;
  backward_reference(in, rq, rk, rv);
  return {.dq = gradient_error(first_q, rq),
          .dk = gradient_error(first_k, rk),
          .dv = gradient_error(first_v, rv),
          .deterministic = same(first_q, d_q.to_host()) && same(first_k, d_k.to_host()) && same(first_v, d_v.to_host())};
}

/// The same for the mma.sync backward (fmha_backward_prepare).
template <Element T>
BackwardErrors backward_check(const Device& gpu, const BackwardInputs<T>& in) {
  return backward_check_with(gpu, in, [&](auto&&... buffers) { return fmha_backward_prepare(gpu, in.forward.problem, buffers...); });
}

/// Cross-compiles the backward's three kernels (dot, dK/dV, dQ) for target `t`.
template <Element T>
std::vector<CompiledKernel> backward_compile(const Target& t, const fmha_bwd::Config& c) {
  const int64_t D = c.head_dim;
  auto x = DeviceTensor<T>::for_compile({4096, 16, D}), kv = DeviceTensor<T>::for_compile({4096, 4, D});
  auto lse = DeviceTensor<f32>::for_compile({16, 4096});
  auto cu = DeviceTensor<int32_t>::for_compile({5});
  std::vector<CompiledKernel> kernels;
  kernels.push_back(fmha_backward_dot<T>.compile(t, x, x, lse, Constexpr<int>{c.head_dim}));
  kernels.push_back(fmha_backward_dkdv<T>.compile(t, x, kv, kv, x, lse, lse, kv, kv, cu, cu, 1.0f, 1.0f, Constexpr<int>{c.head_dim},
                                                  Constexpr<int>{c.causal}));
  kernels.push_back(fmha_backward_dq<T>.compile(t, x, kv, kv, x, lse, lse, x, cu, cu, 1.0f, 1.0f, Constexpr<int>{c.head_dim},
                                                Constexpr<int>{c.causal}));
  return kernels;
}

/// Four sequences of ragged lengths (as the forward's example), BF16, head dim 128, GQA 4:2,
/// causal: the worst error of dQ, dK and dV.
inline Example fmha_backward_example() {
  return {"fmha_bwd_dkdv_bf16",
          [](const Device& gpu) {
            auto in = backward_inputs(fmha_inputs<bf16>({77, 200, 1, 150}, {77, 260, 33, 40}, 4, 2, 128, true, 51), 55);
            BackwardErrors e = backward_check(gpu, in);
            return e.deterministic ? e.worst() : INFINITY;
          },
          [](const Target& t) { return backward_compile<bf16>(t, {.head_dim = 128, .causal = true})[1]; },
          4e-2,  // bf16's rounding of P, dS and O (tests/gpu/test_fmha_backward_gpu.cpp)
          {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_120a"}};
}

}  // namespace examples
