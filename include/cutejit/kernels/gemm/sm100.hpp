// GEMMs on sm_100 tensor cores (tcgen05 + Tensor Memory), compile-verified only: no Blackwell
// GPU has run them. C (M x N, bf16) = epilogue(A (M x K, row-major) * B^T), B stored N x K
// ("TN"), f32 accumulation in TMEM:
//   gemm_bf16_sm100, gemm_fp8_sm100     bf16 (kind::f16) or f8e4m3 (kind::f8f6f4), the main
//                                       loop `Dense`, 128 x 256 tiles
//   gemm_nvfp4_sm100, gemm_mxfp8_sm100  block-scaled (A SFA)(B SFB)^T on this kernel, the main
//                                       loop `BlockScaled` of sm100_block_scaled.hpp
//   gemm_bf16_sm100_2cta                bf16 on the 2-CTA MMA (`Dense<bf16, 2>`): a cluster
//                                       pair per 256 x 256 tile, each CTA 128 rows of it
//   gemm_bf16_sm100_2cta_multicast      the same in clusters of two pairs along M
//                                       (`Dense<bf16, 2, 2>`), which multicast B's rows
//
// Persistent and warp-specialised: one CTA of six warps per multiprocessor walks the tiles of C
// (a StaticTileScheduler, grouped along M):
//  - warp 0, one thread: the producer. For each 128-byte K slice (64 bf16 or 128 FP8 or 256
//    FP4 elements: one 128-byte swizzle span per row) of each of its tiles it acquires a stage
//    of a PipelineTmaUmma ring and issues the main loop's TMA loads into it (A's 128 rows, B's
//    rows, the block-scaled loop's scales), running ahead into the next tile;
//  - warp 1, one thread: the MMA issuer. For each tile it acquires one of two TMEM
//    accumulators (PipelineUmmaAsync: the epilogue has finished reading it), then for each
//    full stage issues the main loop's four tcgen05.mma (32 bytes of K each; K-major A and B
//    from shared memory by descriptors that UmmaOperand derives from the stage's swizzled
//    layout and checks; the block-scaled loop copies the stage's scales to TMEM first) and
//    frees the stage with tcgen05.commit when they are done; after the tile's last stage it
//    commits the accumulator to the epilogue. Warp 1 also allocates the 512 TMEM columns at
//    the start and frees them at the end;
//  - warps 2-5, the epilogue: warp w reads TMEM lanes 32 (w % 4) ... + 31 (the quarter a warp
//    may reach), 32 columns at a time (tcgen05.ld.32x32b.x32), so each thread holds one row of
//    the tile; each value goes through the user's epilogue (`F32 e(F32 acc, Int row, Int
//    col)`, as the Hopper GEMM's) and to bf16, the thread writes its 64 bytes into one of the
//    warp's two swizzled chunk buffers, and one lane stores the warp's 32 x 32 chunk with TMA
//    while the warp goes on to the next. Then it frees the accumulator for tile j + 2: while
//    the epilogue stores tile j, the MMAs of tile j + 1 run in the other one.
// Any M, N and K whose rows TMA can address (check_shape: 16-byte rows of A, B and C): the
// tiles at the edges are partial. TMA fills a load's elements past M, N or K with zeros, which
// add nothing to the products, and clips a store to C's extents, so no kernel code changes.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <source_location>
#include <string>
#include <type_traits>
#include <utility>

#include "cutejit/core/visibility.hpp"
#include "cutejit/atom/sm100/tmem.hpp"
#include "cutejit/atom/sm100/umma.hpp"
#include "cutejit/pipeline/clc_tile_scheduler.hpp"
#include "cutejit/pipeline/pair_cluster.hpp"
#include "cutejit/pipeline/pipeline_umma.hpp"
#include "cutejit/pipeline/shared_storage.hpp"
#include "cutejit/pipeline/tile_scheduler.hpp"

#include "cutejit/kernels/gemm/epilogue.hpp"

namespace cutejit::kernels {

namespace gemm_sm100 {
inline constexpr int tile_m = 128;
/// Warp 0 the producer, warp 1 the MMA issuer, warps 2-5 the epilogue (one per TMEM quarter).
inline constexpr int threads = 192, epilogue_threads = 128;
/// Two accumulators of tile_n columns: the epilogue drains one while the MMAs fill the other.
inline constexpr int accumulators = 2;
/// Bytes of K per tile row and stage: one 128-byte swizzle span.
inline constexpr int k_bytes = 128;
/// The TMA box rows of an operand: a 256-row stage of B takes two boxes.
inline constexpr int box_rows = 128;
/// The epilogue's chunk: 32 TMEM columns per tcgen05.ld (32 registers per thread).
inline constexpr int chunk_cols = 32;
/// Each epilogue warp's chunks of C (its 32 rows x 32 columns, bf16) go out by TMA store from
/// two buffers of its own, in turn: one fills while the store of the other reads it.
inline constexpr int epilogue_buffers = 2, epilogue_buffer_bytes = 32 * chunk_cols * 2;
inline constexpr int epilogue_bytes = (epilogue_threads / 32) * epilogue_buffers * epilogue_buffer_bytes;

/// A stage's tile of `rows` rows as the TMA box left it: rows of 128 bytes with the 128-byte
/// swizzle (Sw<3,3,3> of a bf16 offset, Sw<3,4,3> of a byte one).
template <class T>
Tensor<T> stage_tile(const Pointer<T>& p, int rows) {
  const int base = sizeof(T) == 2 ? 3 : 4;  // log2 of the elements in 16 bytes
  return make_tensor(p, composition(Swizzle(3, base, 3), make_layout({rows, k_bytes / int(sizeof(T))}, LayoutRight{})));
}

/// An epilogue warp's chunk buffer, (row, column) -> element offset: 32 rows of 64 bytes (16-bit
/// C) with the 64-byte swizzle (Sw<2,3,3>: byte bits 4-5 ^= bits 7-8), or of 32 bytes (FP8 C) with
/// the 32-byte one (Sw<1,4,3>: byte bit 4 ^= bit 7), as a TMA box of chunk_swizzle<Out> reads it.
template <class Out = bf16>
auto chunk_buffer_layout() {
  return composition(sizeof(Out) == 2 ? Swizzle(2, 3, 3) : Swizzle(1, 4, 3), make_layout({32, chunk_cols}, LayoutRight{}));
}
/// The swizzle of C's TMA box (32 rows of chunk_cols elements).
template <class Out>
inline constexpr TmaSwizzle chunk_swizzle = sizeof(Out) == 2 ? TmaSwizzle::bytes64 : TmaSwizzle::bytes32;

/// The dense main loop: A and B of T (bf16: kind::f16; f8e4m3: kind::f8f6f4), 128 x 256
/// tiles, a 4-stage ring of 48 KB stages (A's tiles of every stage, then B's). With `Ctas` = 2
/// the CTAs of a cluster pair share 256 x 256 tiles on the 2-CTA MMA: each holds 128 rows of A
/// and 128 of B per stage (32 KB; 6 stages) and 128 rows of C. With `PairsM` x `PairsN` > 1 the
/// cluster holds that many pairs (PairCluster), which multicast the rows of A they share along
/// N and of B along M: each CTA loads a 1 / PairsN slice of its A and 1 / PairsM of its B.
template <class T, int Ctas = 1, int PairsM = 1, int PairsN = 1>
struct Dense {
  static_assert(Ctas == 1 || Ctas == 2, "one CTA or a pair");
  static_assert(Ctas == 2 || PairsM * PairsN == 1, "multicast between pairs needs the 2-CTA MMA");
  using Cluster = PairCluster<PairsM, PairsN>;
  static constexpr int ctas = Ctas, tile_n = 256, stages = Ctas == 1 ? 4 : 6;
  static constexpr bool multicast = PairsM * PairsN > 1;
  /// The CTAs of the kernel's cluster, and the rows of each TMA box of A and of B.
  static constexpr int cluster_ctas = Ctas == 1 ? 1 : Cluster::ctas;
  static constexpr int a_box_rows = tile_m / PairsN, b_box_rows = box_rows / PairsM;
  /// The worker's block of tiles (a CTA's, a pair's or a cluster's): block_m x block_n tiles.
  static constexpr int block_m = PairsM, block_n = PairsN;
  /// Elements of K per stage: 64 bf16, 128 FP8.
  static constexpr int tile_k = k_bytes / int(sizeof(T));
  /// K is a multiple of this: rows of A and B of whole 16 bytes, as TMA addresses them.
  static constexpr int k_granule = 16 / int(sizeof(T));
  /// The rows of B in each CTA's stage.
  static constexpr int b_rows = tile_n / Ctas;
  static constexpr int a_stage_bytes = tile_m * k_bytes, b_stage_bytes = b_rows * k_bytes;
  static constexpr int stage_bytes = a_stage_bytes + b_stage_bytes, ring_bytes = stages * stage_bytes;
  /// TMEM columns a stage takes besides the accumulators: none.
  static constexpr int scale_columns = 0;
  using Atom = Tcgen05MmaSS<T, tile_m * Ctas, tile_n, UmmaMajor::k, UmmaMajor::k, sm100::CtaGroup(Ctas)>;

  TmaDescriptor<T> a, b;

  void prefetch() const {
    a.prefetch();
    b.prefetch();
  }
  /// The ring's tiles in shared memory: A's of every stage, then B's, on the 128-byte swizzle's
  /// 1 KB pattern.
  struct Shared {
    SharedRegion<T> a, b;
  };
  static constexpr Shared take(SharedStorage& storage) {
    return {storage.take<T>(a_stage_bytes / int(sizeof(T)), stages, 1024), storage.take<T>(b_stage_bytes / int(sizeof(T)), stages, 1024)};
  }
  /// The producer's TMA loads of K tile `kt` into stage `s`: this CTA's rows of A from a0 and
  /// of B from b0, partitioned into the maps' boxes (with multicast, the box of its slice of
  /// each, which the CTAs of its row or column of pairs receive too; theirs make up the rest).
  void load(auto& ring, const SharedMemory& smem, const Shared& tiles, const PipelineState& s, const Int& a0, const Int& b0,
            const Int& kt) const {
    auto boxes_a = tma_partition(a, stage_tile(smem.stage(tiles.a, s.index), tile_m),
                                 domain_offset({a0, kt * tile_k}, make_identity_tensor({tile_m, tile_k})));
    auto boxes_b = tma_partition(b, stage_tile(smem.stage(tiles.b, s.index), b_rows),
                                 domain_offset({b0, kt * tile_k}, make_identity_tensor({b_rows, tile_k})));
    if constexpr (PairsN > 1) {
      Int rank = cluster_cta_rank();
      ring.load_multicast(a, boxes_a.at(Cluster::pair_n(rank)), s, Cluster::a_mask(rank), PairsN);
    } else {
      ring.load(a, boxes_a, s);
    }
    if constexpr (PairsM > 1) {
      Int rank = cluster_cta_rank();
      ring.load_multicast(b, boxes_b.at(Cluster::pair_m(rank)), s, Cluster::b_mask(rank), PairsM);
    } else {
      ring.load(b, boxes_b, s);
    }
  }
  /// The MMA thread's work on a full stage: D (at `d`) += A B^T over its K.
  void mma(const Value<uint32_t>& d, const SharedMemory& smem, const Shared& tiles, const PipelineState& s, const Value<uint32_t>&,
           const Bool& accumulate) const {
    Atom atom;
    auto [A, B] = make_umma_operands(atom, stage_tile(smem.stage(tiles.a, s.index), tile_m), stage_tile(smem.stage(tiles.b, s.index), b_rows));
    cutejit::gemm(atom, d, A, B, accumulate);  // (qualified: kernels::gemm, the operator, would hide it)
  }
};

/// How the CTAs share the tiles: a static persistent walk (one CTA per multiprocessor, CTA b
/// taking tiles b, b + grid, ...), or cluster launch control (one CTA per tile; each running
/// CTA takes the tiles of CTAs not yet launched, as it frees up: PipelineClc).
enum class Scheduling { persistent, clc };
/// The cluster launch control answers in flight, and the roles that read each: the producer,
/// the MMA thread and the four epilogue warps.
inline constexpr int clc_slots = 4, clc_readers = 6;

/// Shared memory: the main loop's ring, the epilogue warps' chunk buffers (on the 64-byte
/// swizzle's 512-byte pattern), the cluster launch control responses, the ring's barriers, the
/// accumulators' barriers, the CLC barriers, the TMEM address word; TMEM: the accumulators, then
/// each stage's scales, rounded up to a power of two.
template <class Mainloop, Scheduling S = Scheduling::persistent>
struct Resources {
  static constexpr int clc_slots_here = S == Scheduling::clc ? clc_slots : 0;
  struct Shared {
    SharedStorage storage;
    typename Mainloop::Shared tiles;
    SharedRegion<bf16> chunks;
    SharedRegion<uint32_t> clc_responses;
    SharedRegion<uint64_t> barriers, accumulator_barriers, clc_barriers;
    SharedRegion<uint32_t> tmem_slot;
  };
  static constexpr Shared shared = [] {
    Shared r;
    r.tiles = Mainloop::take(r.storage);
    r.chunks = r.storage.template take<bf16>(epilogue_buffer_bytes / 2, (epilogue_threads / 32) * epilogue_buffers, 1024);
    r.clc_responses = r.storage.template take<uint32_t>(PipelineClc::response_bytes(clc_slots_here) / 4, 1, 16);
    r.barriers = r.storage.barriers(PipelineTmaUmma::barrier_bytes(Mainloop::stages));
    r.accumulator_barriers = r.storage.barriers(PipelineUmmaAsync::barrier_bytes(accumulators));
    r.clc_barriers = r.storage.barriers(PipelineClc::barrier_bytes(clc_slots_here));
    r.tmem_slot = r.storage.template take<uint32_t>(1);
    return r;
  }();
  static constexpr uint32_t shared_bytes = shared.storage.bytes();
  static_assert(shared_bytes <= 232448, "the ring fits the 227 KB of shared memory a CTA may have");
  static constexpr int scales_column = accumulators * Mainloop::tile_n;
  static constexpr int tmem_columns = int(std::bit_ceil(unsigned(scales_column + Mainloop::stages * Mainloop::scale_columns)));
  static_assert(tmem_columns <= 512, "the accumulators and the stages' scales fit TMEM's 512 columns");
};

/// The GEMM of `mainloop` (Dense, or sm100_block_scaled.hpp's BlockScaled), C = epilogue(A B^T) in bf16, f16 or f8e4m3, stored
/// through `c`, a tensor map of boxes of 32 x 32 elements with chunk_swizzle<Out> (c_tensor_map for bf16); the
/// tiles shared out as `S` says (launch_config<Mainloop, S> gives the grid).
///
/// A main loop of 2 CTAs runs in clusters of 2 (cluster_shape): the pair walks the tiles as one
/// worker; each CTA's producer loads its halves of A and B (PipelineTmaUmmaPair), the even
/// CTA's MMA thread issues the pair's MMAs and commits to both CTAs, and each CTA's epilogue
/// stores its 128 rows (PipelineUmmaAsyncPair). With multicast between pairs the cluster of
/// PM x PN pairs walks blocks of PM x PN tiles as one worker, every pair in step (a pair's
/// stage is written by the CTAs of its row and column of pairs, so no pair may run ahead).
template <Scheduling S = Scheduling::persistent, class Mainloop, class Out, Epilogue E = Identity>
CUTEJIT_LOCAL void kernel(const Mainloop& mainloop, const TmaDescriptor<Out>& c, const Int& m, const Int& n, const Int& k, const E& epilogue = {}) {
  static_assert(std::is_same_v<Out, bf16> || std::is_same_v<Out, f16> || std::is_same_v<Out, f8e4m3>, "C is bf16, f16 or f8e4m3");
  using R = Resources<Mainloop, S>;
  constexpr int tile_n = Mainloop::tile_n, stages = Mainloop::stages, ctas = Mainloop::ctas, cluster = Mainloop::cluster_ctas;
  constexpr bool pair = ctas == 2, multicast = Mainloop::multicast;
  static_assert(!pair || S == Scheduling::persistent, "the 2-CTA GEMM walks its tiles statically (no cluster launch control yet)");
  launch_bounds(threads, 1);
  if constexpr (pair) cluster_shape(cluster);
  // This CTA's place in its pair (0 for a lone CTA), and the pair's tile of C: tile_m rows per CTA.
  Int cluster_rank = pair ? cluster_cta_rank() : Int(0);
  Int rank = pair ? cluster_rank % 2 : Int(0);
  constexpr int pair_tile_m = tile_m * ctas;
  Int k_tiles = (k + (Mainloop::tile_k - 1)) / Mainloop::tile_k;  // the last one partial
  // A cluster's block of tiles: PM x PN pair tiles (one for a lone pair or CTA), this pair's at (pm, pn) in it.
  constexpr int block_m = Mainloop::block_m, block_n = Mainloop::block_n;
  auto pair_place = [&] {
    if constexpr (multicast)
      return std::pair{Mainloop::Cluster::pair_m(cluster_rank), Mainloop::Cluster::pair_n(cluster_rank)};
    else
      return std::pair{Int(0), Int(0)};
  };
  auto [pm, pn] = pair_place();
  auto tiles = [](const Int& extent, int tile) { return (extent + (tile - 1)) / tile; };  // the last one partial
  StaticTileScheduler scheduler = pair ? StaticTileScheduler(tiles(m, pair_tile_m * block_m), tiles(n, tile_n * block_n),
                                                             block_idx().x / cluster, grid_dim().x / cluster)
                                       : StaticTileScheduler(tiles(m, tile_m), tiles(n, tile_n));
  SharedMemory smem(R::shared.storage);
  std::optional<PipelineClc> clc;
  if constexpr (S == Scheduling::clc) clc.emplace(smem[R::shared.clc_responses], smem[R::shared.clc_barriers], clc_slots, clc_readers);
  // A role's walk over this CTA's tiles: body(j, m0, n0) for its j-th tile, whose origin is (m0,
  // n0). With cluster launch control, the `requester` (the producer) asks for the next tile as
  // it starts each one, and each role frees an answer once its `threads` (1, or a warp's 32)
  // have read it.
  auto each_tile = [&](bool requester, int threads, auto&& body) {
    auto origin = [&](std::pair<Int, Int> t) {
      return std::pair{(t.first * block_m + pm) * pair_tile_m, (t.second * block_n + pn) * tile_n};
    };
    if constexpr (S == Scheduling::persistent) {
      for_(0, scheduler.my_tile_count(), [&](Int j) {
        auto [m0, n0] = origin(scheduler.tile(j));
        body(j, m0, n0);
      });
    } else {
      Var<int32_t> j = 0, tile = clc->first_tile(), more = 1;
      while_([&] { return Int(more) != 0; }, [&] {
        Int jj = j;
        if (requester) clc->request(jj);
        auto [m0, n0] = origin(scheduler.tile_at(Int(tile)));
        body(jj, m0, n0);
        auto [got, next] = clc->answer(jj);
        if (threads == 1) {
          clc->release(jj);
        } else {
          sync_warp();
          if_(thread_idx().x % 32 == 0, [&] { clc->release(jj); });
        }
        more = select(got, Int(1), Int(0));
        tile = next;
        j = jj + 1;
      });
    }
  };
  // Tile j of this CTA uses ring iterations j * k_tiles ... and accumulator j % 2.
  using Ring = std::conditional_t<pair, PipelineTmaUmmaPair, PipelineTmaUmma>;
  using Accumulators = std::conditional_t<pair, PipelineUmmaAsyncPair, PipelineUmmaAsync>;
  auto ring = [&] {
    if constexpr (pair)
      return Ring(smem[R::shared.barriers], stages, Mainloop::stage_bytes, Mainloop::Cluster::releasers);
    else
      return Ring(smem[R::shared.barriers], stages, Mainloop::stage_bytes);
  };
  Ring ab = ring();
  Accumulators acc(smem[R::shared.accumulator_barriers], accumulators, epilogue_threads);
  TmemAllocation tmem(smem[R::shared.tmem_slot], R::tmem_columns, sm100::CtaGroup(ctas));
  // A barrier of the CTA, or of the pair: the other CTA's loads, MMAs and arrivals reach this
  // one's barriers, TMEM and shared memory, so the pair starts (its barriers initialised) and
  // ends (its MMAs and remote arrivals done) together.
  auto sync_all = [&] {
    if constexpr (pair) {
      cluster_arrive();
      cluster_wait();
    } else {
      sync_threads();
    }
  };

  Int tid = thread_idx().x, warp = tid / 32, lane = tid % 32;
  if_(tid == 0, [&] {
    ab.init();
    acc.init();
    if constexpr (S == Scheduling::clc) clc->init();
    fence_mbarrier_init();
    mainloop.prefetch();
    c.prefetch();
  });
  if_(warp == 1, [&] { tmem.allocate(); });
  tcgen05_fence_before_thread_sync();
  sync_all();
  tcgen05_fence_after_thread_sync();
  Value<uint32_t> d = tmem.address();
  auto accumulator = [&](const PipelineState& t) { return d + cast<uint32_t>(t.index) * uint32_t(tile_n); };

  if_(tid == 0, [&] {
    each_tile(/*requester=*/true, 1, [&](const Int& j, const Int& m0, const Int& n0) {
      // This CTA's rows of A and of B (for a pair: A's rows rank * 128 ..., B's rank * N / 2 ...).
      Int a0 = pair ? m0 + rank * tile_m : m0, b0 = pair ? n0 + rank * (tile_n / ctas) : n0;
      for_(0, k_tiles, [&](Int kt) {
        PipelineState s = PipelineState::at(j * k_tiles + kt, stages);
        ab.producer_acquire(s);
        mainloop.load(ab, smem, R::shared.tiles, s, a0, b0, kt);
        ab.producer_commit(s);
      });
    });
    // With multicast, other pairs' MMAs free this CTA's stages: it waits for the last frees
    // before it can exit.
    if constexpr (multicast) ab.producer_tail(scheduler.my_tile_count() * k_tiles);
  });
  // The MMA thread: warp 1's first (of the pair's even CTA).
  if_(pair ? (tid == 32) & (rank == 0) : (tid == 32), [&] {
    each_tile(false, 1, [&](const Int& j, const Int&, const Int&) {
      PipelineState t = PipelineState::at(j, accumulators);
      acc.producer_acquire(t);
      tcgen05_fence_after_thread_sync();
      Value<uint32_t> dt = accumulator(t);
      for_(0, k_tiles, [&](Int kt) {
        PipelineState s = PipelineState::at(j * k_tiles + kt, stages);
        ab.consumer_wait(s);
        tcgen05_fence_after_thread_sync();
        mainloop.mma(dt, smem, R::shared.tiles, s, d + uint32_t(R::scales_column), kt > 0);
        if constexpr (multicast)
          ab.consumer_release(s, Mainloop::Cluster::release_mask(cluster_rank));
        else
          ab.consumer_release(s);
      });
      acc.producer_commit(t);
    });
  });
  if_(warp >= 2, [&] {
    // Warp w reaches TMEM lanes 32 (w % 4) ...: its thread `lane` holds that row of the tile.
    Int quarter = warp % 4;
    Bool leader = lane == 0;
    // The warp's chunk buffers: 32 rows of 64 bytes, 64-byte swizzled as the store's box reads
    // them, so that the warp's 16-byte row stores fall in distinct banks 8 rows at a time.
    auto buffer = [&](int b) { return smem.stage(R::shared.chunks.template as<Out>(), quarter * epilogue_buffers + b); };
    auto buffer_tile = [&](int b) { return make_tensor(buffer(b), chunk_buffer_layout<Out>()); };
    // The leader's TMA stores, one bulk group per chunk, in turn through the two buffers.
    PipelineTmaStore stores(epilogue_buffers);
    each_tile(false, 32, [&](const Int& j, const Int& m0, const Int& n0) {
      PipelineState t = PipelineState::at(j, accumulators);
      acc.consumer_wait(t);
      // tcgen05.ld is .sync.aligned: the warp's threads, which left the wait loop each on its
      // own iteration, meet again first.
      sync_warp();
      tcgen05_fence_after_thread_sync();
      Int rows = pair ? m0 + rank * tile_m : m0;  // this CTA's rows of the tile
      Int row = rows + quarter * 32 + lane;
      for (int chunk = 0; chunk < tile_n / chunk_cols; ++chunk) {
        Tensor<float> values = TmemAccumulator{accumulator(t), tile_n}.load_row<chunk_cols>(warp, chunk * chunk_cols);
        Tensor<Out> out = make_rmem_tensor<Out>(IntTuple{chunk_cols});
        for (int i = 0; i < chunk_cols; ++i) {
          F32 x = F32(values(i));
          // Past M or N (a partial tile, which the TMA store clips) the hook sees the last row or
          // column, so its own reads stay in bounds.
          if constexpr (!std::is_same_v<E, Identity>) x = F32(epilogue(x, min(row, m - 1), min(n0 + (chunk * chunk_cols + i), n - 1)));
          out(i) = cast<Out>(x);
        }
        // A tile has an even number of chunks, so chunk c always takes buffer c % 2; the store
        // that last read it, one group back, must be done reading.
        const int b = chunk % epilogue_buffers;
        if_(leader, [&] { stores.producer_acquire(); });
        sync_warp();
        copy(out, buffer_tile(b)(lane, _));
        fence_proxy_async_shared();  // the TMA store (async proxy) reads what the threads wrote
        sync_warp();
        if_(leader, [&] {
          c.store(buffer(b), {rows + quarter * 32, n0 + chunk * chunk_cols});
          stores.producer_commit();
        });
      }
      // This thread's loads are done: the MMA thread may overwrite the accumulator.
      tcgen05_fence_before_thread_sync();
      acc.consumer_release(t);
    });
    if_(leader, [&] { stores.tail(); });  // the stores are done before the CTA's shared memory goes
  });
  // Every warp's last TMEM access (and, for a pair, the other CTA's MMAs and arrivals) is done
  // before warp 1 frees the columns.
  tcgen05_fence_before_thread_sync();
  sync_all();
  if_(warp == 1, [&] { tmem.free(d); });
}

/// Throws unless TMA can address the shape: rows of A and B of whole 16 bytes (K a multiple of
/// the main loop's k_granule), rows of C too (N a multiple of 8), every extent below 2^31 (TMA
/// coordinates are 32-bit). The tiles at the edges may be partial.
template <class Mainloop>
void check_shape(int64_t m, int64_t n, int64_t k, const std::source_location& where = std::source_location::current()) {
  constexpr int k_granule = Mainloop::k_granule, n_granule = 8;
  constexpr int64_t limit = int64_t(1) << 31;
  if (m <= 0 || n <= 0 || k <= 0 || k % k_granule || n % n_granule || m >= limit || n >= limit || k >= limit)
    throw Error("the sm_100 GEMM needs M, N and K from 1 to 2^31 - 1 with K a multiple of " + std::to_string(k_granule) +
                    " and N of " + std::to_string(n_granule) + " (rows of A, B and C of whole 16 bytes, as TMA reads and writes them), not " +
                    std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k),
                where);
}

/// The grid: one CTA per multiprocessor, or one per tile when there are fewer tiles; with
/// cluster launch control, one per tile. A 2-CTA main loop: a pair per tile, as many pairs as
/// half the multiprocessors (the kernel declares its clusters of 2).
template <class Mainloop, Scheduling S = Scheduling::persistent>
Launch launch_config(int multiprocessors, int64_t m, int64_t n) {
  constexpr int ctas = Mainloop::cluster_ctas;  // a worker: one CTA, a pair, or a cluster of pairs
  const int64_t tiles = ceil_div(m, int64_t(tile_m * Mainloop::ctas * Mainloop::block_m)) * ceil_div(n, int64_t(Mainloop::tile_n * Mainloop::block_n));
  const uint32_t workers = S == Scheduling::clc ? uint32_t(tiles) : StaticTileScheduler::grid_size(tiles, multiprocessors / ctas);
  return Launch{.grid = workers * ctas, .block = threads, .shared_bytes = Resources<Mainloop, S>::shared_bytes};
}

/// The tensor map of an operand of `rows` rows of `row_elements` elements of T (bytes, for FP4
/// pairs): boxes of 128 rows (or a multicast slice's) x 128 bytes, 128-byte swizzled.
template <class T>
TensorMap<T> operand_tensor_map(const DeviceTensor<T>& x, int rows_per_box = box_rows) {
  return make_tensor_map(x, {uint32_t(rows_per_box), uint32_t(k_bytes / int(sizeof(T)))}, TmaSwizzle::bytes128);
}
template <class T>
TensorMap<T> operand_tensor_map(const Buffer<T>& x, int64_t rows, int64_t row_elements, int rows_per_box = box_rows) {
  return operand_tensor_map(x.view({rows, row_elements}), rows_per_box);
}
template <class T>
TensorMap<T> operand_tensor_map_for_compile(int rows_per_box = box_rows) {
  return TensorMap<T>::for_compile(2, {uint32_t(rows_per_box), uint32_t(k_bytes / int(sizeof(T)))}, TmaSwizzle::bytes128);
}

/// The tensor map C (m x n, row-major) is stored through: boxes of 32 rows x 32 columns (an
/// epilogue warp's chunk), swizzled as the chunk buffers are (chunk_swizzle<Out>).
template <class Out = bf16>
TensorMap<Out> c_tensor_map(const DeviceTensor<Out>& c) {
  return make_tensor_map(c, {32u, uint32_t(chunk_cols)}, chunk_swizzle<Out>);
}
template <class Out = bf16>
TensorMap<Out> c_tensor_map(const Buffer<Out>& c, int64_t m, int64_t n) {
  return c_tensor_map(c.view({m, n}));
}
template <class Out = bf16>
TensorMap<Out> c_tensor_map_for_compile() {
  return TensorMap<Out>::for_compile(2, {32u, uint32_t(chunk_cols)}, chunk_swizzle<Out>);
}

/// The dense GEMM's tensor maps of A (m x k) and B (n x k), boxes of the main loop's rows.
template <class Mainloop, class T = typename Mainloop::Atom::element_type>
std::pair<TensorMap<T>, TensorMap<T>> tensor_maps(const Buffer<T>& a, const Buffer<T>& b, int64_t m, int64_t n, int64_t k) {
  return {operand_tensor_map(a, m, k, Mainloop::a_box_rows), operand_tensor_map(b, n, k, Mainloop::b_box_rows)};
}
/// The same, carrying only the static facts, for cross-compiling without a GPU.
template <class Mainloop, class T = typename Mainloop::Atom::element_type>
std::pair<TensorMap<T>, TensorMap<T>> tensor_maps_for_compile() {
  return {operand_tensor_map_for_compile<T>(Mainloop::a_box_rows), operand_tensor_map_for_compile<T>(Mainloop::b_box_rows)};
}
}  // namespace gemm_sm100

}  // namespace cutejit::kernels
