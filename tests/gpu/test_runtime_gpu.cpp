// The runtime a kernel author reaches for, on the GPU: streams and events (ordering and
// timing), Buffer::fill / zero / copy_from, asynchronous uploads and downloads through pinned
// memory, and the bench helper's warm-up, repetitions and input rotation.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include <cutejit/cutejit.hpp>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
Kernel add_one{"runtime_add_one", [](Tensor<i32> x) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(x), [&] { x(i) = Int(x(i)) + 1; });
}};
// Slow enough to time: every thread adds 1 to its element `rounds` times through memory.
Kernel spin{"runtime_spin", [](Tensor<i32> x, Int rounds) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(x), [&] { for_(0, rounds, [&](Int) { x(i) = Int(x(i)) + 1; }); });
}};
// Records which input set each run used: runs[n] = set, n = the run's number.
Kernel note_set{"runtime_note_set", [](Tensor<i32> runs, Tensor<i32> counter, Int set) {
  if_(thread_idx().x == 0, [&] {
    Int n = atomic_add(counter(0), 1);
    runs(n) = set;
  });
}};
}  // namespace

TEST_CASE("work on a Stream runs in order, and Events time it", "[gpu]") {
  Device gpu;
  Stream stream(gpu);
  const int n = 1 << 20;
  Buffer<int32_t> x = gpu.alloc<int32_t>(n);
  x.zero(stream);
  Event start(gpu), end(gpu);
  start.record(stream);
  spin(gpu, Launch{.grid = ceil_div(n, 256), .block = 256, .stream = stream}, x.view({n}), 200);
  add_one(gpu, Launch{.grid = ceil_div(n, 256), .block = 256, .stream = stream}, x.view({n}));
  end.record(stream);
  float ms = elapsed_ms(start, end);
  CHECK(end.done());
  CHECK(ms > 0.0f);
  CHECK(ms < 10000.0f);
  stream.synchronize();
  std::vector<int32_t> got = x.to_host();
  CHECK(std::count(got.begin(), got.end(), 201) == n);
}

TEST_CASE("Buffer fill, zero and copy_from, and async transfers through pinned memory on a stream", "[gpu]") {
  Device gpu;
  Stream stream(gpu);
  Buffer<float> f = gpu.alloc<float>(1000);
  f.fill(1.5f, stream);
  Buffer<bf16> h = gpu.alloc<bf16>(333);
  h.fill(bf16(-2.0f), stream);
  Buffer<uint8_t> b = gpu.alloc<uint8_t>(77);
  b.fill(uint8_t(0xab), stream);
  Buffer<float> g = gpu.alloc<float>(1000);
  g.copy_from(f, stream);
  stream.synchronize();
  for (float v : g.to_host()) REQUIRE(v == 1.5f);
  for (bf16 v : h.to_host()) REQUIRE(float(v) == -2.0f);
  for (uint8_t v : b.to_host()) REQUIRE(v == 0xab);
  f.zero();
  for (float v : f.to_host()) REQUIRE(v == 0.0f);

  // Upload, a kernel and the download queued on one stream: the download sees the kernel's result.
  const int n = 4096;
  PinnedBuffer<int32_t> in = gpu.alloc_pinned<int32_t>(n), out = gpu.alloc_pinned<int32_t>(n);
  for (int i = 0; i < n; ++i) in[size_t(i)] = 3 * i, out[size_t(i)] = -1;
  Buffer<int32_t> x = gpu.alloc<int32_t>(n);
  x.upload_async(in, stream);
  add_one(gpu, Launch{.grid = ceil_div(n, 256), .block = 256, .stream = stream}, x.view({n}));
  x.download_async(out, stream);
  stream.synchronize();
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += out[size_t(i)] != 3 * i + 1;
  CHECK(wrong == 0);

  CHECK_THROWS_WITH(g.copy_from(gpu.alloc<float>(999)), Contains("Buffer::copy_from moves a whole buffer: 1000 elements, not 999"));
  std::vector<int32_t> small(10);
  CHECK_THROWS_WITH(x.download_async(small, stream), Contains("Buffer::download_async moves a whole buffer: 4096 elements, not 10"));
}

TEST_CASE("bench warms up, times each run alone, and rotates the input sets", "[gpu]") {
  Device gpu;
  Stream stream(gpu);
  Buffer<int32_t> runs = gpu.upload(std::vector<int32_t>(64, -1)), counter = gpu.upload(std::vector<int32_t>{0});
  BenchResult r = bench(
      gpu, [&](int set) { note_set(gpu, Launch{.grid = 1, .block = 32, .stream = stream}, runs.view({64}), counter.view({1}), set); },
      BenchOptions{.warmup = 2, .reps = 7, .rotate = 3, .stream = stream});
  stream.synchronize();
  CHECK(r.samples_ms.size() == 7);
  CHECK(r.min_ms <= r.median_ms);
  CHECK(r.median_ms <= r.max_ms);
  CHECK(r.min_ms > 0.0);
  CHECK(counter.to_host()[0] == 9);
  std::vector<int32_t> sets = runs.to_host();
  for (int i = 0; i < 9; ++i) CHECK(sets[size_t(i)] == i % 3);
  CHECK(sets[9] == -1);
  CHECK_THROWS_WITH(bench(gpu, [](int) {}, BenchOptions{.reps = 0}), Contains("bench needs reps >= 1"));
  CHECK_THROWS_WITH(bench(gpu, [](int) {}, BenchOptions{.queued = -1}), Contains("queued >= 0"));
}

TEST_CASE("bench's queued mode times several runs a sample, in order, rotating the sets across them", "[gpu]") {
  Device gpu;
  Stream stream(gpu);
  Buffer<int32_t> runs = gpu.upload(std::vector<int32_t>(64, -1)), counter = gpu.upload(std::vector<int32_t>{0});
  BenchResult r = bench(
      gpu, [&](int set) { note_set(gpu, Launch{.grid = 1, .block = 32, .stream = stream}, runs.view({64}), counter.view({1}), set); },
      BenchOptions{.warmup = 1, .reps = 4, .rotate = 3, .queued = 5, .stream = stream});
  stream.synchronize();
  CHECK(r.samples_ms.size() == 4);
  CHECK(r.min_ms > 0.0);
  CHECK(counter.to_host()[0] == 1 + 4 * 5);
  std::vector<int32_t> sets = runs.to_host();
  for (int i = 0; i < 21; ++i) CHECK(sets[size_t(i)] == i % 3);
  CHECK(sets[21] == -1);
}
