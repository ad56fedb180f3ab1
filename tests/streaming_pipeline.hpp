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
