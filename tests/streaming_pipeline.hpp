// The kernel the pipeline tests trace (tests/unit) and run (tests/gpu): one producer thread
// streams `tiles` 8 x 32 f32 boxes through a two-stage PipelineTmaAsync ring, one consumer warp
// copies them out, in order.
#pragma once

#include <cutejit/cutejit.hpp>
#include <cutejit/pipeline/pipeline.hpp>

namespace test {
using namespace cutejit;

inline constexpr int streaming_stages = 2, streaming_tile_bytes = 8 * 32 * 4;

// `extra_load` adds a load the stage does not expect; `acquire_twice` forgets a commit (both for
// the trace-time checks).
inline auto streaming_kernel(bool extra_load, bool acquire_twice) {
  return Kernel{"streaming", [=](TmaDescriptor<f32> in, Tensor<f32> out, Int tiles) {
    Pointer<int8_t> smem = dynamic_shared_aligned<int8_t>(128);
    auto tile = [&](const Int& s) { return Pointer<f32>((smem + s * streaming_tile_bytes).id()); };
    PipelineTmaAsync pipe(Pointer<uint64_t>((smem + streaming_stages * streaming_tile_bytes).id()), streaming_stages, 1, streaming_tile_bytes);
    Int tid = thread_idx().x;
    if_(tid == 0, [&] {
      pipe.init();
      fence_mbarrier_init();
    });
    sync_threads();
    if_(tid == 0, [&] {
      for_(0, tiles, [&](Int k) {
        PipelineState s = PipelineState::at(k, streaming_stages);
        pipe.producer_acquire(s);
        if (acquire_twice) pipe.producer_acquire(s);
        pipe.load(in, tile(s.index), s, {k * 8, 0});
        if (extra_load) pipe.load(in, tile(s.index), s, {k * 8, 0});
        pipe.producer_commit(s);
      });
    });
    if_(tid >= 32, [&] {
      Int lane = tid - 32;
      for_(0, tiles, [&](Int k) {
        PipelineState s = PipelineState::at(k, streaming_stages);
        pipe.consumer_wait(s);
        for (int r = 0; r < 8; ++r) out(k * 256 + r * 32 + lane) = F32(tile(s.index)[r * 32 + lane]);
        sync_warp();
        if_(lane == 0, [&] { pipe.consumer_release(s); });
      });
    });
  }};
}

}  // namespace test

namespace test {

inline constexpr int cp_async_stages = 3, cp_async_tile_floats = 8 * 32;

/// A producer warp streams `tiles` 8 x 32 f32 tiles of `in` (row-major, 32 columns) through a
/// three-stage PipelineCpAsync ring with 16-byte cp.async, the last tile's rows past `rows`
/// zero-filled; a consumer warp copies each tile out. Warps 0 and 1: producer and consumer.
inline Kernel cp_async_streaming{"cp_async_streaming", [](Tensor<f32> in, Tensor<f32> out, Int tiles) {
  // (row, column, stage): row-major tiles, stage after stage.
  Tensor<f32> ring = make_smem_tensor<f32>(Layout(IntTuple{8, 32, cp_async_stages}, IntTuple{32, 1, cp_async_tile_floats}));
  Tensor<uint64_t> barriers = make_smem_tensor<uint64_t>(make_layout(2 * cp_async_stages));
  PipelineCpAsync pipe(barriers.data(), cp_async_stages, 32, 1);
  Int tid = thread_idx().x, lane = tid % 32;
  // The barriers are used within the CTA only: the block barrier makes their initialisation
  // visible (fence.mbarrier_init, for clusters, needs sm_90).
  if_(tid == 0, [&] { pipe.init(); });
  sync_threads();
  auto g2s = make_tiled_copy(CpAsync<16>{}, make_ordered_layout({4, 8}, {1, 0}), make_layout({2, 4}));
  auto thr = g2s.get_slice(lane);
  if_(tid < 32, [&] {
    for_(0, tiles, [&](Int k) {
      PipelineState s = PipelineState::at(k, cp_async_stages);
      pipe.producer_acquire(s);
      CoordTensor coords = local_tile(make_identity_tensor(in.shape()), IntTuple{8, 32}, IntTuple{k, 0});
      Tensor<f32> src = local_tile(in, IntTuple{8, 32}, IntTuple{k, 0});
      Tensor<f32> dst = ring(_, _, s.index);
      copy_if(g2s, thr.partition_S(coords), in.shape(), thr.partition_S(src), thr.partition_D(dst));
      pipe.producer_commit(s);
    });
  });
  if_(tid >= 32, [&] {
    for_(0, tiles, [&](Int k) {
      PipelineState s = PipelineState::at(k, cp_async_stages);
      pipe.consumer_wait(s);
      for (int r = 0; r < 8; ++r) out(k * cp_async_tile_floats + r * 32 + lane) = F32(ring(r, lane, s.index));
      sync_warp();
      if_(lane == 0, [&] { pipe.consumer_release(s); });
    });
  });
}};

}  // namespace test
