// The Hopper GEMM skeleton that gemm_bf16, gemm_fp8 and gemm_bf16_bias_gelu share:
//     C (M x N, bf16, f16 or FP8) = epilogue(A (M x K, row-major) * B^T)
// with B stored N x K ("TN"), A and B of one element type T (bf16, f16 or FP8), f32 accumulation.
// `gemm::kernel<T, Config>` takes its static choices as one value (`Config`, below): A stored
// K x M and/or B stored K x N (MN-major operands, bf16 / f16 only), where only
// the TMA boxes and the wgmma descriptors differ; tiles 128 or 64 columns wide instead of 256
// (more stages, fewer accumulators, the same steps); clusters of two; the tile order. What
// follows describes the default, 256-wide tile.
//
// Persistent and warp-specialised: one CTA per multiprocessor, three warpgroups (384 threads),
// each CTA walking the 128 x 256 tiles of C in a grouped order (below):
//  - warpgroup 0, one thread: the producer. It gives up registers (setmaxnreg 40) and, for each
//    128-byte-wide K slice of each of its tiles (64 bf16 or 128 FP8 elements: one 128-byte
//    swizzle span per row), acquires a free stage of a 4-stage PipelineTmaAsync ring (which arms
//    the stage's "full" mbarrier with its 48 KB) and issues three TMA loads into it (128 rows of
//    A, two halves of 128 rows of B, 128-byte swizzled). It runs ahead into the next tile while
//    the consumers store the current one. Tiles come from a StaticTileScheduler;
//  - warpgroups 1 and 2: the consumers, rows 0-63 and 64-127 of the tile. They take the
//    registers (setmaxnreg 232: 128 f32 accumulators each). Each waits for a full stage, issues
//    four m64n256 wgmmas on it (k16 for bf16, k32 for FP8: 32 bytes of K each), keeps one batch
//    in flight and releases the previous stage once that batch is done;
//  - epilogue, 64 columns at a time: accumulators -> (the user's epilogue) -> bf16 pairs ->
//    stmatrix into one of the warpgroup's two 64 x 64 chunk buffers (128-byte swizzled) -> one
//    TMA store, which runs while the warpgroup goes on to the next chunk and the next tile.
// A stage is 48 KB for either element type, because it is counted in bytes of K.
// `launch_bounds(384, 1)` caps registers at entry (168 = 64K / 384), which setmaxnreg needs.
// Any M, N, K from 1, with the rows of A, B and C 16-byte multiples apart (check_shape): the
// tiles on the edges overhang the matrices, TMA loads fill the overhang with zeros (which add
// nothing) and TMA stores leave it out.
//
// The epilogue hook (the C++ form of epilogue fusion): a callable
//     F32 epilogue(F32 acc, Int row, Int col)
// traced into the kernel and applied to every accumulator value, with the value's global row
// and column; what it returns is converted to bf16 and stored. It is called inside the
// kernel's body, so it may capture the kernel's other arguments (a bias tensor, scales) and may
// load from global memory. Values in the overhang past M or N are passed with their row or
// column clamped to the last one (so per-row or per-column reads stay in bounds) and are not
// stored. For each chunk, a thread calls it on all the chunk's values before it writes any of
// them, so the loads of values sharing a column are merged. `Identity` (the default) is no
// call at all.
//
// The gated product (Config::glu, a SwiGLU MLP's gate/up projection): B's rows are two halves
// [W; V] (2 N rows) and C has N columns, C = epilogue(A W^T, A V^T). A tile's B is then W's
// rows n0 ... n0 + tile_n / 2 - 1 in the stage's first half and V's same rows in its second, so
// each thread holds the accumulators of column j of both halves, tile_n / 4 values apart,
// and the epilogue hook takes both: F32 epilogue(F32 w, F32 v, Int row, Int col). A tile gives
// tile_n / 2 columns of C, and C is written once, half the bytes of A [W; V]^T.
//
// The feed hook (for operands that arrive while the kernel runs, as an all-gather's do): an
// object with `wait(m0, kt)`, which the producer calls before each TMA load of A's rows m0 ...
// m0 + 127 at K tile kt, and `side(thread, threads)`, which the producer warpgroup's three other
// warps (96 threads, idle otherwise) run meanwhile. `NoFeed`, the default, adds nothing.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "cutejit/core/visibility.hpp"
#include "cutejit/pipeline/pipeline.hpp"
#include "cutejit/pipeline/shared_storage.hpp"
#include "cutejit/pipeline/tile_scheduler.hpp"

#include "cutejit/kernels/gemm/epilogue.hpp"

namespace cutejit::kernels {

namespace gemm_sm90 {
inline constexpr int tile_m = 128;
inline constexpr int threads = 384;
inline constexpr int producer_registers = 40, consumer_registers = 232;  // 40*128 + 232*256 <= 64K
/// Bytes of K per tile row and stage: one 128-byte swizzle span, the widest TMA box row a
/// 128-byte swizzle allows and what one wgmma descriptor row covers.
inline constexpr int k_bytes = 128;
/// Elements of K per stage: 64 for bf16, 128 for FP8.
template <class T> inline constexpr int tile_k_of = k_bytes / int(sizeof(T));
/// M or N elements of an MN-major operand's TMA box row (one 128-byte span): 64 for bf16.
template <class T> inline constexpr int mn_chunk_of = k_bytes / int(sizeof(T));
inline constexpr int a_stage_bytes = tile_m * k_bytes;
/// The epilogue goes through shared memory in chunks of 64 rows (a consumer warpgroup's) x 64
/// columns, C's TMA box: 128-byte rows for bf16, 64-byte rows for FP8, swizzled by that many
/// bytes. Each consumer warpgroup has two chunk buffers (8 KB each, whichever the type), so it
/// writes one while the TMA store of the other is in flight.
inline constexpr int chunk_rows = 64, chunk_cols = 64, chunk_bytes = chunk_rows * chunk_cols * 2, chunk_buffers = 2;
/// The swizzle of C's chunks: one row of 64 elements.
template <class Out> inline constexpr TmaSwizzle chunk_swizzle = sizeof(Out) == 2 ? TmaSwizzle::bytes128 : TmaSwizzle::bytes64;
/// Dynamic shared memory a CTA may have on sm_90 (227 KB).
inline constexpr int shared_limit = 232448;

/// The kernel's static choices; each set of them is a kernel of its own.
struct Config {
  /// K (A stored M x K, B stored N x K) or MN (A stored K x M, B stored K x N).
  WgmmaMajor a_major = WgmmaMajor::k, b_major = WgmmaMajor::k;
  /// Columns of C per tile: 256 (the widest wgmma), or 128 or 64 for shapes with fewer
  /// 256-wide tiles than multiprocessors (choose_tile_n).
  int tile_n = 256;
  /// 2: clusters of two CTAs on vertically adjacent tiles, which share B through multicast.
  int cluster_m = 1;
  /// The scheduler's group: consecutive tiles go down a column of `group_m` tile rows before
  /// moving right, so the CTAs running at once share A and B tiles in L2.
  int group_m = 8;
  /// C's element type: bf16, f16, or f8e4m3 (saturated).
  DType out = DType::bf16;
  /// The gated product (above): B is [W; V], and half of a tile's accumulators multiply the
  /// other half's into tile_n / 2 columns of C. K-major B, tiles 256 or 128 wide.
  bool glu = false;

  constexpr int b_stage_bytes() const { return tile_n * k_bytes; }
  constexpr int stage_bytes() const { return a_stage_bytes + b_stage_bytes(); }
  /// Columns of C per tile.
  constexpr int out_n() const { return glu ? tile_n / 2 : tile_n; }
  /// B's K-major TMA box: at most 128 rows, so a 256-wide tile takes two loads (each half of it
  /// with glu).
  constexpr int b_box_rows() const {
    const int rows = glu ? tile_n / 2 : tile_n;
    return rows < 128 ? rows : 128;
  }
  /// Shared memory with `s` stages: A's ring and B's (each stage one TMA box row of 128 bytes
  /// per tile row, on the 128-byte swizzle's 1 KB pattern), the consumers' chunk buffers (two
  /// per warpgroup), the ring's barriers.
  struct Shared {
    SharedStorage storage;
    SharedRegion<int8_t> a, b, chunks;
    SharedRegion<uint64_t> barriers;
  };
  constexpr Shared shared_with(int s) const {
    Shared r;
    r.a = r.storage.take<int8_t>(a_stage_bytes, s, 1024);
    r.b = r.storage.take<int8_t>(b_stage_bytes(), s, 1024);
    r.chunks = r.storage.take<int8_t>(chunk_bytes, 2 * chunk_buffers, 1024);
    r.barriers = r.storage.barriers(PipelineTmaAsync::barrier_bytes(s));
    return r;
  }
  /// As many stages as fit, up to 8: 4 of 48 KB for 256-wide tiles, 6 of 32 KB for 128, 8 of 24 KB for 64.
  constexpr int stages() const {
    for (int s = 8; s > 2; --s)
      if (shared_with(s).storage.bytes() <= uint32_t(shared_limit)) return s;
    return 2;
  }
  constexpr Shared shared() const { return shared_with(stages()); }
  constexpr uint32_t shared_bytes() const { return shared().storage.bytes(); }
};
static_assert(Config{}.stages() == 4 && Config{.tile_n = 128}.stages() == 6 && Config{.tile_n = 64}.stages() == 8);
static_assert(Config{}.shared_bytes() <= uint32_t(shared_limit));

/// The tile width for a shape: the widest whose tiles fill most of the machine (at least 7/8
/// of one tile per multiprocessor), else 64, which gives the most tiles. A decode-like
/// 128 x 8192 product has 32 tiles 256 wide but 128 tiles 64 wide.
inline int choose_tile_n(int multiprocessors, int64_t m, int64_t n) {
  int64_t rows = (m + tile_m - 1) / tile_m;
  for (int width : {256, 128})
    if (rows * ((n + width - 1) / width) * 8 >= int64_t(multiprocessors) * 7) return width;
  return 64;
}

/// C's element type in a kernel of this Config.
template <Config C>
using output_t = std::conditional_t<C.out == DType::f8e4m3, f8e4m3, std::conditional_t<C.out == DType::f16, f16, bf16>>;

/// A stage's operand tile of `mn` rows (M of A, N of B) by one 128-byte span of K, as the TMA
/// boxes left it: K-major, rows of tile_k elements; MN-major, chunks of mn_chunk columns side
/// by side, each tile_k rows of K.
template <class T, WgmmaMajor Major>
Tensor<T> stage_tile(const Pointer<T>& p, int mn) {
  return make_tensor(p, wgmma_tile_layout<T>(Major, TmaSwizzle::bytes128, mn, tile_k_of<T>));
}

/// An operand's coordinates as its tensor map addresses them (MN x K, or K x MN when MN-major),
/// seen as (MN, K), the shape of its tiles in shared memory.
template <WgmmaMajor Major>
CoordTensor operand_coordinates(const Int& mn, const Int& k) {
  if constexpr (Major == WgmmaMajor::k) return make_identity_tensor({mn, k});
  else return select(make_identity_tensor({k, mn}), {1, 0});
}

/// A chunk buffer is 64 x 64 elements, row-major with the swizzle C's TMA box has, as TMA lays
/// it out in shared memory: bf16 rows of 128 bytes with the 128-byte swizzle (16-byte chunk c
/// of row r at c ^ (r % 8)), FP8 rows of 64 bytes with the 64-byte swizzle (c ^ ((r / 2) % 4)).
/// Both XOR bits 4 and up of the byte offset with bits 7 and up; in elements, from bit 3 (bf16)
/// or 4 (FP8).
template <class Out = bf16>
Swizzle chunk_swizzle_of() {
  return sizeof(Out) == 2 ? Swizzle(3, 3, 3) : Swizzle(2, 4, 3);
}
/// The 128 x 64 chunk of C that both consumer warpgroups store at once, from their buffers
/// of one index: rows 64 h ... 64 h + 63 are warpgroup h's buffer, chunk_buffers buffers
/// further on. (The buffers are 1 KB multiples apart, so each keeps the swizzle's phase.)
template <class Out = bf16>
ComposedLayout chunk_pair_layout() {
  const int64_t next_warpgroup = chunk_buffers * chunk_bytes / int64_t(sizeof(Out));
  return composition(chunk_swizzle_of<Out>(), Layout(IntTuple{IntTuple{chunk_rows, 2}, chunk_cols},
                                                     IntTuple{IntTuple{chunk_cols, next_warpgroup}, 1}));
}

/// The feed hook's default: A is all in memory before the kernel starts.
struct NoFeed {};
template <class F>
concept Feed = std::is_same_v<F, NoFeed> || requires(const F& f, const Int& i) {
  f.wait(i, i);
  f.side(i, 96);
};

/// The kernel body; call it from a Kernel's lambda, which declares the arguments the epilogue
/// captures. `c` is C's tensor map (output_map). An MN-major operand (C.a_major, C.b_major)
/// arrives as boxes of tile_k K rows by one 128-byte span of M or N (`mn_chunk` elements), side
/// by side in the stage (2 boxes of A, tile_n / 64 of B): the same bytes as the K-major boxes,
/// so the stage's size does not change. With C.glu, `n` is C's columns (B has 2 n rows) and the
/// epilogue is a GluEpilogue.
template <class T, Config C = Config{}, class E = Identity, Feed F = NoFeed>
CUTEJIT_LOCAL void kernel(const TmaDescriptor<T>& a, const TmaDescriptor<T>& b, const TmaDescriptor<output_t<C>>& c, const Int& m, const Int& n,
            const Int& k, const E& epilogue = {}, const F& feed = {}) {
  static_assert(C.glu ? GluEpilogue<E> : Epilogue<E>,
                "the epilogue is F32(F32 acc, Int row, Int col), or with glu F32(F32 w, F32 v, Int row, Int col)");
  static_assert(!C.glu || (C.b_major == WgmmaMajor::k && C.cluster_m == 1 && C.tile_n >= 128),
                "glu takes B stored N x K, tiles 256 or 128 wide, no clusters");
  constexpr bool fed = !std::is_same_v<F, NoFeed>;
  static_assert(!fed || (C.a_major == WgmmaMajor::k && C.cluster_m == 1), "a fed A is stored M x K, in CTAs of their own");
  using Out = output_t<C>;
  static_assert(C.out == DType::bf16 || C.out == DType::f16 || C.out == DType::f8e4m3, "C is bf16, f16 or f8e4m3");
  constexpr WgmmaMajor AMajor = C.a_major, BMajor = C.b_major;
  constexpr int ClusterM = C.cluster_m, tile_n = C.tile_n, out_n = C.out_n(), stages = C.stages();
  static_assert(sizeof(T) == 2 || (AMajor == WgmmaMajor::k && BMajor == WgmmaMajor::k),
                "wgmma reads FP8 operands K-major only: A stored M x K and B stored N x K");
  static_assert(tile_n == 256 || tile_n == 128 || tile_n == 64, "tiles are 256, 128 or 64 columns wide");
  static_assert(C.group_m >= 1 && (ClusterM == 1 || C.group_m % 2 == 0),
                "the scheduler's group is at least one tile row, and an even number of them in clusters of two");
  // ClusterM = 2: clusters of two CTAs on vertically adjacent tiles, which share their B tile.
  // CTA r of the pair loads half r of B and multicasts it into both, so each B element leaves
  // L2 once per pair; each CTA's consumers free a stage in both CTAs (the other's producer
  // writes into it too), and the pair walks the tiles together.
  static_assert(ClusterM == 1 || (ClusterM == 2 && BMajor == WgmmaMajor::k && tile_n == 256),
                "clusters of 2 along M, with B stored N x K and 256-wide tiles");
  constexpr int tile_k = tile_k_of<T>;
  launch_bounds(threads, 1);
  // Tiles past M, N or K overhang the matrices: TMA fills what lies outside with zeros, which
  // add nothing to the products, and leaves it out of the stores.
  // (Rounded up as (x - 1) / t + 1, which cannot overflow for x up to 2^31 - 1.)
  Int k_tiles = (k - 1) / tile_k + 1;
  Int tiles_m = (m - 1) / tile_m + 1;
  Int tiles_n = (n - 1) / out_n + 1;
  constexpr auto shared = C.shared();
  SharedMemory smem(shared.storage);
  auto a_tile = [&](const Int& s) { return smem.stage(shared.a.as<T>(), s); };
  auto b_tile = [&](const Int& s) { return smem.stage(shared.b.as<T>(), s); };
  // Tile j of this CTA uses ring iterations j * k_tiles ... j * k_tiles + k_tiles - 1.
  PipelineTmaAsync pipe(smem[shared.barriers], stages, /*consumers=*/2 * ClusterM, C.stage_bytes());
  Int rank;  // in the pair (ClusterM = 2)
  auto make_scheduler = [&] {
    if constexpr (ClusterM == 1) {
      return StaticTileScheduler(tiles_m, tiles_n, C.group_m, Raster::along_m);
    } else {  // the pairs walk pairs of tile rows (the last pair's second row may lie past M)
      rank = cluster_cta_rank();
      return StaticTileScheduler((tiles_m + 1) / 2, tiles_n, block_idx().x / 2, grid_dim().x / 2, C.group_m / 2, Raster::along_m);
    }
  };
  StaticTileScheduler scheduler = make_scheduler();
  // Tile j's coordinates among the tiles of C, and its first row and column.
  auto tile_coord = [&](const Int& j) {
    auto [tm, tn] = scheduler.tile(j);
    if constexpr (ClusterM == 1) return std::pair{tm, tn};
    else return std::pair{tm * 2 + rank, tn};
  };
  auto tile_origin = [&](const Int& j) {
    auto [tm, tn] = tile_coord(j);
    return std::pair{tm * tile_m, tn * out_n};
  };
  // Frees a stage for this CTA's producer and, in a pair, for the other CTA's.
  auto release = [&](const PipelineState& s) {
    pipe.consumer_release(s);
    if constexpr (ClusterM == 2) pipe.consumer_release(s, rank ^ 1);
  };

  Int tid = thread_idx().x;
  Int warpgroup = tid / 128;
  if_(tid == 0, [&] {
    pipe.init();
    fence_mbarrier_init();
    a.prefetch();
    b.prefetch();
  });
  sync_threads();
  if constexpr (ClusterM == 2) {  // the other CTA's barriers exist before anything reaches them
    cluster_arrive();
    cluster_wait();
  }

  if_(warpgroup == 0, [&] {
    decrease_max_registers(producer_registers);
    if_(tid == 0, [&] {
      CoordTensor mA = operand_coordinates<AMajor>(m, k), mB = operand_coordinates<BMajor>(C.glu ? 2 * n : n, k);
      for_(0, scheduler.my_tile_count(), [&](Int j) {
        auto [tm, tn] = tile_coord(j);
        for_(0, k_tiles, [&](Int kt) {
          PipelineState s = PipelineState::at(j * k_tiles + kt, stages);
          pipe.producer_acquire(s);
          if constexpr (fed) feed.wait(tm * tile_m, kt);
          // The TMA boxes that fill the stage's tiles: one of A (two MN-major chunks), two of a
          // 256-wide B (tile_n / 64 MN-major chunks).
          auto boxes_a = tma_partition(a, stage_tile<T, AMajor>(a_tile(s.index), tile_m), local_tile(mA, {tile_m, tile_k}, {tm, kt}));
          pipe.load(a, boxes_a, s);
          if constexpr (C.glu) {
            // Half h of the stage's B: rows n0 ... of W (h = 0) or of V, n rows further (h = 1).
            // W's rows past n are V's first ones: they reach only columns of C past n, which
            // are not stored.
            Tensor<T> sB = stage_tile<T, BMajor>(b_tile(s.index), tile_n);
            for (int h = 0; h < 2; ++h)
              pipe.load(b, tma_partition(b, local_tile(sB, {out_n, tile_k}, {h, 0}),
                                         local_tile(domain_offset(IntTuple{h == 0 ? Int(0) : n, 0}, mB), {out_n, tile_k}, {tn, kt})),
                        s);
          } else {
            auto boxes_b = tma_partition(b, stage_tile<T, BMajor>(b_tile(s.index), tile_n), local_tile(mB, {tile_n, tile_k}, {tn, kt}));
            // In a pair, CTA r loads box r of B (rows 128 r ...) into both.
            if constexpr (ClusterM == 2) pipe.load_multicast(b, boxes_b.at(rank), s, 0b11, 2);
            else pipe.load(b, boxes_b, s);
          }
          pipe.producer_commit(s);
        });
      });
    });
    if constexpr (fed) if_(tid >= 32, [&] { feed.side(tid - 32, 96); });
  }).else_([&] {
    increase_max_registers(consumer_registers);
    Int half = warpgroup - 1;  // which 64 rows of the tile this warpgroup computes
    Int t = tid % 128;
    Bool leader = t == 0;
    // The two consumer warpgroups tile the 128 x tile_n block with the m64n{tile_n} atom, one
    // along M each; thread tid - 128 of the tiling holds its accumulators ((2,2,tile_n/8),1,1)
    // and, in cC, their (row, column) in the tile.
    auto tiled_mma = make_tiled_mma(WgmmaSS<T, tile_n, AMajor, BMajor>{}, make_layout({2, 1, 1}));
    auto thr_mma = tiled_mma.get_slice(tid - 128);
    Tensor<float> acc = thr_mma.partition_fragment_C({tile_m, tile_n});
    CoordTensor cC = thr_mma.partition_C(make_identity_tensor({tile_m, tile_n}));
    // The epilogue's 128 x 64 chunks are partitioned by the m64n64 atom, whose C layout is the
    // first 64 columns of the m64n{tile_n} one: chunk c's accumulators are values 32 c ... 32 c
    // + 31 of acc, in the same order (tests/unit/atom/test_wgmma_layouts.cpp checks this).
    auto chunk_mma = make_tiled_mma(WgmmaSS<T, chunk_cols>{}, make_layout({2, 1, 1}));
    auto chunk_thr = chunk_mma.get_slice(tid - 128);
    auto r2s = make_tiled_copy_C(StMatrix<4>{}, chunk_mma);
    auto thr_r2s = r2s.get_slice(tid - 128);
    constexpr int chunk_values = chunk_cols / 2;
    // The leader's TMA stores of C, one bulk group per chunk, ringing the warpgroup's buffers.
    PipelineTmaStore stores(chunk_buffers);
    for_(0, scheduler.my_tile_count(), [&](Int j) {
      auto [m0, n0] = tile_origin(j);
      fill(acc, 0.0f);
      for_(0, k_tiles, [&](Int kt) {
        Int it = j * k_tiles + kt;
        PipelineState s = PipelineState::at(it, stages);
        pipe.consumer_wait(s);
        // The stage's tiles as the TMA boxes left them; this warpgroup reads its 64 rows of A.
        Tensor<T> sA = local_tile(stage_tile<T, AMajor>(a_tile(s.index), tile_m), {64, tile_k}, {half, 0});
        Tensor<T> sB = stage_tile<T, BMajor>(b_tile(s.index), tile_n);
        wgmma_fence();
        cutejit::gemm(tiled_mma, acc, sA, sB);  // one wgmma per K step (qualified: kernels::gemm, the operator, would hide it)
        wgmma_commit_group();
        // One batch stays in flight; the one before it is done, so its stage can be refilled.
        wgmma_wait_group(1);
        if_(leader && kt > 0, [&] { release(PipelineState::at(it - 1, stages)); });
      });
      wgmma_wait_group(0);
      wgmma_fence_operands(acc);
      // The tile's last stage is free too: the producer can fill it during the stores below.
      if_(leader, [&] { release(PipelineState::at(j * k_tiles + k_tiles - 1, stages)); });

      // The epilogue, 64 columns at a time: values through the user's epilogue and to bf16,
      // stmatrix into a free chunk buffer, then one thread stores the chunk with TMA and the
      // warpgroup goes on (to the next chunk, then the next tile's MMAs) while it is written.
      constexpr int chunks = out_n / chunk_cols;
      // With glu, V's accumulator of a value sits this many values after W's.
      constexpr int v_offset = out_n / chunk_cols * chunk_values;
      for (int chunk = 0; chunk < chunks; ++chunk) {
        auto store_chunk = [&] {
          Tensor<Out> out = chunk_thr.template partition_fragment_C<Out>({tile_m, chunk_cols});
          std::vector<F32> values;
          for (int v = 0; v < chunk_values; ++v) {
            const int i = chunk * chunk_values + v;
            F32 x = F32(acc(IntTuple(i)));
            // Values past M or N are computed but not stored; the epilogue sees them at the
            // last row or column, so that what it reads per row or column stays in bounds.
            if constexpr (!std::is_same_v<E, Identity>) {
              IntTuple at = cC(IntTuple(i), IntTuple(0), IntTuple(0));
              Int row = min(m0 + coordinate<0>(at), m - 1), col = min(n0 + coordinate<1>(at), n - 1);
              if constexpr (C.glu) x = F32(epilogue(x, F32(acc(IntTuple(i + v_offset))), row, col));
              else x = F32(epilogue(x, row, col));
            }
            values.push_back(x);
          }
          // Convert before waiting for the buffer, so that the pairs, not the chunk's f32
          // values, are what stays live across the wait. bf16 (f16): one cvt.rn.bf16x2.f32
          // (f16x2) per pair, kept as the fragment's 32-bit registers (which the stmatrix copy
          // reads); FP8: one
          // cvt.rn.satfinite.e4m3x2.f32.
          std::vector<Value<int16_t>> fp8_pairs;
          for (int v = 0; v < chunk_values; v += 2) {
            if constexpr (sizeof(Out) == 2)
              recast<uint32_t>(out)(IntTuple(v / 2)) = pack_pair(cast<Out>(values[size_t(v)]), cast<Out>(values[size_t(v + 1)]));
            else
              fp8_pairs.push_back(cast_pair<Out>(values[size_t(v)], values[size_t(v + 1)]));
          }
          // Chunks take the warpgroup's buffers in turn, from tile to tile too (a static choice
          // when a tile has an even number of chunks). The chunk's 128 rows: rows 64 h ... of
          // warpgroup h's buffer.
          Int buffer = chunks % chunk_buffers == 0 ? Int(chunk % chunk_buffers) : (j * chunks + chunk) % chunk_buffers;
          Tensor<Out> tile = make_tensor(smem.stage(shared.chunks.as<Out>(), buffer), chunk_pair_layout<Out>());
          // The store that last read this buffer, two groups ago, is done with it.
          if_(leader, [&] { stores.producer_acquire(); });
          named_barrier_sync(1 + half, 128);
          if constexpr (sizeof(Out) == 2) {
            copy(r2s, out, thr_r2s.partition_D(tile));  // one stmatrix.x4 per 16 columns
          } else {
            // FP8 has no stmatrix on sm_90: each pair of neighbouring values is one 2-byte
            // store; a warp's stores cover 8 rows of 8 bytes.
            Tensor<Out> mine = chunk_thr.partition_C(tile);
            for (size_t p = 0; p < fp8_pairs.size(); ++p)
              Pointer<int16_t>(mine.pointer_at(IntTuple{int64_t(2 * p), 0, 0}).id())[0] = fp8_pairs[p];
          }
          fence_proxy_async_shared();  // the TMA store (async proxy) reads what the threads wrote
          named_barrier_sync(1 + half, 128);
          Pointer<Out> own = smem.stage(shared.chunks.as<Out>(), half * chunk_buffers + buffer);
          if_(leader, [&] { c.store(own, {m0 + half * 64, n0 + chunk * chunk_cols}); });
        };
        // A chunk wholly past M or N is skipped, but still closes a (then empty) bulk group, so
        // that the wait above always finds the buffer's last store one group back.
        if_(m0 + half * 64 < m && n0 + chunk * chunk_cols < n, store_chunk);
        if_(leader, [&] { stores.producer_commit(); });
      }
    });
    if_(leader, [&] { stores.tail(); });  // the stores are done before the CTA's shared memory goes
  });
  if constexpr (ClusterM == 2) {  // neither CTA exits while the other may still write into it
    cluster_arrive();
    cluster_wait();
  }
}

/// The TN kernel (A stored M x K, B stored N x K: both K-major), which gemm_bf16, gemm_fp8 and
/// gemm_bf16_bias_gelu share.
template <class T, Epilogue E = Identity>
void tn_kernel(const TmaDescriptor<T>& a, const TmaDescriptor<T>& b, const TmaDescriptor<bf16>& c, const Int& m, const Int& n,
               const Int& k, const E& epilogue = {}) {
  kernel<T, Config{}>(a, b, c, m, n, k, epilogue);
}

/// Checks a shape: any M, N, K from 1 (tiles past the edges are filled and clipped by TMA), but
/// TMA needs every row of A, B and C to start a multiple of 16 bytes after the one before, so
/// the contiguous extent of each (K of a K-major operand, M or N of an MN-major one, N of C)
/// must be a multiple of 16 bytes. The error names the kernel and the shape.
template <class T, WgmmaMajor AMajor = WgmmaMajor::k, WgmmaMajor BMajor = WgmmaMajor::k, class Out = bf16>
void check_shape(const char* kernel, int64_t m, int64_t n, int64_t k) {
  const int64_t k_multiple = 16 / int64_t(sizeof(T)), mn_multiple = 16 / int64_t(sizeof(T));
  // N is C's row length, and B's when B is MN-major.
  const int64_t n_multiple = std::max<int64_t>(16 / int64_t(sizeof(Out)), BMajor == WgmmaMajor::mn ? mn_multiple : 1);
  bool k_contiguous = AMajor == WgmmaMajor::k || BMajor == WgmmaMajor::k;
  std::string need;
  auto add = [&](const std::string& what) { need += (need.empty() ? "" : " and ") + what; };
  if (AMajor == WgmmaMajor::mn) add("M a multiple of " + std::to_string(mn_multiple));
  add("N a multiple of " + std::to_string(n_multiple));
  if (k_contiguous) add("K a multiple of " + std::to_string(k_multiple));
  // The kernel's tile coordinates reach one tile past M or N in 32-bit arithmetic.
  const int64_t limit = (int64_t(1) << 31) - 256;
  bool ok = m >= 1 && n >= 1 && k >= 1 && m <= limit && n <= limit && k <= limit && n % n_multiple == 0 &&
            (!k_contiguous || k % k_multiple == 0) && (AMajor == WgmmaMajor::k || m % mn_multiple == 0);
  if (!ok)
    throw Error(std::string("error: ") + kernel + " needs M, N and K from 1 to 2^31 - 256 with " + need +
                " (TMA reads and writes rows that start 16-byte multiples apart), not " + std::to_string(m) + " x " +
                std::to_string(n) + " x " + std::to_string(k));
}

/// The grid: one CTA per multiprocessor, or one per tile when there are fewer tiles.
/// In clusters of two: one pair of CTAs per two multiprocessors, or per pair of tile rows.
inline Launch launch_config(const Device& gpu, int64_t m, int64_t n, const Config& c = {}) {
  int64_t rows = c.cluster_m * int64_t(tile_m);
  int64_t tiles = ((m + rows - 1) / rows) * ((n + c.out_n() - 1) / c.out_n());
  uint32_t workers = StaticTileScheduler::grid_size(tiles, gpu.multiprocessors() / c.cluster_m);
  return Launch{.grid = workers * uint32_t(c.cluster_m), .block = threads, .shared_bytes = c.shared_bytes(),
                .cluster = uint32_t(c.cluster_m)};
}

/// The TMA box of an operand: rows x tile_k for a K-major one (rows of M or N), tile_k rows of K
/// by mn_chunk for an MN-major one.
template <class T>
std::array<uint32_t, 2> operand_box(WgmmaMajor major, int rows) {
  if (major == WgmmaMajor::k) return {uint32_t(rows), uint32_t(tile_k_of<T>)};
  return {uint32_t(tile_k_of<T>), uint32_t(mn_chunk_of<T>)};
}

/// The tensor maps of A (m x k, or k x m when MN-major) and B (n x k, or k x n when MN-major),
/// as the kernel's TMA boxes and swizzle want them.
template <class T, Config C = Config{}>
std::pair<TensorMap<T>, TensorMap<T>> tensor_maps(const Buffer<T>& a, const Buffer<T>& b, int64_t m, int64_t n, int64_t k) {
  auto a_view = C.a_major == WgmmaMajor::k ? a.view({m, k}) : a.view({k, m});
  auto b_view = C.b_major == WgmmaMajor::k ? b.view({n, k}) : b.view({k, n});
  auto ab = operand_box<T>(C.a_major, tile_m), bb = operand_box<T>(C.b_major, C.b_box_rows());
  return {make_tensor_map(a_view, {ab[0], ab[1]}, TmaSwizzle::bytes128), make_tensor_map(b_view, {bb[0], bb[1]}, TmaSwizzle::bytes128)};
}

/// The same, carrying only the static facts, for cross-compiling without a GPU.
template <class T, Config C = Config{}>
std::pair<TensorMap<T>, TensorMap<T>> tensor_maps_for_compile() {
  auto ab = operand_box<T>(C.a_major, tile_m), bb = operand_box<T>(C.b_major, C.b_box_rows());
  return {TensorMap<T>::for_compile(2, {ab[0], ab[1]}, TmaSwizzle::bytes128),
          TensorMap<T>::for_compile(2, {bb[0], bb[1]}, TmaSwizzle::bytes128)};
}

/// C's tensor map (m x n, row-major): the epilogue's 64 x 64 chunk as the box, with the swizzle
/// the chunk buffers are written in.
template <class Out = bf16>
TensorMap<Out> output_map(const DeviceTensor<Out>& c) {
  return make_tensor_map(c, {uint32_t(chunk_rows), uint32_t(chunk_cols)}, chunk_swizzle<Out>);
}
template <class Out = bf16>
TensorMap<Out> output_map(const Buffer<Out>& c, int64_t m, int64_t n) {
  return output_map(c.view({m, n}));
}

/// The same for cross-compiling.
template <class Out = bf16>
TensorMap<Out> output_map_for_compile() {
  return TensorMap<Out>::for_compile(2, {uint32_t(chunk_rows), uint32_t(chunk_cols)}, chunk_swizzle<Out>);
}

/// The tile widths a kernel may have, widest first.
inline constexpr int tile_widths[] = {256, 128, 64};

/// Calls `f(std::integral_constant<int, W>{})` with the tile width W = `tile_n` (256, 128 or 64),
/// so that `f` can name the kernel of that width.
template <class F>
auto with_tile_n(int tile_n, F&& f) {
  switch (tile_n) {
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    case 256: return f(std::integral_constant<int, 256>{});
  }
  throw Error("error: the Hopper GEMM's tiles are 256, 128 or 64 columns wide, not " + std::to_string(tile_n));
}
/// The same with the width choose_tile_n picks for this shape on `gpu`.
template <class F>
auto with_tile_n(const Device& gpu, int64_t m, int64_t n, F&& f) {
  return with_tile_n(choose_tile_n(gpu.multiprocessors(), m, n), std::forward<F>(f));
}

/// A kernel's name with its tile width: `base` for 256 columns, `base_n128`, `base_n64`.
inline std::string tile_name(const std::string& base, int tile_n) {
  return tile_n == 256 ? base : base + "_n" + std::to_string(tile_n);
}

}  // namespace gemm_sm90

}  // namespace cutejit::kernels
