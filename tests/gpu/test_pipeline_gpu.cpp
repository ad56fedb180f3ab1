// The pipeline and tile scheduler on the GPU: a TMA stream through a two-stage ring arrives
// whole and in order, and the persistent scheduler hands every tile to exactly one CTA, in its
// grouped order.
#include <catch2/catch.hpp>

#include <cutejit/pipeline/pipeline.hpp>
#include <cutejit/pipeline/tile_scheduler.hpp>

#include <vector>

#include "streaming_pipeline.hpp"
#include "support.hpp"

using namespace cutejit;

namespace {
auto streaming = test::streaming_kernel(false, false);

// CTA b writes, for its j-th tile, (b, j) into that tile's slot: each slot must be written once.
Kernel schedule{"schedule", [](Tensor<i32> owner, Tensor<i32> order, Int tiles_m, Int tiles_n, Constexpr<int> along_n) {
  StaticTileScheduler sched(tiles_m, tiles_n, 3, along_n ? Raster::along_n : Raster::along_m);
  if_(thread_idx().x == 0, [&] {
    for_(0, sched.my_tile_count(), [&](Int j) {
      auto [tm, tn] = sched.tile(j);
      Int slot = tm * tiles_n + tn;
      atomic_add(owner(slot), 1);
      order(slot) = block_idx().x + j * grid_dim().x;  // the tile's number in the walk
    });
  });
}};
}  // namespace

TEST_CASE("a TMA pipeline streams 64 tiles through two stages, whole and in order", "[gpu]") {
  Device gpu;
  const int tiles = 64, rows = 8 * tiles, cols = 32;
  std::vector<float> host(rows * cols);
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i) * 0.25f;
  auto in = gpu.upload(host);
  auto out = gpu.upload(std::vector<float>(host.size(), -1.0f));
  auto map = make_tensor_map(in.view({rows, cols}), {8, 32}, TmaSwizzle::none);
  uint32_t shared = test::streaming_stages * test::streaming_tile_bytes + PipelineTmaAsync::barrier_bytes(test::streaming_stages) +
                    dynamic_shared_slack(128);
  streaming(gpu, Launch{.grid = 1, .block = 64, .shared_bytes = shared}, map, out, tiles);
  gpu.synchronize();
  CHECK(out.to_host() == host);
}

TEST_CASE("the static persistent scheduler gives every tile to one CTA, in grouped order", "[gpu]") {
  Device gpu;
  for (int along_n : {0, 1}) {
    const int tiles_m = 10, tiles_n = 7, tiles = tiles_m * tiles_n;  // groups of 3 leave a short last group
    auto owner = gpu.upload(std::vector<int32_t>(tiles, 0));
    auto order = gpu.upload(std::vector<int32_t>(tiles, -1));
    schedule(gpu, Launch{.grid = 16, .block = 32}, owner, order, tiles_m, tiles_n, along_n);
    gpu.synchronize();
    CHECK(owner.to_host() == std::vector<int32_t>(tiles, 1));
    // The grouped walk, built directly: groups of 3 tile rows (columns, along N), across the
    // group's columns (rows), down (along) each one.
    std::vector<int32_t> expected(tiles);
    const int major = along_n ? tiles_n : tiles_m, minor = along_n ? tiles_m : tiles_n;
    int t = 0;
    for (int first = 0; first < major; first += 3)
      for (int b = 0; b < minor; ++b)
        for (int a = first; a < std::min(first + 3, major); ++a) expected[along_n ? b * tiles_n + a : a * tiles_n + b] = t++;
    INFO("along_n " << along_n);
    CHECK(order.to_host() == expected);
  }
}

namespace {
// PipelineAsync: warp 0 writes each tile of 32 values into a stage with ordinary stores (every
// lane arrives), warp 1 reads it back out; 3 stages, 50 tiles, so the ring wraps many times.
Kernel thread_stream{"thread_stream", [](Tensor<i32> out, Int tiles) {
  constexpr int ring = 3;
  Pointer<int8_t> smem = dynamic_shared_aligned<int8_t>(128);
  Pointer<i32> data((smem + 0).id());
  PipelineAsync pipe(Pointer<uint64_t>((smem + ring * 32 * 4).id()), ring, /*producers=*/32, /*consumers=*/1);
  Int tid = thread_idx().x, lane = tid % 32;
  if_(tid == 0, [&] {
    pipe.init();
    fence_mbarrier_init();
  });
  sync_threads();
  if_(tid < 32, [&] {
    for_(0, tiles, [&](Int k) {
      PipelineState s = PipelineState::at(k, ring);
      pipe.producer_acquire(s);
      data[s.index * 32 + lane] = k * 1000 + lane;
      pipe.producer_commit(s);
    });
  }).else_([&] {
    for_(0, tiles, [&](Int k) {
      PipelineState s = PipelineState::at(k, ring);
      pipe.consumer_wait(s);
      out(k * 32 + lane) = Int(data[s.index * 32 + lane]);
      sync_warp();
      if_(lane == 0, [&] { pipe.consumer_release(s); });
    });
  });
}};

// PipelineTmaStore: one thread fills two 8 x 32 buffers in turn and TMA-stores each; a buffer is
// rewritten only once the store that read it has finished reading.
Kernel tma_store_stream{"tma_store_stream", [](TmaDescriptor<f32> out, Int tiles) {
  Pointer<f32> buffers = dynamic_shared_aligned<f32>(128);
  PipelineTmaStore stores(2);
  if_(thread_idx().x == 0, [&] {
    for_(0, tiles, [&](Int k) {
      Pointer<f32> buf = buffers + (k % 2) * 256;
      stores.producer_acquire();
      for_(0, 256, [&](Int i) { buf[i] = cast<f32>(k * 256 + i); });
      fence_proxy_async_shared();
      out.store(buf, {k * 8, 0});
      stores.producer_commit();
    });
    stores.tail();
  });
}};
}  // namespace

TEST_CASE("PipelineAsync carries 50 tiles from a producer warp to a consumer warp through 3 stages", "[gpu]") {
  Device gpu;
  const int tiles = 50;
  auto out = gpu.upload(std::vector<int32_t>(tiles * 32, -1));
  uint32_t shared = 3 * 32 * 4 + PipelineAsync::barrier_bytes(3) + dynamic_shared_slack(128);
  thread_stream(gpu, Launch{.grid = 1, .block = 64, .shared_bytes = shared}, out, tiles);
  gpu.synchronize();
  std::vector<int32_t> expected(tiles * 32);
  for (int k = 0; k < tiles; ++k)
    for (int l = 0; l < 32; ++l) expected[size_t(k * 32 + l)] = k * 1000 + l;
  CHECK(out.to_host() == expected);
}

TEST_CASE("PipelineTmaStore streams 40 tiles out of two shared buffers", "[gpu]") {
  Device gpu;
  const int tiles = 40, rows = 8 * tiles, cols = 32;
  auto out = gpu.upload(std::vector<float>(rows * cols, -1.0f));
  auto map = make_tensor_map(out.view({rows, cols}), {8, 32}, TmaSwizzle::none);
  tma_store_stream(gpu, Launch{.grid = 1, .block = 32, .shared_bytes = 2 * 256 * 4 + dynamic_shared_slack(128)}, map, tiles);
  gpu.synchronize();
  std::vector<float> expected(rows * cols);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = float(i);
  CHECK(out.to_host() == expected);
}

TEST_CASE("a cp.async pipeline streams tiles from a producer warp to a consumer warp, zero-filling past the end", "[gpu]") {
  Device gpu;
  const int tiles = 50, rows = 8 * tiles - 5, cols = 32;  // the last tile has 3 rows
  std::vector<float> host(size_t(rows * cols));
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i) * 0.5f - 7.0f;
  auto in = gpu.upload(host);
  auto out = gpu.upload(std::vector<float>(size_t(tiles * 8 * cols), NAN));
  test::cp_async_streaming(gpu, Launch{.grid = 1, .block = 64}, in.view({rows, cols}), out, tiles);
  gpu.synchronize();
  std::vector<float> expected = host;
  expected.resize(size_t(tiles * 8 * cols), 0.0f);
  CHECK(out.to_host() == expected);
}
