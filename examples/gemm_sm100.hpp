// BF16 and FP8 GEMMs on sm_100 tensor cores (tcgen05 + Tensor Memory), compile-verified only:
// no Blackwell GPU has run them. C (M x N, bf16) = epilogue(A (M x K, row-major) * B^T), B
// stored N x K ("TN"), A and B bf16 (kind::f16) or f8e4m3 (kind::f8f6f4), f32 accumulation in
// TMEM.
//
// Persistent and warp-specialised: one CTA of six warps per multiprocessor walks the 128 x 256
// tiles of C (a StaticTileScheduler, grouped along M):
//  - warp 0, one thread: the producer. For each 128-byte K slice (64 bf16 or 128 FP8
//    elements: one 128-byte swizzle span per row) of each of its tiles it acquires a stage of a
//    4-stage PipelineTmaUmma ring and issues the TMA loads of A's 128 rows and B's 256 rows
//    into it (48 KB), running ahead into the next tile;
//  - warp 1, one thread: the MMA issuer. For each tile it acquires one of two 256-column TMEM
//    accumulators (PipelineUmmaAsync: the epilogue has finished reading it), then for each
//    full stage issues four tcgen05.mma (128 x 256 x 32 bytes of K: k16 bf16, k32 FP8; K-major
//    A and B from shared memory by descriptors that UmmaOperand derives from the stage's
//    swizzled layout and checks) and frees the stage with tcgen05.commit when they are done;
//    after the tile's last stage it commits the accumulator to the epilogue. Warp 1 also
//    allocates the 512 TMEM columns at the start and frees them at the end;
//  - warps 2-5, the epilogue: warp w reads TMEM lanes 32 (w % 4) ... + 31 (the quarter a warp
//    may reach), 32 columns at a time (tcgen05.ld.32x32b.x32), so each thread holds one row of
//    the tile; each value goes through the user's epilogue (`F32 e(F32 acc, Int row, Int
//    col)`, as the Hopper GEMM's), is converted to bf16, and the thread stores its 32 values of
//    the row (64 bytes). Then it frees the accumulator for tile j + 2: while the epilogue
//    stores tile j, the MMAs of tile j + 1 run in the other one.
// M a multiple of 128, N of 256, K of 128 bytes (check_shape): no edge tiles.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <cutejit/atom/sm100/tmem.hpp>
#include <cutejit/atom/sm100/umma.hpp>
#include <cutejit/pipeline/pipeline_umma.hpp>
#include <cutejit/pipeline/shared_storage.hpp>
#include <cutejit/pipeline/tile_scheduler.hpp>

#include "epilogue_hook.hpp"
#include "example.hpp"

namespace examples {
using namespace cutejit;

namespace gemm_sm100 {
inline constexpr int tile_m = 128, tile_n = 256, stages = 4;
/// Warp 0 the producer, warp 1 the MMA issuer, warps 2-5 the epilogue (one per TMEM quarter).
inline constexpr int threads = 192, epilogue_threads = 128;
/// Two accumulators of 256 columns: all 512 of TMEM.
inline constexpr int accumulators = 2, tmem_columns = accumulators * tile_n;
/// Bytes of K per tile row and stage: one 128-byte swizzle span.
inline constexpr int k_bytes = 128;
/// Elements of K per stage: 64 bf16, 128 FP8.
template <class T> inline constexpr int tile_k_of = k_bytes / int(sizeof(T));
/// The TMA box rows of B: two boxes of 128 rows fill a 256-row stage.
inline constexpr int b_box_rows = 128;
/// The epilogue's chunk: 32 TMEM columns per tcgen05.ld (32 registers per thread).
inline constexpr int chunk_cols = 32;
inline constexpr int a_stage_bytes = tile_m * k_bytes, b_stage_bytes = tile_n * k_bytes;
inline constexpr int stage_bytes = a_stage_bytes + b_stage_bytes;
inline constexpr int barriers_offset = stages * stage_bytes;
/// After the ring's barriers: the accumulators' barriers and the TMEM address word.
inline constexpr int accumulator_barriers_offset = barriers_offset + PipelineTmaUmma::barrier_bytes(stages);
inline constexpr int tmem_slot_offset = accumulator_barriers_offset + PipelineUmmaAsync::barrier_bytes(accumulators);
inline constexpr uint32_t shared_bytes = uint32_t(tmem_slot_offset + 4) + dynamic_shared_slack(1024);
static_assert(shared_bytes <= 232448, "the ring fits the 227 KB of shared memory a CTA may have");

/// The MMA: 128 x 256, operands both K-major, f32 in 256 TMEM columns.
template <class T>
using Atom = Tcgen05MmaSS<T, tile_m, tile_n>;

/// A stage's tile of `rows` rows as the TMA box left it: rows of 128 bytes with the 128-byte
/// swizzle (Sw<3,3,3> of a bf16 offset, Sw<3,4,3> of an FP8 one).
template <class T>
Tensor<T> stage_tile(const Pointer<T>& p, int rows) {
  const int base = sizeof(T) == 2 ? 3 : 4;  // log2 of the elements in 16 bytes
  return make_tensor(p, composition(Swizzle(3, base, 3), make_layout({rows, tile_k_of<T>}, LayoutRight{})));
}

template <class T, Epilogue E = Identity>
void kernel(const TmaDescriptor<T>& a, const TmaDescriptor<T>& b, const Tensor<bf16>& c, const Int& m, const Int& n, const Int& k,
            const E& epilogue = {}) {
  constexpr int tile_k = tile_k_of<T>;
  launch_bounds(threads, 1);
  Int k_tiles = k / tile_k;
  StaticTileScheduler scheduler(m / tile_m, n / tile_n);
  auto tile_origin = [&](const Int& j) {
    auto [tm, tn] = scheduler.tile(j);
    return std::pair{tm * tile_m, tn * tile_n};
  };
  Pointer<int8_t> smem = dynamic_shared_aligned<int8_t>(1024);
  auto a_tile = [&](const Int& s) { return Pointer<T>((smem + s * a_stage_bytes).id()); };
  auto b_tile = [&](const Int& s) { return Pointer<T>((smem + stages * a_stage_bytes + s * b_stage_bytes).id()); };
  // Tile j of this CTA uses ring iterations j * k_tiles ... and accumulator j % 2.
  PipelineTmaUmma ab(Pointer<uint64_t>((smem + barriers_offset).id()), stages, stage_bytes);
  PipelineUmmaAsync acc(Pointer<uint64_t>((smem + accumulator_barriers_offset).id()), accumulators, epilogue_threads);
  TmemAllocation tmem(Pointer<uint32_t>((smem + tmem_slot_offset).id()), tmem_columns);

  Int tid = thread_idx().x, warp = tid / 32, lane = tid % 32;
  if_(tid == 0, [&] {
    ab.init();
    acc.init();
    fence_mbarrier_init();
    a.prefetch();
    b.prefetch();
  });
  if_(warp == 1, [&] { tmem.allocate(); });
  tcgen05_fence_before_thread_sync();
  sync_threads();
  tcgen05_fence_after_thread_sync();
  Value<uint32_t> d = tmem.address();
  auto accumulator = [&](const PipelineState& t) { return d + cast<uint32_t>(t.index) * uint32_t(tile_n); };

  if_(tid == 0, [&] {
    for_(0, scheduler.my_tile_count(), [&](Int j) {
      auto [m0, n0] = tile_origin(j);
      for_(0, k_tiles, [&](Int kt) {
        PipelineState s = PipelineState::at(j * k_tiles + kt, stages);
        ab.producer_acquire(s);
        ab.load(a, a_tile(s.index), s, {m0, kt * tile_k});
        for (int i = 0; i < tile_n / b_box_rows; ++i)
          ab.load(b, b_tile(s.index) + i * (b_box_rows * tile_k), s, {n0 + i * b_box_rows, kt * tile_k});
        ab.producer_commit(s);
      });
    });
  });
  if_(tid == 32, [&] {
    Atom<T> atom;
    for_(0, scheduler.my_tile_count(), [&](Int j) {
      PipelineState t = PipelineState::at(j, accumulators);
      acc.producer_acquire(t);
      tcgen05_fence_after_thread_sync();
      Value<uint32_t> dt = accumulator(t);
      for_(0, k_tiles, [&](Int kt) {
        PipelineState s = PipelineState::at(j * k_tiles + kt, stages);
        ab.consumer_wait(s);
        tcgen05_fence_after_thread_sync();
        auto [A, B] = make_umma_operands(atom, stage_tile(a_tile(s.index), tile_m), stage_tile(b_tile(s.index), tile_n));
        cutejit::gemm(atom, dt, A, B, kt > 0);  // (the examples' gemm namespace would hide the function)
        ab.consumer_release(s);
      });
      acc.producer_commit(t);
    });
  });
  if_(warp >= 2, [&] {
    // Warp w reaches TMEM lanes 32 (w % 4) ...: its thread `lane` holds that row of the tile.
    Int quarter = warp % 4, row_in_tile = quarter * 32 + lane;
    for_(0, scheduler.my_tile_count(), [&](Int j) {
      auto [m0, n0] = tile_origin(j);
      PipelineState t = PipelineState::at(j, accumulators);
      acc.consumer_wait(t);
      // tcgen05.ld is .sync.aligned: the warp's threads, which left the wait loop each on its
      // own iteration, meet again first.
      sync_warp();
      tcgen05_fence_after_thread_sync();
      Int row = m0 + row_in_tile;
      // check_shape guarantees N is a multiple of 256: each row's chunks are 64-byte aligned, and
      // the stores are 16-byte vectors.
      Tensor<bf16> out_row = make_tensor(c.data() + row * assume_divisible(n, tile_n) + n0, make_layout({tile_n}));
      for (int chunk = 0; chunk < tile_n / chunk_cols; ++chunk) {
        Tensor<float> values = TmemAccumulator{accumulator(t), tile_n}.load_row<chunk_cols>(warp, chunk * chunk_cols);
        Tensor<bf16> out = make_rmem_tensor<bf16>(IntTuple{chunk_cols});
        for (int i = 0; i < chunk_cols; ++i) {
          F32 x = F32(values(i));
          if constexpr (!std::is_same_v<E, Identity>) x = F32(epilogue(x, row, n0 + chunk * chunk_cols + i));
          out(i) = cast<bf16>(x);
        }
        copy(out, make_tensor(out_row.data() + chunk * chunk_cols, make_layout({chunk_cols})));
      }
      // This thread's loads are done: the MMA thread may overwrite the accumulator.
      tcgen05_fence_before_thread_sync();
      acc.consumer_release(t);
    });
  });
  // Every warp's last TMEM access is done before warp 1 frees the columns.
  tcgen05_fence_before_thread_sync();
  sync_threads();
  if_(warp == 1, [&] { tmem.free(d); });
}

/// Throws unless the shape is one this kernel covers: whole tiles.
template <class T>
void check_shape(int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0 || m % tile_m || n % tile_n || k % tile_k_of<T> || m * n >= (int64_t(1) << 31))
    throw Error("the sm_100 GEMM needs M a multiple of 128, N of 256 and K of " + std::to_string(tile_k_of<T>) +
                " (whole tiles), M x N below 2^31, not " + std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k));
}

/// The grid: one CTA per multiprocessor, or one per tile when there are fewer tiles.
inline Launch launch_config(int multiprocessors, int64_t m, int64_t n) {
  return Launch{.grid = StaticTileScheduler::grid_size((m / tile_m) * (n / tile_n), multiprocessors), .block = threads,
                .shared_bytes = shared_bytes};
}

/// The tensor maps of A (m x k) and B (n x k): boxes of 128 rows x 128 bytes, 128-byte swizzled.
template <class T>
std::pair<TensorMap<T>, TensorMap<T>> tensor_maps(const Buffer<T>& a, const Buffer<T>& b, int64_t m, int64_t n, int64_t k) {
  return {make_tensor_map(a.view({m, k}), {uint32_t(tile_m), uint32_t(tile_k_of<T>)}, TmaSwizzle::bytes128),
          make_tensor_map(b.view({n, k}), {uint32_t(b_box_rows), uint32_t(tile_k_of<T>)}, TmaSwizzle::bytes128)};
}

/// The same, carrying only the static facts, for cross-compiling without a GPU.
template <class T>
std::pair<TensorMap<T>, TensorMap<T>> tensor_maps_for_compile() {
  return {TensorMap<T>::for_compile(2, {uint32_t(tile_m), uint32_t(tile_k_of<T>)}, TmaSwizzle::bytes128),
          TensorMap<T>::for_compile(2, {uint32_t(b_box_rows), uint32_t(tile_k_of<T>)}, TmaSwizzle::bytes128)};
}
}  // namespace gemm_sm100

inline Kernel gemm_bf16_sm100{"gemm_bf16_sm100", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, Tensor<bf16> c, Int m, Int n, Int k) {
  gemm_sm100::kernel<bf16>(a, b, c, m, n, k);
}};
inline Kernel gemm_fp8_sm100{"gemm_fp8_sm100", [](TmaDescriptor<f8e4m3> a, TmaDescriptor<f8e4m3> b, Tensor<bf16> c, Int m, Int n, Int k) {
  gemm_sm100::kernel<f8e4m3>(a, b, c, m, n, k);
}};

/// A kernel cross-compiled for `target` (an sm_100-family target) at an m x n x k shape.
template <class T, class K>
CompiledKernel gemm_sm100_compile(const K& kernel, const Target& target, int64_t m = 256, int64_t n = 512, int64_t k = 512) {
  gemm_sm100::check_shape<T>(m, n, k);
  auto [ta, tb] = gemm_sm100::tensor_maps_for_compile<T>();
  return kernel.compile(target, ta, tb, DeviceTensor<bf16>::for_compile({m * n}), int32_t(m), int32_t(n), int32_t(k));
}
inline CompiledKernel gemm_bf16_sm100_compile(const Target& target) { return gemm_sm100_compile<bf16>(gemm_bf16_sm100, target); }
inline CompiledKernel gemm_fp8_sm100_compile(const Target& target) { return gemm_sm100_compile<f8e4m3>(gemm_fp8_sm100, target); }

}  // namespace examples
