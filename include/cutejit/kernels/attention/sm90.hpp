// A FlashAttention-3-style forward on Hopper tensor cores (sm_90a):
//     O = softmax(scale * Q K^T) V, and the log-sum-exp of each row,
// for every (query block, head, sequence) of a batch of sequences of any length, sequence b
// being tokens cu_seqlens[b] ... cu_seqlens[b + 1] of the (tokens, heads, head_dim) tensors
// (fixed lengths are the case cu_seqlens = 0, S, 2 S, ...), or of dense (batch, seqlen, heads,
// head_dim) tensors of any strides: BSHD, BHSD, a fused QKV (fmha_sm90::Dense). H_q a multiple of
// H_kv (GQA/MQA, K and V read in place); head dims 64, 128 and 256. The problem is
// problem.hpp's. Masks: none, causal, or a sliding window
// (keys window_left before to window_right after the diagonal), aligned bottom-right
// (FlashAttention's) or top-left (PyTorch's is_causal).
//
// Warp-specialised, three warpgroups (384 threads) per CTA and 128 queries of one head:
//  - warpgroup 0, one thread: the producer. It gives up registers (setmaxnreg 24), loads the
//    CTA's Q tile with TMA (head_dim / 64 boxes of 128 rows x 64 columns, 128-byte swizzled,
//    out of a rank-3 tensor map over (tokens, heads, head_dim)), then streams the key blocks'
//    K and V tiles (the same boxes, of 128 keys; 64 at hd 256) into two rings of `stages`
//    stages (PipelineTmaAsync each, so that S = Q K^T of a block can start before its V lands);
//  - warpgroups 1 and 2: the consumers, queries 0-63 and 64-127 (setmaxnreg 240). For each
//    key block: S (f32) = Q K^T on wgmma with both operands in shared memory (K stored keys x
//    head_dim is B's N x K: K-major); the online softmax on S's registers (each row is 4 lanes
//    of a quad: accumulator_rowcol / accumulator_row_lanes), exp2 with the scale folded into
//    log2(e); P converted in registers and fed as wgmma's register A (accumulator_as_A),
//    O (64 x head_dim) += P V with V read MN-major (V stored keys x head_dim is B's K x N, one
//    64-column box per chunk). FA3's intra-warpgroup overlap: block j's S is issued, then
//    block j - 1's P V, and the softmax of block j runs while P V does. K's stage is freed as
//    soon as S is done, V's once P V is;
//  - only the blocks on a sequence's end, the diagonal or a window's edge are masked, and
//    blocks no query of the tile sees are never loaded; causal CTAs take the query blocks from
//    the last (the longest) to the first, so the longest run first;
//  - O / sum written from registers, predicated on the sequence's length, and the log-sum-exp
//    (natural log, -inf for a row that sees no key).
// Queries of a tile past the end of its sequence are the next sequence's rows (or zeros past
// the tensor) as TMA loads them: computed, never stored. Keys past it are masked, and V's rows
// there meet P = 0.
//
// FA3's ping-pong between the consumer warpgroups is Config::pingpong. Not yet FA3's: a
// persistent scheduler and a TMA-store epilogue (docs/attention.md).
#pragma once

#include <limits>

#include "cutejit/core/visibility.hpp"
#include "cutejit/cutejit.hpp"
#include "cutejit/pipeline/pipeline.hpp"
#include "cutejit/pipeline/shared_storage.hpp"
#include "cutejit/kernels/attention/online_softmax.hpp"
#include "cutejit/kernels/attention/problem.hpp"
#include "cutejit/kernels/attention/sequences.hpp"
#include "cutejit/kernels/attention/sm80.hpp"

namespace cutejit::kernels {

namespace fmha_sm90 {

/// Which keys a query sees: all of them; those up to its diagonal; those within a window of it
/// (the bounds are launch arguments). Both masked kinds skip the key blocks nobody in the tile sees.
enum class Mask { none, causal, window };

/// The kernel's static choices.
struct Config {
  int head_dim = 128;
  Mask mask = Mask::none;
  int tile_n = 128;  ///< keys per block
  int stages = 2;    ///< K (and V) blocks in flight
  /// FA3's intra-warpgroup overlap of block n's softmax with block n - 1's P V (else one block
  /// at a time).
  bool overlap = true;
  /// FA3's ping-pong: the two consumer warpgroups take turns issuing their MMAs, so that one's
  /// softmax runs while the other's MMAs do (with the overlap only).
  bool pingpong = false;
  static constexpr int tile_m = 128;  ///< two consumer warpgroups of 64 queries
  static constexpr int threads = 384;
  static constexpr int box_cols = 64;  ///< head_dim columns per TMA box: one 128-byte swizzle span of 2-byte elements
  // setmaxnreg moves registers between the warpgroups within the CTA's allocation at launch
  // (168 x 384): 24 x 128 + 240 x 256 is all of it, and a larger request never completes.
  static constexpr int producer_registers = 24, consumer_registers = 240;

  constexpr int boxes() const { return head_dim / box_cols; }
  constexpr int q_bytes() const { return tile_m * head_dim * 2; }
  constexpr int block_bytes() const { return tile_n * head_dim * 2; }  ///< one K or V stage
  /// Shared memory: Q's boxes (64 columns of head_dim each, side by side), K's ring and V's
  /// (stage s: its boxes side by side), all on the 128-byte swizzle's 1 KB pattern; Q's barrier,
  /// K's ring's barriers, V's.
  struct Shared {
    SharedStorage storage;
    SharedRegion<int8_t> q, k, v;
    SharedRegion<uint64_t> q_full, k_barriers, v_barriers;
  };
  constexpr Shared shared() const {
    Shared r;
    r.q = r.storage.take<int8_t>(tile_m * box_cols * 2, boxes(), 1024);
    r.k = r.storage.take<int8_t>(block_bytes(), stages, 1024);
    r.v = r.storage.take<int8_t>(block_bytes(), stages, 1024);
    r.q_full = r.storage.barriers(8);
    r.k_barriers = r.storage.barriers(PipelineTmaAsync::barrier_bytes(stages));
    r.v_barriers = r.storage.barriers(PipelineTmaAsync::barrier_bytes(stages));
    return r;
  }
  constexpr uint32_t shared_bytes() const { return shared().storage.bytes(); }
  friend constexpr bool operator==(const Config&, const Config&) = default;
  std::string name(const char* type) const {
    const char* masked = mask == Mask::causal ? "_causal" : mask == Mask::window ? "_window" : "";
    return std::string("fmha90_fwd_") + type + "_hd" + std::to_string(head_dim) + masked + "_" + std::to_string(tile_m) + "x" +
           std::to_string(tile_n) + "_s" + std::to_string(stages) + (overlap ? "" : "_serial") + (pingpong ? "_pingpong" : "");
  }
};

/// The configuration the launch picks for a head dim and mask: blocks of 128 keys, three stages at
/// hd 64 (there is room); at hd 256 blocks of 80 keys (FlashAttention-3's), so that O's 128
/// accumulators, S's 40 and P fit the consumers' 240 registers and two stages of K and V fit
/// beside Q (measured against 64 keys on the H200, 2026-12-04: +1 to +5% from S = 2k; 160 and
/// 176 keys at hd 128 were within 1% of 128 unmasked and slower causal). A window's bounds take
/// the registers that 80 keys would need beyond 64 (56 bytes of spills), so windows at hd 256
/// keep 64.
constexpr Config config_for(int head_dim, Mask mask) {
  return head_dim == 64    ? Config{64, mask, 128, 3}
         : head_dim == 128 ? Config{128, mask, 128, 2}
                           : Config{256, mask, mask == Mask::window ? 64 : 80, 2};
}
constexpr Config hd64 = config_for(64, Mask::none), hd128 = config_for(128, Mask::none), hd256 = config_for(256, Mask::none),
                 hd128_causal = config_for(128, Mask::causal);
static_assert(hd64.shared_bytes() <= 232448 && hd128.shared_bytes() <= 232448 && hd256.shared_bytes() <= 232448);
/// The same without the overlap, for comparison (tests/perf/bench_fmha.cpp).
constexpr Config hd64_serial{64, Mask::none, 128, 3, false}, hd128_serial{128, Mask::none, 128, 2, false},
    hd128_causal_serial{128, Mask::causal, 128, 2, false};
/// The same Config with or without ping-pong.
constexpr Config with_pingpong(Config c, bool on = true) {
  c.pingpong = on;
  return c;
}
/// The same Config with `keys` keys a block.
constexpr Config with_keys(Config c, int keys) {
  c.tile_n = keys;
  return c;
}
/// Whether the launch takes ping-pong: where a CTA has few key blocks (measured on the H200,
/// 2026-12-03, four runs each: S = 1k and 2k +2-6% at hd 64, 0-5% at hd 128, +0.5-2% at hd 256
/// causal), and not on longer sequences (at 8k -0.3 to -1% causal) or hd 256 unmasked (-0.3 to
/// -3.3%). Windows follow the causal mask's measurements.
constexpr bool pingpong_pays(int head_dim, Mask mask, int64_t max_seqlen_q) {
  return max_seqlen_q <= 2048 && (head_dim <= 128 || mask != Mask::none);
}

/// Where a batch's sequences lie. Packed: FlashAttention's varlen layout, sequence b the tokens
/// cu_q[b] ... cu_q[b + 1] (and cu_k's) of (tokens, heads, head_dim) tensors, an lse of (heads,
/// tokens). Dense: (batch, seqlen, heads, head_dim) tensors of any strides (BSHD, BHSD, a fused
/// QKV, padding), every sequence O's seqlen queries and `seqlen_k` keys, an lse of (batch,
/// heads, seqlen_q).
struct Packed {
  const Tensor<int32_t>& cu_q;
  const Tensor<int32_t>& cu_k;
};
struct Dense {
  Int seqlen_k;
};

/// A Config's compile-time part, what sets the MMA atoms, the shared memory and the pipeline:
/// its head dim, key block, stages and overlap. The mask and ping-pong are trace-time choices
/// inside one instantiation of the body, which every mask and ping-pong choice shares.
constexpr Config shape_of(Config c) {
  c.mask = Mask::none;
  c.pingpong = false;
  return c;
}

/// The kernel body for `config`, whose shape_of is S.
template <Element T, Config S, class Sequences>
CUTEJIT_LOCAL void forward_body(const Config& config, const TmaDescriptor<T>& q, const TmaDescriptor<T>& k, const TmaDescriptor<T>& v,
                                const Tensor<T>& o, const Tensor<f32>& lse, const Sequences& sequences, const Int& group,
                                const F32& scale_log2, const Int& window_left, const Int& window_right, const Int& top_left) {
  static_assert(S == shape_of(S));
  if (!(shape_of(config) == S))
    detail::fail("fmha_sm90::forward_body: the Config's shape is not the instantiation's", detail::Where::current());
  constexpr int D = S.head_dim, BM = S.tile_m, BN = S.tile_n, W = S.box_cols;
  constexpr bool dense = std::is_same_v<Sequences, Dense>;
  static_assert(D % W == 0 && BN % 16 == 0 && BN <= 256, "head_dim a multiple of 64; 16 to 256 keys per block");
  launch_bounds(S.threads, 1);
  Int tid = thread_idx().x;
  Int m_block = block_idx().x, head = block_idx().y, batch = block_idx().z;
  if (config.mask == Mask::causal) m_block = Int(grid_dim().x) - 1 - m_block;  // the longest query blocks first
  // (K and V are read by TMA, which fills what lies outside the tensor with zeros: the key
  // offsets cannot reach past it, and only O's writes need the query offsets bounded. Dense
  // sequences are modes of their own: TMA's zeros start where the sequence ends.)
  auto [q_start, q_len] = [&] {
    if constexpr (dense) return Sequence{Int(0), o.shape(1)};
    else return sequence(sequences.cu_q, batch, o.shape(0), bad_cu_seqlens_q);
  }();
  auto [k_start, k_len] = [&] {
    if constexpr (dense) return Sequence{Int(0), sequences.seqlen_k};
    else return sequence(sequences.cu_k, batch, Int(std::numeric_limits<int32_t>::max()), bad_cu_seqlens_k);
  }();
  Int kv_head = head / group;

  if_(m_block * BM < q_len, [&] {
    // Query i's diagonal is key i + diagonal: aligned bottom-right (the last query's is the last
    // key) or top-left (query i's is key i). Query i sees keys i + diagonal - left ... i +
    // diagonal + right: right is 0 for causal masks, and both bounds are the window's (a huge
    // number for none).
    Int diagonal = (k_len - q_len) * (Int(1) - top_left);
    Int right = config.mask == Mask::causal ? Int(0) : window_right, left = window_left;
    // Key blocks to visit: those holding a key some query of the tile sees.
    Int m0 = m_block * BM;
    Int n_begin = 0, n_end = (k_len + (BN - 1)) / BN;
    if (config.mask != Mask::none) n_end = min(n_end, (max(m0 + (BM - 1) + diagonal + right, Int(-1)) + BN) / BN);
    if (config.mask == Mask::window) n_begin = max(Int(0), m0 + diagonal - left) / BN;
    Int n_blocks = max(Int(0), n_end - n_begin);  // iteration j visits key block n_begin + j

    constexpr auto shared = S.shared();
    SharedMemory smem(shared.storage);
    auto q_box = [&](int b) { return smem.stage(shared.q.as<T>(), b); };
    auto k_stage = [&](const Int& s) { return smem.stage(shared.k.as<T>(), s); };
    auto v_stage = [&](const Int& s) { return smem.stage(shared.v.as<T>(), s); };
    // The tiles as their boxes of W columns of head_dim leave them, side by side: Q (BM x D) and a
    // K stage (BN x D) K-major, the A and B of S = Q K^T; a V stage as the MN-major B (D x BN) of
    // O += P V.
    auto q_tile = [&] { return make_tensor(q_box(0), wgmma_tile_layout<T>(WgmmaMajor::k, TmaSwizzle::bytes128, BM, D)); };
    auto k_tile = [&](const Int& s) { return make_tensor(k_stage(s), wgmma_tile_layout<T>(WgmmaMajor::k, TmaSwizzle::bytes128, BN, D)); };
    auto v_tile = [&](const Int& s) { return make_tensor(v_stage(s), wgmma_tile_layout<T>(WgmmaMajor::mn, TmaSwizzle::bytes128, D, BN)); };
    Pointer<uint64_t> q_full = smem[shared.q_full];
    PipelineTmaAsync k_ring(smem[shared.k_barriers], S.stages, /*consumers=*/2, S.block_bytes());
    PipelineTmaAsync v_ring(smem[shared.v_barriers], S.stages, 2, S.block_bytes());
    if_(tid == 0, [&] {
      mbarrier_init(q_full, 1);
      k_ring.init();
      v_ring.init();
      fence_mbarrier_init();
      q.prefetch();
      k.prefetch();
      v.prefetch();
    });
    sync_threads();

    if_(tid / 128 == 0, [&] {
      decrease_max_registers(S.producer_registers);
      if_(tid == 0, [&] {
        // A tile's coordinates in the tensor its map addresses, shaped (rows, head_dim) as the
        // tile lies in shared memory: (batch, token, head, column) dense, (token, head, column)
        // packed. tma_partition finds the boxes of W columns that fill it.
        auto tile_coords = [&](const Int& token, const Int& h, int rows) {
          if constexpr (dense) return domain_offset({batch, token, h, 0}, make_identity_tensor({1, rows, 1, D}))(0, _, 0, _);
          else return domain_offset({token, h, 0}, make_identity_tensor({rows, 1, D}))(_, 0, _);
        };
        mbarrier_arrive_expect_tx(q_full, S.q_bytes());
        for (const TmaBox<T>& box : tma_partition(q, q_tile(), tile_coords(q_start + m_block * BM, head, BM)).boxes())
          q.load(box.smem, q_full, box.coords);
        for_(0, n_blocks, [&](Int j) {
          PipelineState s = PipelineState::at(j, S.stages);
          CoordTensor keys = tile_coords(k_start + (n_begin + j) * BN, kv_head, BN);
          // K's and V's stages are both (BN, D) tiles of boxes side by side (V is read MN-major
          // by its MMA, but lies as TMA leaves it).
          auto load = [&](PipelineTmaAsync& ring, const TmaDescriptor<T>& map, const Pointer<T>& stage) {
            ring.producer_acquire(s);
            ring.load(map, tma_partition(map, make_tensor(stage, wgmma_tile_layout<T>(WgmmaMajor::k, TmaSwizzle::bytes128, BN, D)), keys), s);
            ring.producer_commit(s);
          };
          load(k_ring, k, k_stage(s.index));
          load(v_ring, v, v_stage(s.index));
        });
      });
    }).else_([&] {
      increase_max_registers(S.consumer_registers);
      Int t = tid - 128;  // in the consumer warpgroups' tilings
      Int half = t / 128;  // which 64 queries of the tile this warpgroup computes
      Bool leader = t % 128 == 0;
      // S (128 x BN) = Q K^T and O (128 x D) += P V, each tiled over the two warpgroups along M.
      auto mma_s = make_tiled_mma(WgmmaSS<T, BN>{}, make_layout({2, 1, 1}));
      auto mma_o = make_tiled_mma(WgmmaRS<T, D, WgmmaMajor::mn>{}, make_layout({2, 1, 1}));
      auto thr_s = mma_s.get_slice(t), thr_o = mma_o.get_slice(t);

      Tensor<float> acc_o = thr_o.partition_fragment_C({BM, D});
      fill(acc_o, 0.0f);
      // The accumulators as rows and columns: row r of acc_o, of each S and of cO is one query.
      auto o_rows = accumulator_rowcol(mma_o, acc_o);
      const int64_t rows = size(mode(o_rows.layout(), 0)).value(), o_cols = size(mode(o_rows.layout(), 1)).value();
      OnlineSoftmax online(rows, accumulator_row_lanes(mma_s));

      // The steps of iteration j (key block n_begin + j). S = Q K^T: wait for K's stage, issue
      // the MMAs (this warpgroup's 64 queries; 64 columns of head_dim per box, four k16 steps each).
      auto issue_s = [&](const Int& j) {
        PipelineState s = PipelineState::at(j, S.stages);
        Tensor<float> acc_s = thr_s.partition_fragment_C({BM, BN});
        fill(acc_s, 0.0f);
        k_ring.consumer_wait(s);
        wgmma_fence();
        for (int b = 0; b < S.boxes(); ++b)  // a box of W columns (four k16 steps) at a time
          cutejit::gemm(mma_s, acc_s, local_tile(q_tile(), {64, W}, {half, b}), local_tile(k_tile(s.index), {BN, W}, {0, b}));
        wgmma_commit_group();
        return acc_s;
      };
      // S has landed (after a wgmma_wait_group): K's stage is free.
      auto s_done = [&](const Int& j, const Tensor<float>& acc_s) {
        wgmma_fence_operands(acc_s);
        if_(leader, [&] { k_ring.consumer_release(PipelineState::at(j, S.stages)); });
      };
      // O += P V: P as wgmma's register A, V's stage as the MN-major B (chunks of 64 columns of
      // head_dim, BN keys each: the stage's boxes as they lie).
      auto issue_pv = [&](const Int& j, const Tensor<T>& p) {
        PipelineState s = PipelineState::at(j, S.stages);
        v_ring.consumer_wait(s);
        wgmma_fence();
        cutejit::gemm(mma_o, acc_o, p, v_tile(s.index));
        wgmma_commit_group();
      };
      auto pv_done = [&](const Int& j) {
        wgmma_fence_operands(acc_o);
        if_(leader, [&] { v_ring.consumer_release(PipelineState::at(j, S.stages)); });
      };
      // Masks block n's scores, then the online softmax: the new row maxima and sums, P =
      // exp2(S scale - max) in place of S, and the factor O's rows must be rescaled by.
      auto row_rescale = make_rmem_tensor<f32>(IntTuple{rows});
      auto softmax = [&](const Int& j, const Tensor<float>& acc_s) {
        Int n = n_begin + j;
        auto s_rows = accumulator_rowcol(mma_s, acc_s);
        // Keys past the sequence, and past the diagonal or outside the window, score -inf: only in
        // the blocks they touch (the first row's last key, the last row's first key).
        Bool partial = (n + 1) * BN > k_len;
        if (config.mask != Mask::none) partial = partial || (n + 1) * BN - 1 > m0 + diagonal + right;
        if (config.mask == Mask::window) partial = partial || n * BN < m0 + (BM - 1) + diagonal - left;
        if_(partial, [&] {
          CoordTensor cS = accumulator_rowcol(
              mma_s, thr_s.partition_C(local_tile(make_identity_tensor(IntTuple{q_len, k_len}), IntTuple{BM, BN}, IntTuple{m_block, n})));
          online.mask(s_rows, cS, [&](const Int& row, const Int& col) {
            Bool keep = col < k_len;
            if (config.mask != Mask::none) keep = keep && col <= row + diagonal + right;
            if (config.mask == Mask::window) keep = keep && col >= row + diagonal - left;
            return keep;
          });
        });
        for (int64_t r = 0; r < rows; ++r) row_rescale(IntTuple(r)) = online.update(s_rows, r, scale_log2);
      };
      auto rescale_o = [&] {
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < o_cols; ++c)
            o_rows(IntTuple(r), IntTuple(c)) = F32(o_rows(IntTuple(r), IntTuple(c))) * F32(row_rescale(IntTuple(r)));
      };

      mbarrier_wait(q_full, 0);
      if constexpr (!S.overlap) {
        // One block at a time: S, softmax, P V, each waiting for the one before.
        for_(0, n_blocks, [&](Int j) {
          Tensor<float> acc_s = issue_s(j);
          wgmma_wait_group(0);
          s_done(j, acc_s);
          softmax(j, acc_s);
          rescale_o();
          issue_pv(j, accumulator_as_A(mma_o, mma_s, acc_s));
          wgmma_wait_group(0);
          pv_done(j);
        });
      } else {
        // FA3's intra-warpgroup overlap: block n's S = Q K^T is issued, then block n - 1's
        // P V, and the softmax of block n runs while P V does; O is rescaled once P V lands.
        // P is carried from one iteration to the next in registers.
        Tensor<T> p = make_rmem_tensor<T>(IntTuple{8, 1, BN / 16});
        auto keep_p = [&](const Tensor<float>& acc_s) {
          Tensor<T> next = accumulator_as_A(mma_o, mma_s, acc_s);
          for (int64_t i = 0; i < size(next.layout()).value(); ++i) p(IntTuple(i)) = Value<T>(next(IntTuple(i)));
        };
        // With ping-pong, each warpgroup issues a group of MMAs (S of block 0; S of block j and
        // P V of block j - 1; P V of the last block) on its turn, named barrier 1 + half, and
        // then hands the turn over. Warpgroup 0 goes first; warpgroup 1 hands over after every
        // group but its last, so that each barrier sees as many arrivals as waits.
        auto take_turn = [&] {
          if (config.pingpong) named_barrier_sync(1 + half, 256);
        };
        auto pass_turn = [&] {
          if (config.pingpong) named_barrier_arrive(2 - half, 256);
        };
        if_(n_blocks > 0, [&] {
          if (config.pingpong) if_(half == 1, [&] { named_barrier_arrive(1, 256); });
          take_turn();
          Tensor<float> first = issue_s(Int(0));
          pass_turn();
          wgmma_wait_group(0);
          s_done(Int(0), first);
          softmax(Int(0), first);  // O is still 0: nothing to rescale
          keep_p(first);
          for_(1, n_blocks, [&](Int j) {
            take_turn();
            Tensor<float> acc_s = issue_s(j);
            issue_pv(j - 1, p);
            pass_turn();
            wgmma_wait_group(1);  // S of this block has landed; the last one's P V may still run
            s_done(j, acc_s);
            softmax(j, acc_s);
            wgmma_wait_group(0);
            pv_done(j - 1);
            rescale_o();
            keep_p(acc_s);
          });
          take_turn();
          issue_pv(n_blocks - 1, p);
          if (config.pingpong) if_(half == 0, [&] { named_barrier_arrive(2, 256); });
          wgmma_wait_group(0);
          pv_done(n_blocks - 1);
        });
      }

      // O / sum, in T, stored where it lies inside the sequence; the log-sum-exp by one lane per row.
      IntTuple q_bound{q_len, D};
      CoordTensor o_coords = thr_o.partition_C(local_tile(make_identity_tensor(q_bound), IntTuple{BM, D}, IntTuple{m_block, 0}));
      // The sequence's (queries, head_dim) of O at this head, and its (heads, queries) of the lse.
      auto [o_seq, lse_seq] = [&] {
        if constexpr (dense) return std::pair{o(batch, _, head, _), lse(batch, _, _)};
        else return std::pair{domain_offset(IntTuple{q_start, 0}, o(_, head, _)), lse};
      }();
      Tensor<T> gO = local_tile(o_seq, IntTuple{BM, D}, IntTuple{m_block, 0});
      CoordTensor row_coords = accumulator_rowcol(mma_o, o_coords);
      online.store(thr_o, acc_o, o_rows, o_coords, row_coords, q_bound, gO, lse_seq, t, head, q_start, q_len);
    });
  });
}

/// The forward kernel for Config C: the body of C's shape, traced with C's mask and ping-pong.
template <Element T, Config C, class Sequences>
CUTEJIT_LOCAL void forward(const TmaDescriptor<T>& q, const TmaDescriptor<T>& k, const TmaDescriptor<T>& v, const Tensor<T>& o, const Tensor<f32>& lse,
             const Sequences& sequences, const Int& group, const F32& scale_log2, const Int& window_left, const Int& window_right,
             const Int& top_left) {
  forward_body<T, shape_of(C)>(C, q, k, v, o, lse, sequences, group, scale_log2, window_left, window_right, top_left);
}


// ---- host side: the problems the kernel takes, its mask arguments, its configuration ----------

/// Throws a cutejit::Error at the caller's line unless the forward supports the problem: head
/// dims 64, 128 and 256, any mask, and at least one query and one key token in all (TMA maps no
/// empty tensor).
inline void check(const FmhaProblem& p, detail::Where w = detail::Where::current()) {
  check_problem(p, {64, 128, 256}, /*windows=*/true, "fmha_forward_sm90", w);
  if (p.total_q < 1 || p.total_k < 1)
    detail::fail("fmha_forward_sm90: needs at least one query and one key token in all (TMA maps no empty tensor), not " +
                     std::to_string(p.total_q) + " and " + std::to_string(p.total_k),
                 w);
}

/// The kernel's mask for a problem: a window when either bound is given, else causal or none.
inline Mask mask_of(const FmhaProblem& p) {
  if (p.window_left >= 0 || p.window_right >= 0) return Mask::window;
  return p.causal ? Mask::causal : Mask::none;
}
/// A window bound that bounds nothing: more keys than any sequence has, small enough that the
/// kernel's 32-bit key arithmetic cannot overflow.
inline constexpr int32_t unbounded = 1 << 30;

/// The mask's launch arguments (the kernels' window_left, window_right, top_left): the window's
/// bounds, `unbounded` where the problem gives none and right 0 when causal.
struct MaskArguments {
  int32_t left, right, top_left;
};
inline MaskArguments mask_arguments(const FmhaProblem& p) {
  return {int32_t(p.window_left >= 0 ? p.window_left : unbounded), int32_t(p.causal ? 0 : p.window_right >= 0 ? p.window_right : unbounded),
          int32_t(p.top_left)};
}

/// Calls `f.template operator()<C>()` with the Config of the problem's head dim and mask, with
/// ping-pong where it pays (pingpong_pays).
template <class F>
auto with_config(const FmhaProblem& p, F&& f) {
  const Mask mask = mask_of(p);
  auto pick = [&]<int D>() {
    auto go = [&]<Config C>() {
      if (pingpong_pays(D, C.mask, p.max_seqlen_q)) return f.template operator()<with_pingpong(C)>();
      return f.template operator()<C>();
    };
    if (mask == Mask::none) return go.template operator()<config_for(D, Mask::none)>();
    if (mask == Mask::causal) return go.template operator()<config_for(D, Mask::causal)>();
    return go.template operator()<config_for(D, Mask::window)>();
  };
  if (p.head_dim == 64) return pick.template operator()<64>();
  if (p.head_dim == 128) return pick.template operator()<128>();
  return pick.template operator()<256>();
}

/// Throws a cutejit::Error at the caller's line unless the dense tensors hold the problem (one
/// made by FmhaProblem::dense, which fmha_sm90::check accepts): q and o (batch, seqlen_q, heads,
/// head_dim), k and v (batch, seqlen_k, kv_heads, head_dim), lse (batch, heads, seqlen_q), in
/// that order of modes with any strides, except that TMA reads q, k and v: their head_dim is
/// contiguous, their other strides and their addresses multiples of 16 bytes. A window must be
/// shorter than a sequence's keys.
template <Element T>
void check_dense(const FmhaProblem& p, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v,
                 const DeviceTensor<T>& o, const DeviceTensor<f32>& lse, detail::Where w = detail::Where::current()) {
  check(p, w);
  auto bad = [&](const std::string& what) { detail::fail("fmha_forward_sm90 (dense): " + what, w); };
  const int64_t sq = p.max_seqlen_q, sk = p.max_seqlen_k;
  if (sq < 1 || sk < 1 || p.total_q != p.batch * sq || p.total_k != p.batch * sk)
    bad("a dense batch is `batch` sequences of seqlen_q queries and seqlen_k keys each, but the problem has " + std::to_string(p.total_q) +
        " queries and " + std::to_string(p.total_k) + " keys in " + std::to_string(p.batch) + " sequences of at most " + std::to_string(sq) +
        " and " + std::to_string(sk) + "; describe it with FmhaProblem::dense(batch, heads, kv_heads, head_dim, seqlen_q, seqlen_k)");
  if (p.window_left >= sk || p.window_right >= sk)
    bad("a window of " + std::to_string(std::max(p.window_left, p.window_right)) + " keys is as long as a sequence's " + std::to_string(sk) +
        " keys; give -1 for no bound");
  auto list = [](std::span<const int64_t> xs) {
    std::string s = "(";
    for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
    return s + ")";
  };
  auto check_shape = [&](const char* name, int rank, const int64_t* shape, std::initializer_list<int64_t> want, const char* modes) {
    std::span<const int64_t> given(shape, size_t(rank)), wanted(want.begin(), want.size());
    if (!std::equal(given.begin(), given.end(), wanted.begin(), wanted.end()))
      bad(std::string(name) + " is " + list(given) + ", but the problem's " + name + " " + modes + " is " + list(wanted));
  };
  const int64_t B = p.batch, H = p.heads, Hk = p.kv_heads, D = p.head_dim;
  check_shape("q", q.rank, q.shape.data(), {B, sq, H, D}, "(batch, seqlen_q, heads, head_dim)");
  check_shape("k", k.rank, k.shape.data(), {B, sk, Hk, D}, "(batch, seqlen_k, kv_heads, head_dim)");
  check_shape("v", v.rank, v.shape.data(), {B, sk, Hk, D}, "(batch, seqlen_k, kv_heads, head_dim)");
  check_shape("o", o.rank, o.shape.data(), {B, sq, H, D}, "(batch, seqlen_q, heads, head_dim)");
  check_shape("lse", lse.rank, lse.shape.data(), {B, H, sq}, "(batch, heads, seqlen_q)");
  const char* mode_names[] = {"batch", "seqlen", "heads", "head_dim"};
  for (auto [name, t] : {std::pair{"q", &q}, std::pair{"k", &k}, std::pair{"v", &v}}) {
    if (t->stride[3] != 1)
      bad(std::string(name) + "'s head_dim has stride " + std::to_string(t->stride[3]) + "; TMA reads it, so it must be contiguous (stride 1)");
    for (int m = 0; m < 3; ++m)
      if (t->stride[m] * int64_t(sizeof(T)) % 16 != 0)
        bad(std::string(name) + "'s " + mode_names[m] + " stride is " + std::to_string(t->stride[m]) + " elements (" +
            std::to_string(t->stride[m] * int64_t(sizeof(T))) + " bytes); TMA needs multiples of 16 bytes");
    if (t->ptr % 16 != 0) bad(std::string(name) + " starts " + std::to_string(t->ptr % 16) + " bytes past a 16-byte boundary; TMA needs it aligned");
  }
}

}  // namespace fmha_sm90

}  // namespace cutejit::kernels
