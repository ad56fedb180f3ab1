// Launch behaviour on a real GPU: the hot path does not re-trace, prepared launches, launch
// checks (shared memory, block size, clusters, host pointers), dynamic shared memory past 48 KB.
#include <catch2/catch.hpp>

#include <vector>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
int traces = 0;  // bumped by the kernel body, which only runs when a specialization is traced
Kernel fill_value{"fill", [](Tensor<i32> out, Constexpr<int> value) {
  ++traces;
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(out), [&] { out(i) = int(value); });
}};
}  // namespace

TEST_CASE("a seen specialization launches without tracing again; a new one traces once", "[gpu]") {
  Device gpu;
  auto out = gpu.upload(std::vector<int32_t>(1000, -1));
  Launch cfg{.grid = 4, .block = 256};
  int before = traces;
  fill_value(gpu, cfg, out, 7);
  fill_value(gpu, cfg, out, 7);
  CHECK(traces == before + 1);
  fill_value(gpu, cfg, out, 9);
  CHECK(traces == before + 2);
  PreparedLaunch prepared = fill_value.prepare(gpu, cfg, out, 11);
  CHECK(traces == before + 3);
  prepared();
  prepared();
  gpu.synchronize();
  CHECK(traces == before + 3);
  for (int32_t v : out.to_host()) REQUIRE(v == 11);
}

TEST_CASE("launches alternating between loaded specializations each run their own", "[gpu]") {
  // The lookup remembers the last specialization it found: a launch of another must not run it.
  Device gpu;
  auto out = gpu.upload(std::vector<int32_t>(1000, -1));
  Launch cfg{.grid = 4, .block = 256};
  for (int value : {21, 22, 21, 23, 22, 22, 21}) {
    fill_value(gpu, cfg, out, value);
    gpu.synchronize();
    for (int32_t v : out.to_host()) REQUIRE(v == value);
  }
}

TEST_CASE("launch checks: shared memory, block size, grid", "[gpu]") {
  Device gpu;
  auto out = gpu.upload(std::vector<int32_t>(64, 0));
  CHECK_THROWS_WITH(fill_value(gpu, Launch{.grid = 1, .block = 64, .shared_bytes = 4u << 20}, out, 1),
                    Contains("needs 4194304 bytes of shared memory per block") && Contains("allows at most"));
  CHECK_THROWS_WITH(fill_value(gpu, Launch{.grid = 1, .block = 2048}, out, 1),
                    Contains("a block of 2048 threads is more than this kernel allows"));
  CHECK_THROWS_WITH(fill_value(gpu, Launch{.grid = {0}, .block = 64}, out, 1), Contains("must not be empty"));
  // Past the grid's limits the driver says only "invalid argument".
  CHECK_THROWS_WITH(fill_value(gpu, Launch{.grid = {1, 65536}, .block = 64}, out, 1),
                    Contains("the grid (1, 65536, 1) is over the limits") && Contains("put the largest extent in x"));
  CHECK_THROWS_WITH(fill_value(gpu, Launch{.grid = {1, 1, 65536}, .block = 64}, out, 1), Contains("is over the limits"));
  CHECK_THROWS_WITH(fill_value(gpu, Launch{.grid = 1, .block = {1, 1, 128}}, out, 1), Contains("64 in z"));
  fill_value(gpu, Launch{.grid = {1, 65535}, .block = 1}, out, 1);  // the limit itself launches
  gpu.synchronize();
}

TEST_CASE("a kernel that declares its block runs with it; a launch with another block is an error at the launch's line", "[gpu]") {
  Device gpu;
  Kernel block_sums{"block_sums", [](Tensor<i32> in, Tensor<i32> out) {
    block_shape(128);
    Int i = block_idx().x * block_dim().x + thread_idx().x;
    Int total = block_reduce(Int(in(i)), 128);
    if_(thread_idx().x == 0, [&] { out(block_idx().x) = total; });
  }};
  std::vector<int32_t> h(512);
  for (int i = 0; i < 512; ++i) h[size_t(i)] = i * 7 - 1000;
  auto in = gpu.upload(h);
  auto out = gpu.upload(std::vector<int32_t>(4, -1));
  block_sums(gpu, Launch{.grid = 4, .block = 128}, in, out);
  gpu.synchronize();
  std::vector<int32_t> sums = out.to_host();
  for (int b = 0; b < 4; ++b) {
    int32_t expected = 0;
    for (int i = 0; i < 128; ++i) expected += h[size_t(b * 128 + i)];
    CHECK(sums[size_t(b)] == expected);
  }
  const int launch_line = __LINE__ + 1;
  CHECK_THROWS_WITH(block_sums(gpu, Launch{.grid = 2, .block = 256}, in, out),
                    Contains("test_launch_gpu.cpp:" + std::to_string(launch_line)) &&
                        Contains("the kernel declares blocks of (128, 1, 1) (block_shape) but the launch asks for (256, 1, 1)"));
  CHECK(out.to_host() == sums);  // the refused launch wrote nothing
}

TEST_CASE("a host pointer is rejected where a device pointer is needed", "[gpu]") {
  Device gpu;
  std::vector<float> host(16);
  CHECK_THROWS_WITH(DeviceTensor<float>::from_pointer(reinterpret_cast<uint64_t>(host.data()), {16}, {1}),
                    Contains("is not device memory"));
  auto buffer = gpu.alloc<float>(16);
  CHECK_NOTHROW(DeviceTensor<float>::from_pointer(buffer.data(), {16}, {1}));
}

TEST_CASE("thread-block clusters: ranks within a cluster, and grid/cluster mismatch", "[gpu]") {
  Device gpu;
  Kernel ranks{"cluster_ranks", [](Tensor<i32> out) {
    if_(thread_idx().x == 0, [&] { out(block_idx().x) = cluster_cta_rank(); });
    cluster_arrive();
    cluster_wait();
  }};
  auto out = gpu.upload(std::vector<int32_t>(8, -1));
  ranks(gpu, Launch{.grid = 8, .block = 32, .cluster = 4}, out);
  gpu.synchronize();
  CHECK(out.to_host() == std::vector<int32_t>{0, 1, 2, 3, 0, 1, 2, 3});
  CHECK_THROWS_WITH(ranks(gpu, Launch{.grid = 6, .block = 32, .cluster = 4}, out),
                    Contains("the grid (6, 1, 1) is not a multiple of the cluster shape (4, 1, 1)"));
  CHECK_THROWS_WITH(ranks(gpu, Launch{.grid = 16, .block = 32, .cluster = 16}, out),
                    Contains("a cluster of 16 blocks is over the portable limit of 8"));
}

TEST_CASE("dynamic shared memory beyond 48 KB", "[gpu]") {
  Device gpu;
  const int n = 40 * 1024;  // 160 KB of floats
  Kernel reverse{"reverse_through_smem", [](Tensor<f32> in, Tensor<f32> out) {
    Pointer<f32> smem = dynamic_shared<f32>();
    Int t = thread_idx().x, threads = block_dim().x, n = size(in);
    for_(t, n, threads, [&](Int i) { smem[i] = in(i); });
    sync_threads();
    for_(t, n, threads, [&](Int i) { out(i) = smem[n - 1 - i]; });
  }};
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i);
  auto in = gpu.upload(h);
  auto out = gpu.upload(std::vector<float>(n, NAN));
  reverse(gpu, Launch{.grid = 1, .block = 512, .shared_bytes = n * 4}, in, out);
  gpu.synchronize();
  auto r = out.to_host();
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += r[i] != float(n - 1 - i);
  CHECK(wrong == 0);
}

TEST_CASE("accurate and fast math agree with the host within their error bounds", "[gpu]") {
  Device gpu;
  Kernel math{"math_check", [](Tensor<f32> x, Tensor<f32> accurate, Tensor<f32> fast) {
    Int i = block_idx().x * block_dim().x + thread_idx().x;
    if_(i < size(x), [&] {
      F32 v = x(i);
      accurate(i) = exp(v) + sin(v) + tanh(v) + sqrt(abs(v));
      fast(i) = fast::exp(v) + fast::sin(v) + fast::tanh(v) + fast::sqrt(abs(v));
    });
  }};
  const int n = 4096;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = -3.0f + 6.0f * float(i) / n;
  auto x = gpu.upload(h);
  auto a = gpu.upload(std::vector<float>(n, NAN)), f = gpu.upload(std::vector<float>(n, NAN));
  math(gpu, Launch{.grid = n / 256, .block = 256}, x, a, f);
  gpu.synchronize();
  auto ha = a.to_host(), hf = f.to_host();
  double worst_accurate = 0, worst_fast = 0;
  for (int i = 0; i < n; ++i) {
    double v = h[i], ref = std::exp(v) + std::sin(v) + std::tanh(v) + std::sqrt(std::abs(v));
    // Scaled by the terms' magnitudes: the sum itself crosses zero near v = -2.5.
    double scale = std::exp(v) + std::abs(std::sin(v)) + std::abs(std::tanh(v)) + std::sqrt(std::abs(v));
    worst_accurate = std::max(worst_accurate, std::abs(ha[i] - ref) / scale);
    worst_fast = std::max(worst_fast, std::abs(hf[i] - ref) / scale);
  }
  CHECK(worst_accurate < 1e-6);
  CHECK(worst_fast < 1e-3);
}
