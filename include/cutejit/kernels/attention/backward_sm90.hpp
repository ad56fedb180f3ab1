// The attention backward on Hopper tensor cores (sm_90a): the products of backward_sm80.hpp on
// wgmma, warp-specialised as the Hopper forward (sm90.hpp) is. The same problem, inputs,
// outputs and determinism (no atomics); the rowsum(dO * O) kernel is backward_sm80.hpp's.
//
// Two kernels of three warpgroups (384 threads), one producer thread loading with TMA
// (setmaxnreg 24) and two consumer warpgroups of 64 rows each (setmaxnreg 240):
//  - dK and dV: a CTA per 128 keys of a key/value head. K and V are loaded once (head_dim / 64
//    boxes of 128 keys x 64 columns, 128-byte swizzled); Q and dO blocks of 64 queries, of
//    every query head of the group, stream through two rings (PipelineTmaAsync). Per block,
//    on wgmma with both operands in shared memory (all K-major): S^T = K Q^T and dP^T = V dO^T
//    (64 keys x 64 queries per warpgroup); P^T = exp2(S^T scale - L) and dS^T = P^T (dP^T - D)
//    in their registers, a column being a query, each query's L and D read from shared memory
//    (staged there a block ahead); then dV += P^T dO and dK += dS^T Q with P^T and dS^T as
//    wgmma's register A (accumulator_as_A) and dO, Q read MN-major where they lie.
//  - dQ: a CTA per 128 queries of a head, Q and dO loaded once, K and V blocks of 64 keys (128
//    at head dim 64) streaming: S = Q K^T and dP = dO V^T (SS), P and dS in registers, dQ += dS K with dS as
//    the register A and K read MN-major.
// Queries of a block past its sequence are the next sequence's rows (or zeros past the tensor)
// as TMA loads them: their L is taken as +inf, so P is 0 there; keys past it are masked in the
// dQ kernel and never stored by the dK/dV kernel. The forward's masks (sm90.hpp): none,
// causal, a sliding window, aligned bottom-right or top-left; the blocks no query or key of a
// tile sees are skipped by both kernels, and causal dQ CTAs take the longest query blocks first.
//
// The dQ kernel recomputes S and dP (7 products instead of 5). A version that added dQ into f32
// from the dK/dV kernel with TMA reduce-adds (5 products, FlashAttention-3's way, its last bits
// varying from run to run) measured 7-10% slower at head dim 128 and was not kept
// (docs/attention.md).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "cutejit/core/visibility.hpp"
#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/attention/backward_sm80.hpp"
#include "cutejit/kernels/attention/sm90.hpp"
#include "cutejit/pipeline/pipeline.hpp"
#include "cutejit/pipeline/shared_storage.hpp"

namespace cutejit::kernels {

namespace fmha_backward_sm90 {

/// The kernels' static choices, and their shared memory: two resident tiles (K and V, or Q and
/// dO), two rings of `stages` blocks (Q and dO, or K and V), and the barriers.
struct Config {
  int head_dim = 128;
  fmha_sm90::Mask mask = fmha_sm90::Mask::none;  ///< as the forward's: the window's bounds are launch arguments
  static constexpr int tile = 128;  ///< keys per dK/dV CTA, queries per dQ CTA: two warpgroups of 64
  int stages = 2;    ///< blocks in flight in each ring
  int queries = 64;  ///< queries per dK/dV block (32, 48 or 64)
  int dq_keys = 64;  ///< keys per dQ block (64 or 128)
  static constexpr int threads = 384, box_cols = 64;
  // As the forward's: 24 x 128 + 240 x 256 is the CTA's allocation at launch (168 x 384).
  static constexpr int producer_registers = 24, consumer_registers = 240;

  constexpr int dkdv_step() const { return queries; }
  constexpr int dq_step() const { return dq_keys; }
  constexpr int boxes() const { return head_dim / box_cols; }
  constexpr int tile_bytes() const { return tile * head_dim * 2; }
  constexpr int step_bytes(int step) const { return step * head_dim * 2; }
  /// The shared memory of a kernel whose rings hold blocks of `step` rows: the two resident
  /// tiles (their boxes of 128 rows side by side), two rings of `stages` blocks (a stage's boxes
  /// of `step` rows side by side), all on the 128-byte swizzle's 1 KB pattern; the resident
  /// tiles' barrier and each ring's; for the dK/dV kernel's consumer warpgroups two slots each of
  /// query statistics (the L2 and D, f32, of a block's `step` queries).
  struct Shared {
    SharedStorage storage;
    SharedRegion<int8_t> tiles;
    std::array<SharedRegion<int8_t>, 2> rings;
    SharedRegion<uint64_t> tiles_full;
    std::array<SharedRegion<uint64_t>, 2> ring_barriers;
    SharedRegion<f32> statistics;
  };
  constexpr Shared shared(int step) const {
    Shared r;
    r.tiles = r.storage.take<int8_t>(tile * box_cols * 2, 2 * boxes(), 1024);
    for (auto& ring : r.rings) ring = r.storage.take<int8_t>(step_bytes(step), stages, 1024);
    r.tiles_full = r.storage.barriers(8);
    for (auto& barriers : r.ring_barriers) barriers = r.storage.barriers(PipelineTmaAsync::barrier_bytes(stages));
    r.statistics = r.storage.take<f32>(2 * step, 2 * 2);
    return r;
  }
  constexpr uint32_t shared_bytes(int step) const { return shared(step).storage.bytes(); }
  friend constexpr bool operator==(const Config&, const Config&) = default;
  std::string name(const char* kernel, const char* type) const {
    // The knobs away from their defaults, so that no two configurations share a name.
    std::string knobs = (stages != 2 ? "_s" + std::to_string(stages) : "") + (queries != 64 ? "_q" + std::to_string(queries) : "") +
                        (dq_keys != 64 ? "_k" + std::to_string(dq_keys) : "");
    const char* masked = mask == fmha_sm90::Mask::causal ? "_causal" : mask == fmha_sm90::Mask::window ? "_window" : "";
    return std::string("fmha90_bwd_") + kernel + "_" + type + "_hd" + std::to_string(head_dim) + masked + knobs;
  }
};
/// 64 queries a dK/dV block at both head dims: with each query's L and D in shared memory
/// rather than 2 x 16 registers a thread, measured 13-27% faster than 32 at head dim 128 (H200,
/// 2026-12-04), though that leaves the consumers 8 to 12 registers short (32-48 bytes of
/// spills, an L1 load or two a block). At head dim 64 the dQ kernel takes 128 keys a block
/// (2-6% faster than 64); a third ring stage was within 2% or slower (docs/benchmarks.md).
constexpr Config config_for(int head_dim, fmha_sm90::Mask mask) { return head_dim == 64 ? Config{64, mask, 2, 64, 128} : Config{128, mask}; }
/// A Config's compile-time part (head dim, stages, block sizes); the mask is a trace-time choice
/// inside one instantiation of each kernel's body, which every mask shares.
constexpr Config shape_of(Config c) {
  c.mask = fmha_sm90::Mask::none;
  return c;
}
/// The same Config with `queries` queries a dK/dV block.
constexpr Config with_queries(Config c, int queries) {
  c.queries = queries;
  return c;
}
constexpr Config hd64 = fmha_backward_sm90::config_for(64, fmha_sm90::Mask::none),
                 hd64_causal = fmha_backward_sm90::config_for(64, fmha_sm90::Mask::causal),
                 hd128 = fmha_backward_sm90::config_for(128, fmha_sm90::Mask::none),
                 hd128_causal = fmha_backward_sm90::config_for(128, fmha_sm90::Mask::causal);

/// The keys query i sees, as the forward's (fmha_sm90::forward): i + low ... i + high, from the
/// diagonal (aligned bottom-right or, with top_left, top-left) a window's left bound before it
/// to its right bound after it (0 when causal). Two registers, not the forward's three: the
/// dK/dV consumers at head dim 128 have none to spare.
struct Visible {
  Int low, high;
  static Visible of(const Config& c, const Int& q_len, const Int& k_len, const Int& window_left, const Int& window_right,
                    const Int& top_left) {
    Int diagonal = (k_len - q_len) * (Int(1) - top_left);
    return {diagonal - window_left, diagonal + (c.mask == fmha_sm90::Mask::causal ? Int(0) : window_right)};
  }
  Bool keep(const Config& c, const Int& query, const Int& key) const {
    Bool keep = key <= query + high;
    if (c.mask == fmha_sm90::Mask::window) keep = keep && key >= query + low;
    return keep;
  }
  /// Whether a boundary crosses the tile of queries m0 ... m0 + bm - 1 and keys n0 ... n0 + bn - 1.
  Bool crosses(const Config& c, const Int& m0, int bm, const Int& n0, int bn) const {
    Bool crosses = n0 + (bn - 1) > m0 + high;
    if (c.mask == fmha_sm90::Mask::window) crosses = crosses || n0 < m0 + (bm - 1) + low;
    return crosses;
  }
};
static_assert(hd128.shared_bytes(hd128.dq_step()) <= 232448);

/// A kernel's view of its Config::shared(step): tile(0), tile(1), stage s of ring r, box by box;
/// the barriers; the statistics.
template <Element T>
class Smem {
 public:
  Smem(const Config& c, int step) : c_(c), step_(step), shared_(c.shared(step)), memory_(shared_.storage) {}

  Pointer<T> tile(int which, int box) const { return memory_.stage(shared_.tiles.template as<T>(), which * c_.boxes() + box); }
  Pointer<T> stage(int ring, const Int& s, int box = 0) const {
    return memory_.stage(shared_.rings[size_t(ring)].template as<T>(), s) + box * step_ * Config::box_cols;
  }
  /// The same as tensors in the layouts their boxes leave (wgmma's): resident tile `which` as
  /// (tile, head_dim) K-major; stage s of ring r as (step, head_dim) K-major, or MN-major as
  /// (head_dim, step), the B of a product over the block's rows.
  Tensor<T> tile(int which) const {
    return make_tensor(tile(which, 0), wgmma_tile_layout<T>(WgmmaMajor::k, TmaSwizzle::bytes128, Config::tile, c_.head_dim));
  }
  Tensor<T> stage(int ring, const Int& s, WgmmaMajor major) const {
    return make_tensor(stage(ring, s), major == WgmmaMajor::k ? wgmma_tile_layout<T>(major, TmaSwizzle::bytes128, step_, c_.head_dim)
                                                              : wgmma_tile_layout<T>(major, TmaSwizzle::bytes128, c_.head_dim, step_));
  }
  int step() const { return step_; }
  Pointer<uint64_t> tiles_full() const { return memory_[shared_.tiles_full]; }
  /// Warpgroup `half`'s slot `slot` of query statistics: `step` L2, then `step` D.
  Pointer<f32> statistics(const Int& half, const Int& slot) const { return memory_.stage(shared_.statistics, half * 2 + slot); }
  PipelineTmaAsync ring(int r) const {
    return PipelineTmaAsync(memory_[shared_.ring_barriers[size_t(r)]], c_.stages, /*consumers=*/2, c_.step_bytes(step_));
  }

 private:
  Config c_;
  int step_;
  Config::Shared shared_;
  SharedMemory memory_;
};

/// acc = A B^T over head_dim, A this warpgroup's 64 rows of a resident tile and B a ring's stage,
/// both K-major (one box of 64 columns, four k16 steps, at a time).
template <Element T, class Tiled>
void gemm_tile_stage(const Config& c, const Tiled& mma, const Tensor<float>& acc, const Smem<T>& smem, int tile, const Int& half,
                     int ring, const Int& stage) {
  wgmma_fence();
  // Box by box, and the box before the warpgroup's rows (a constant offset, then a run-time
  // one): descriptors computed that way keep fewer values live than one base and constant
  // steps, which spilled 8 to 32 more bytes.
  for (int b = 0; b < c.boxes(); ++b)
    cutejit::gemm(mma, acc, local_tile(local_tile(smem.tile(tile), {Config::tile, Config::box_cols}, {0, b}), {64, Config::box_cols}, {half, 0}),
                  local_tile(smem.stage(ring, stage, WgmmaMajor::k), {smem.step(), Config::box_cols}, {0, b}));
  wgmma_commit_group();
}

/// The producer: one thread loads the two resident tiles, whose first row is `tile_at()` (a
/// (token, head) of the tensor maps), then for each of `steps` blocks the two rings' stages,
/// whose first row is `step_at(i)`; tma_partition finds the boxes of 64 columns that fill each.
template <Element T, class TileAt, class StepAt>
CUTEJIT_LOCAL void produce(const Config& c, const Smem<T>& smem, const TmaDescriptor<T>& tile0, const TmaDescriptor<T>& tile1,
             const TmaDescriptor<T>& ring0, const TmaDescriptor<T>& ring1, const Int& steps, TileAt&& tile_at, StepAt&& step_at) {
  // The coordinates of `rows` rows of head_dim from (token, head) in a (token, head, column) tensor.
  auto coords = [&](const std::pair<Int, Int>& at, int rows) {
    return domain_offset({at.first, at.second, 0}, make_identity_tensor({rows, 1, c.head_dim}))(_, 0, _);
  };
  PipelineTmaAsync r0 = smem.ring(0), r1 = smem.ring(1);
  mbarrier_arrive_expect_tx(smem.tiles_full(), 2 * c.tile_bytes());
  CoordTensor tile = coords(tile_at(), Config::tile);
  TmaPartition<T> boxes0 = tma_partition(tile0, smem.tile(0), tile), boxes1 = tma_partition(tile1, smem.tile(1), tile);
  for (int b = 0; b < boxes0.size(); ++b) {
    tile0.load(boxes0[b].smem, smem.tiles_full(), boxes0[b].coords);
    tile1.load(boxes1[b].smem, smem.tiles_full(), boxes1[b].coords);
  }
  for_(0, steps, [&](Int i) {
    PipelineState s = PipelineState::at(i, c.stages);
    CoordTensor block = coords(step_at(i), smem.step());
    auto load = [&](PipelineTmaAsync& ring, const TmaDescriptor<T>& map, int which) {
      ring.producer_acquire(s);
      ring.load(map, tma_partition(map, smem.stage(which, s.index, WgmmaMajor::k), block), s);
      ring.producer_commit(s);
    };
    load(r0, ring0, 0);
    load(r1, ring1, 1);
  });
}

/// Barriers, then the producer warpgroup (thread 0 runs `producer`) and the consumers
/// (`consumer(t, half, leader)`, t the thread in the two consumer warpgroups).
template <Element T, class Producer, class Consumer>
CUTEJIT_LOCAL void specialise(const Config& c, const Smem<T>& smem, std::initializer_list<const TmaDescriptor<T>*> maps, Producer&& producer,
                Consumer&& consumer) {
  Int tid = thread_idx().x;
  if_(tid == 0, [&] {
    mbarrier_init(smem.tiles_full(), 1);
    smem.ring(0).init();
    smem.ring(1).init();
    fence_mbarrier_init();
    for (const TmaDescriptor<T>* m : maps) m->prefetch();
  });
  sync_threads();
  if_(tid / 128 == 0, [&] {
    decrease_max_registers(Config::producer_registers);
    if_(tid == 0, [&] { producer(); });
  }).else_([&] {
    increase_max_registers(Config::consumer_registers);
    Int t = tid - 128;
    consumer(t, t / 128, t % 128 == 0);
  });
}

/// dK and dV of 128 keys of one key/value head (grid: key blocks x kv_heads x batch), for
/// `config`, whose shape_of is S.
template <Element T, Config S>
CUTEJIT_LOCAL void dkdv_body(const Config& config, const TmaDescriptor<T>& q, const TmaDescriptor<T>& k, const TmaDescriptor<T>& v,
          const TmaDescriptor<T>& d_o, const Tensor<f32>& lse, const Tensor<f32>& delta, const Tensor<T>& dk, const Tensor<T>& dv,
          const Tensor<int32_t>& cu_seqlens_q, const Tensor<int32_t>& cu_seqlens_k, const Int& group, const F32& scale_log2, const F32& scale,
          const Int& window_left, const Int& window_right, const Int& top_left) {
  static_assert(S == shape_of(S));
  if (!(shape_of(config) == S))
    detail::fail("fmha_backward_sm90::dkdv_body: the Config's shape is not the instantiation's", detail::Where::current());
  constexpr int D = S.head_dim, BN = Config::tile, BM = S.dkdv_step();
  launch_bounds(Config::threads, 1);
  Int n_block = block_idx().x, kv_head = block_idx().y, batch = block_idx().z;
  auto [q_start, q_len] = sequence(cu_seqlens_q, batch, delta.shape(1), bad_cu_seqlens_q);
  auto [k_start, k_len] = sequence(cu_seqlens_k, batch, dk.shape(0), bad_cu_seqlens_k);

  if_(n_block * BN < k_len, [&] {
    // Query blocks: those holding a query that sees a key of this block (the first key's from
    // the diagonal and a right bound, the last key's up to a left bound); block i is query
    // block m_begin + i % per_head of the group's head i / per_head.
    Visible visible = Visible::of(config, q_len, k_len, window_left, window_right, top_left);
    Int n0 = n_block * BN;
    Int m_blocks = (q_len + (BM - 1)) / BM, m_begin = 0, m_end = m_blocks;
    if (config.mask != fmha_sm90::Mask::none) m_begin = min(m_blocks, max(Int(0), n0 - visible.high) / BM);
    if (config.mask == fmha_sm90::Mask::window) m_end = min(m_blocks, max(Int(0), n0 + (BN - 1) - visible.low + BM) / BM);
    Int per_head = max(Int(0), m_end - m_begin), steps = per_head * group;
    auto step_head = [&](const Int& i) { return kv_head * group + i / per_head; };
    auto step_block = [&](const Int& i) { return m_begin + i % per_head; };

    Smem<T> smem(S, BM);
    specialise<T>(
        S, smem, {&q, &k, &v, &d_o},
        [&] {
          produce<T>(
              S, smem, k, v, q, d_o, steps, [&] { return std::pair<Int, Int>{k_start + n_block * BN, kv_head}; },
              [&](const Int& i) { return std::pair<Int, Int>{q_start + step_block(i) * BM, step_head(i)}; });
        },
        [&](const Int& t, const Int& half, const Bool& leader) {
          // S^T, dP^T (128 keys x 64 queries) and dV, dK (128 keys x head_dim), over the two warpgroups.
          auto mma_s = make_tiled_mma(WgmmaSS<T, BM>{}, make_layout({2, 1, 1}));
          auto mma_kv = make_tiled_mma(WgmmaRS<T, D, WgmmaMajor::mn>{}, make_layout({2, 1, 1}));
          auto thr_s = mma_s.get_slice(t), thr_kv = mma_kv.get_slice(t);
          Tensor<float> acc_dk = thr_kv.partition_fragment_C({BN, D}), acc_dv = thr_kv.partition_fragment_C({BN, D});
          fill(acc_dk, 0.0f);
          fill(acc_dv, 0.0f);
          PipelineTmaAsync q_ring = smem.ring(0), do_ring = smem.ring(1);
          CoordTensor scores = make_identity_tensor(IntTuple{k_len, q_len});  // (key, query)

          // The queries' L (log2 units) and D go through shared memory, not registers (each
          // thread's columns would hold 2 x BM / 4 of them for the whole block): thread r of the
          // warpgroup fetches block i + 1's L2 (r < BM) or D (BM <= r < 2 BM) while block i runs
          // and stores it into the warpgroup's other slot, published by named barrier 1 + half.
          static_assert(2 * BM <= 128, "a warpgroup's thread per statistic");
          Int r = t % 128;
          auto fetch = [&](const Int& i) {
            Int query = step_block(i) * BM + r % BM, head = step_head(i);
            return select(r < BM, fmha_backward_sm80::log2_lse(lse, head, q_start, query, q_len), fmha_backward_sm80::query_delta(delta, head, q_start, query, q_len));
          };
          auto publish = [&](const Int& i, const F32& value) {
            if_(r < 2 * BM, [&] { smem.statistics(half, i % 2)[r] = value; });
          };
          // Each column's query's statistic (0: L2, 1: D) from the slot, where it is needed.
          auto column_statistics = [&](const CoordTensor& cS, const Int& m, const Int& slot, int which) {
            auto values = make_rmem_tensor<f32>(IntTuple{size(mode(cS.layout(), 1)).value()});
            for (int64_t c = 0; c < size(values.layout()).value(); ++c)
              values(IntTuple(c)) = F32(smem.statistics(half, slot)[which * BM + coordinate<1>(cS(IntTuple(0), IntTuple(c))) - m * BM]);
            return values;
          };
          if_(steps > 0, [&] { publish(Int(0), fetch(Int(0))); });
          mbarrier_wait(smem.tiles_full(), 0);

          for_(0, steps, [&](Int i) {
            PipelineState s = PipelineState::at(i, S.stages);
            Int m = step_block(i), slot = i % 2;
            Tensor<float> acc_s = thr_s.partition_fragment_C({BN, BM}), acc_dp = thr_s.partition_fragment_C({BN, BM});
            fill(acc_s, 0.0f);
            fill(acc_dp, 0.0f);
            q_ring.consumer_wait(s);
            gemm_tile_stage(S, mma_s, acc_s, smem, 0, half, 0, s.index);  // S^T = K Q^T
            do_ring.consumer_wait(s);
            gemm_tile_stage(S, mma_s, acc_dp, smem, 1, half, 1, s.index);  // dP^T = V dO^T
            named_barrier_sync(Int(1) + half, Int(128));  // this block's statistics are in `slot`
            F32 next = fetch(min(i + 1, steps - 1));

            auto s_rows = accumulator_rowcol(mma_s, acc_s), dp_rows = accumulator_rowcol(mma_s, acc_dp);
            CoordTensor cS = accumulator_rowcol(mma_s, thr_s.partition_C(local_tile(scores, IntTuple{BN, BM}, IntTuple{n_block, m})));

            // P^T, masked where the diagonal or a window's edge crosses the block, then dV += P^T dO.
            wgmma_wait_group(1);
            wgmma_fence_operands(acc_s);
            if (config.mask != fmha_sm90::Mask::none)
              if_(visible.crosses(config, m * BM, BM, n0, BN),
                  [&] { mask_scores(s_rows, cS, [&](const Int& key, const Int& query) { return visible.keep(config, query, key); }); });
            fmha_backward_sm80::probabilities(s_rows, column_statistics(cS, m, slot, 0), 1, scale_log2);
            wgmma_fence();
            cutejit::gemm(mma_kv, acc_dv, accumulator_as_A(mma_kv, mma_s, acc_s),
                          smem.stage(1, s.index, WgmmaMajor::mn));
            wgmma_commit_group();

            // dS^T = P^T (dP^T - D) while dV runs, then dK += dS^T Q.
            wgmma_wait_group(1);
            wgmma_fence_operands(acc_dp);
            fmha_backward_sm80::score_gradients(s_rows, dp_rows, column_statistics(cS, m, slot, 1), 1);
            wgmma_fence();
            cutejit::gemm(mma_kv, acc_dk, accumulator_as_A(mma_kv, mma_s, acc_dp),
                          smem.stage(0, s.index, WgmmaMajor::mn));
            wgmma_commit_group();
            wgmma_wait_group(0);
            wgmma_fence_operands(acc_dv);
            wgmma_fence_operands(acc_dk);
            if_(leader, [&] {
              q_ring.consumer_release(s);
              do_ring.consumer_release(s);
            });
            publish(i + 1, next);  // into the slot block i - 1 used, which every thread is past
          });

          IntTuple kv_bound{k_len, D};
          CoordTensor cOut = local_tile(make_identity_tensor(kv_bound), IntTuple{BN, D}, IntTuple{n_block, 0});
          Tensor<T> gdK = local_tile(domain_offset(IntTuple{k_start, 0}, dk(_, kv_head, _)), IntTuple{BN, D}, IntTuple{n_block, 0});
          Tensor<T> gdV = local_tile(domain_offset(IntTuple{k_start, 0}, dv(_, kv_head, _)), IntTuple{BN, D}, IntTuple{n_block, 0});
          fmha_backward_sm80::store_rows(thr_kv, acc_dk, scale, cOut, kv_bound, gdK);
          fmha_backward_sm80::store_rows(thr_kv, acc_dv, F32(1.0f), cOut, kv_bound, gdV);
        });
  });
}

/// dK and dV for Config C: the body of C's shape, traced with C's mask.
template <Element T, Config C>
CUTEJIT_LOCAL void dkdv(const TmaDescriptor<T>& q, const TmaDescriptor<T>& k, const TmaDescriptor<T>& v, const TmaDescriptor<T>& d_o,
          const Tensor<f32>& lse, const Tensor<f32>& delta, const Tensor<T>& dk, const Tensor<T>& dv, const Tensor<int32_t>& cu_seqlens_q,
          const Tensor<int32_t>& cu_seqlens_k, const Int& group, const F32& scale_log2, const F32& scale, const Int& window_left,
          const Int& window_right, const Int& top_left) {
  dkdv_body<T, shape_of(C)>(C, q, k, v, d_o, lse, delta, dk, dv, cu_seqlens_q, cu_seqlens_k, group, scale_log2, scale, window_left,
                            window_right, top_left);
}

/// dQ of 128 queries of one head (grid: query blocks x heads x batch), for `config`, whose
/// shape_of is S.
template <Element T, Config S>
CUTEJIT_LOCAL void dq_body(const Config& config, const TmaDescriptor<T>& q, const TmaDescriptor<T>& k, const TmaDescriptor<T>& v,
        const TmaDescriptor<T>& d_o, const Tensor<f32>& lse, const Tensor<f32>& delta, const Tensor<T>& d_q, const Tensor<int32_t>& cu_seqlens_q,
        const Tensor<int32_t>& cu_seqlens_k, const Int& group, const F32& scale_log2, const F32& scale, const Int& window_left,
        const Int& window_right, const Int& top_left) {
  static_assert(S == shape_of(S));
  if (!(shape_of(config) == S))
    detail::fail("fmha_backward_sm90::dq_body: the Config's shape is not the instantiation's", detail::Where::current());
  constexpr int D = S.head_dim, BM = Config::tile, BN = S.dq_step();
  launch_bounds(Config::threads, 1);
  Int m_block = block_idx().x, head = block_idx().y, batch = block_idx().z;
  if (config.mask == fmha_sm90::Mask::causal) m_block = Int(grid_dim().x) - 1 - m_block;  // the longest query blocks first
  auto [q_start, q_len] = sequence(cu_seqlens_q, batch, d_q.shape(0), bad_cu_seqlens_q);
  // (K and V are read by TMA, which fills what lies outside the tensor with zeros.)
  auto [k_start, k_len] = sequence(cu_seqlens_k, batch, Int(std::numeric_limits<int32_t>::max()), bad_cu_seqlens_k);
  Int kv_head = head / group;

  if_(m_block * BM < q_len, [&] {
    // Key blocks: those holding a key some query of the tile sees (as the forward's).
    Visible visible = Visible::of(config, q_len, k_len, window_left, window_right, top_left);
    Int m0 = m_block * BM;
    Int n_begin = 0, n_end = (k_len + (BN - 1)) / BN;
    if (config.mask != fmha_sm90::Mask::none) n_end = min(n_end, (max(m0 + (BM - 1) + visible.high, Int(-1)) + BN) / BN);
    if (config.mask == fmha_sm90::Mask::window) n_begin = max(Int(0), m0 + visible.low) / BN;
    Int n_blocks = max(Int(0), n_end - n_begin);  // iteration j visits key block n_begin + j

    Smem<T> smem(S, BN);
    specialise<T>(
        S, smem, {&q, &k, &v, &d_o},
        [&] {
          produce<T>(
              S, smem, q, d_o, k, v, n_blocks, [&] { return std::pair<Int, Int>{q_start + m_block * BM, head}; },
              [&](const Int& j) { return std::pair<Int, Int>{k_start + (n_begin + j) * BN, kv_head}; });
        },
        [&](const Int& t, const Int& half, const Bool& leader) {
          // S, dP (128 queries x BN keys) and dQ (128 queries x head_dim), over the two warpgroups.
          auto mma_s = make_tiled_mma(WgmmaSS<T, BN>{}, make_layout({2, 1, 1}));
          auto mma_q = make_tiled_mma(WgmmaRS<T, D, WgmmaMajor::mn>{}, make_layout({2, 1, 1}));
          auto thr_s = mma_s.get_slice(t), thr_q = mma_q.get_slice(t);
          Tensor<float> acc_dq = thr_q.partition_fragment_C({BM, D});
          fill(acc_dq, 0.0f);
          PipelineTmaAsync k_ring = smem.ring(0), v_ring = smem.ring(1);
          CoordTensor scores = make_identity_tensor(IntTuple{q_len, k_len});  // (query, key)
          // Each of this thread's rows (queries): its L (log2 units) and D, read once.
          auto [l2, dl] = fmha_backward_sm80::query_statistics(
              accumulator_rowcol(mma_s, thr_s.partition_C(local_tile(scores, IntTuple{BM, BN}, IntTuple{m_block, 0}))), 0, lse, delta,
              head, q_start, q_len);
          mbarrier_wait(smem.tiles_full(), 0);

          for_(0, n_blocks, [&](Int j) {
            PipelineState s = PipelineState::at(j, S.stages);
            Int n = n_begin + j;
            Tensor<float> acc_s = thr_s.partition_fragment_C({BM, BN}), acc_dp = thr_s.partition_fragment_C({BM, BN});
            fill(acc_s, 0.0f);
            fill(acc_dp, 0.0f);
            k_ring.consumer_wait(s);
            gemm_tile_stage(S, mma_s, acc_s, smem, 0, half, 0, s.index);  // S = Q K^T
            v_ring.consumer_wait(s);
            gemm_tile_stage(S, mma_s, acc_dp, smem, 1, half, 1, s.index);  // dP = dO V^T
            auto s_rows = accumulator_rowcol(mma_s, acc_s), dp_rows = accumulator_rowcol(mma_s, acc_dp);

            // P, masked where the sequence's end, the diagonal or a window's edge crosses the block.
            wgmma_wait_group(1);
            wgmma_fence_operands(acc_s);
            Bool partial = (n + 1) * BN > k_len;
            if (config.mask != fmha_sm90::Mask::none) partial = partial || visible.crosses(config, m0, BM, n * BN, BN);
            if_(partial, [&] {
              CoordTensor cS = accumulator_rowcol(mma_s, thr_s.partition_C(local_tile(scores, IntTuple{BM, BN}, IntTuple{m_block, n})));
              mask_scores(s_rows, cS, [&](const Int& query, const Int& key) {
                Bool keep = key < k_len;
                if (config.mask != fmha_sm90::Mask::none) keep = keep && visible.keep(config, query, key);
                return keep;
              });
            });

            // dS = P (dP - D): V's stage is free once dP has landed.
            wgmma_wait_group(0);
            wgmma_fence_operands(acc_dp);
            if_(leader, [&] { v_ring.consumer_release(s); });
            fmha_backward_sm80::probabilities(s_rows, l2, 0, scale_log2);
            fmha_backward_sm80::score_gradients(s_rows, dp_rows, dl, 0);

            // dQ += dS K, then K's stage is free.
            wgmma_fence();
            cutejit::gemm(mma_q, acc_dq, accumulator_as_A(mma_q, mma_s, acc_dp),
                          smem.stage(0, s.index, WgmmaMajor::mn));
            wgmma_commit_group();
            wgmma_wait_group(0);
            wgmma_fence_operands(acc_dq);
            if_(leader, [&] { k_ring.consumer_release(s); });
          });

          IntTuple q_bound{q_len, D};
          CoordTensor cOut = local_tile(make_identity_tensor(q_bound), IntTuple{BM, D}, IntTuple{m_block, 0});
          Tensor<T> gdQ = local_tile(domain_offset(IntTuple{q_start, 0}, d_q(_, head, _)), IntTuple{BM, D}, IntTuple{m_block, 0});
          fmha_backward_sm80::store_rows(thr_q, acc_dq, scale, cOut, q_bound, gdQ);
        });
  });
}

/// dQ for Config C: the body of C's shape, traced with C's mask.
template <Element T, Config C>
CUTEJIT_LOCAL void dq(const TmaDescriptor<T>& q, const TmaDescriptor<T>& k, const TmaDescriptor<T>& v, const TmaDescriptor<T>& d_o,
        const Tensor<f32>& lse, const Tensor<f32>& delta, const Tensor<T>& d_q, const Tensor<int32_t>& cu_seqlens_q,
        const Tensor<int32_t>& cu_seqlens_k, const Int& group, const F32& scale_log2, const F32& scale, const Int& window_left,
        const Int& window_right, const Int& top_left) {
  dq_body<T, shape_of(C)>(C, q, k, v, d_o, lse, delta, d_q, cu_seqlens_q, cu_seqlens_k, group, scale_log2, scale, window_left, window_right,
                          top_left);
}

}  // namespace fmha_backward_sm90

}  // namespace cutejit::kernels
