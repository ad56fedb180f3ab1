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

#include <bit>
#include <cmath>
#include <string>
#include <type_traits>

#include "cutejit/core/visibility.hpp"
#include "cutejit/cutejit.hpp"
#include "cutejit/pipeline/shared_storage.hpp"
#include "cutejit/kernels/attention/online_softmax.hpp"
#include "cutejit/kernels/attention/problem.hpp"
#include "cutejit/kernels/attention/sequences.hpp"

namespace cutejit::kernels {

namespace fmha_sm80 {

/// The kernel's static choices.
struct Config {
  int head_dim = 128;
  bool causal = false;
  int tile_m = 128, tile_n = 64, warps = 4;
  constexpr int threads() const { return 32 * warps; }
  /// Shared memory: Q's tile, then K's and V's.
  template <Element T>
  struct Shared {
    SharedStorage storage;
    SharedRegion<T> q, k, v;
  };
  template <Element T>
  constexpr Shared<T> shared() const {
    Shared<T> r;
    r.q = r.storage.template take<T>(tile_m * head_dim);
    r.k = r.storage.template take<T>(tile_n * head_dim);
    r.v = r.storage.template take<T>(tile_n * head_dim);
    return r;
  }
  template <Element T>
  constexpr uint32_t shared_bytes() const {
    return shared<T>().storage.bytes();
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
/// The same tile with its two modes swapped: V (keys, head_dim) as the B operand V^T (head_dim, keys).
template <Element T>
Tensor<T> transposed(const Tensor<T>& t) {
  return t.transform([](const Layout& l) { return SlicedLayout{make_layout(mode(l, 1), mode(l, 0)), 0}; });
}

/// A Config's compile-time part (head dim, tiles, warps); whether the mask is causal is a
/// trace-time choice inside one instantiation of the body, which both masks share.
constexpr Config shape_of(Config c) {
  c.causal = false;
  return c;
}

/// The kernel body for `config`, whose shape_of is S.
template <Element T, Config S>
CUTEJIT_LOCAL void forward_body(const Config& config, const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const Tensor<T>& o,
                                const Tensor<f32>& lse, const Tensor<int32_t>& cu_seqlens_q, const Tensor<int32_t>& cu_seqlens_k,
                                const F32& scale_log2) {
  static_assert(S == shape_of(S));
  if (!(shape_of(config) == S))
    detail::fail("fmha_sm80::forward_body: the Config's shape is not the instantiation's", detail::Where::current());
  using Op = Atom<T>;
  constexpr int D = S.head_dim, BM = S.tile_m, BN = S.tile_n;
  launch_bounds(S.threads());
  Int t = thread_idx().x;
  Int m_block = block_idx().x, head = block_idx().y, batch = block_idx().z;
  auto [q_start, q_len] = sequence(cu_seqlens_q, batch, q.shape(0), bad_cu_seqlens_q);
  auto [k_start, k_len] = sequence(cu_seqlens_k, batch, k.shape(0), bad_cu_seqlens_k);
  Int kv_head = head / (q.shape(1) / k.shape(1));

  if_(m_block * BM < q_len, [&] {
    // Key blocks to visit: all of them, or (causal) those up to this block's last row's diagonal.
    Int diagonal = k_len - q_len;  // query i sees keys j <= i + diagonal
    Int n_blocks = key_blocks_seen(m_block, BM, BN, q_len, k_len, config.causal);

    // This CTA's tiles in global memory (K and V: one per key block), with their coordinates.
    Tensor<T> gQ = local_tile(domain_offset(IntTuple{q_start, 0}, q(_, head, _)), IntTuple{BM, D}, IntTuple{m_block, 0});
    Tensor<T> gK = local_tile(domain_offset(IntTuple{k_start, 0}, k(_, kv_head, _)), IntTuple{BN, D}, IntTuple{_, 0});
    Tensor<T> gV = local_tile(domain_offset(IntTuple{k_start, 0}, v(_, kv_head, _)), IntTuple{BN, D}, IntTuple{_, 0});
    Tensor<T> gO = local_tile(domain_offset(IntTuple{q_start, 0}, o(_, head, _)), IntTuple{BM, D}, IntTuple{m_block, 0});
    IntTuple q_bound{q_len, D}, kv_bound{k_len, D};
    CoordTensor cQ = local_tile(make_identity_tensor(q_bound), IntTuple{BM, D}, IntTuple{m_block, 0});
    CoordTensor cKV = local_tile(make_identity_tensor(kv_bound), IntTuple{BN, D}, IntTuple{_, 0});
    constexpr auto shared = S.template shared<T>();
    SharedMemory smem(shared.storage);
    Tensor<T> sQ = make_tensor(smem[shared.q], tile_layout<T>(BM, D));
    Tensor<T> sK = make_tensor(smem[shared.k], tile_layout<T>(BN, D));
    Tensor<T> sV = make_tensor(smem[shared.v], tile_layout<T>(BN, D));

    // Global -> shared: each thread 16 bytes of a row, a row's threads side by side.
    auto g2s = make_tiled_copy(CpAsync<16>{}, make_ordered_layout({S.threads() / (D / 8), D / 8}, {1, 0}), make_layout({1, 8}));
    auto thr_g2s = g2s.get_slice(t);
    auto load_kv = [&](const Tensor<T>& g, const Tensor<T>& s, const Int& n) {
      copy_if(g2s, thr_g2s.partition_S(cKV(_, _, n)), kv_bound, thr_g2s.partition_S(g(_, _, n)), thr_g2s.partition_D(s));
    };
    copy_if(g2s, thr_g2s.partition_S(cQ), q_bound, thr_g2s.partition_S(gQ), thr_g2s.partition_D(sQ));
    load_kv(gK, sK, Int(0));
    cp_async_fence();

    // One TiledMma for both products: S (BM x BN) = Q K^T, then O (BM x D) += P V.
    auto tiled = make_tiled_mma(Op{}, make_layout({S.warps, 1, 1}));
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
      if (config.causal) partial = partial || (n + 1) * BN - 1 > m_block * BM + diagonal;
      if_(partial, [&] {
        CoordTensor cS = accumulator_rowcol(
            tiled, thr.partition_C(local_tile(make_identity_tensor(IntTuple{q_len, k_len}), IntTuple{BM, BN}, IntTuple{m_block, n})));
        softmax.mask(s_rows, cS, [&](const Int& row, const Int& col) {
          Bool keep = col < k_len;
          if (config.causal) keep = keep && col <= row + diagonal;
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

/// The forward kernel for Config C: the body of C's shape, traced with C's mask.
template <Element T, Config C>
CUTEJIT_LOCAL void forward(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const Tensor<T>& o, const Tensor<f32>& lse,
             const Tensor<int32_t>& cu_seqlens_q, const Tensor<int32_t>& cu_seqlens_k, const F32& scale_log2) {
  forward_body<T, shape_of(C)>(C, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, scale_log2);
}

/// The configurations the launch picks.
constexpr Config hd64{64, false, 128, 64}, hd64_causal{64, true, 128, 64}, hd128{128, false, 64, 64}, hd128_causal{128, true, 64, 64};

/// Throws a cutejit::Error at the caller's line unless the forward supports the problem.
inline void check(const FmhaProblem& p, detail::Where w = detail::Where::current()) {
  check_problem(p, {64, 128}, /*windows=*/false, "fmha_forward", w);
}

}  // namespace fmha_sm80

}  // namespace cutejit::kernels
