// GPU benchmarks for the JIT foundation, each printed next to what it is compared with:
//  - process start -> first kernel launched (context creation, JIT, load, launch);
//  - vector add f32 over 3 x 1 GiB: bandwidth (torch.add is measured by peers.py in the same call);
//  - hot launch overhead: a raw cuLaunchKernel of the same cubin vs Kernel::operator() vs a
//    PreparedLaunch, host time per launch, with three tensors and with eight (the Python launch
//    figures' eight-tensor sum, so that the driver's share of those is known).
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "elementwise_add_tv.hpp"
#include "gpu_timing.hpp"
#include "sum7.hpp"
#include "transpose_swizzle.hpp"
#include "vector_add.hpp"

using namespace cutejit;
using Clock = std::chrono::steady_clock;

namespace {
double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

/// Host time per launch: batches small enough never to fill the launch queue, synchronised
/// between batches (not timed), so the figure is the CPU cost of submitting, not GPU time.
template <class F>
double host_us_per_launch(F&& launch) {
  const int batches = 200, per_batch = 100;
  for (int i = 0; i < per_batch; ++i) launch();
  bench::check(cuCtxSynchronize(), "cuCtxSynchronize");
  std::vector<double> per;
  for (int b = 0; b < batches; ++b) {
    auto t0 = Clock::now();
    for (int i = 0; i < per_batch; ++i) launch();
    auto t1 = Clock::now();
    bench::check(cuCtxSynchronize(), "cuCtxSynchronize");
    per.push_back(ms(t0, t1) * 1000.0 / per_batch);
  }
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

/// Host time per launch of `kernel` on N tensors of n floats, three ways: a raw cuLaunchKernel
/// of its cubin (each tensor three parameters: its pointer, its extent and its stride),
/// Kernel::operator() and a PreparedLaunch.
template <size_t N, class K>
void print_launch_overhead(const char* label, const Device& gpu, K& kernel, const Launch& cfg, int64_t n) {
  std::vector<Buffer<float>> t;
  for (size_t i = 0; i < N; ++i) t.push_back(gpu.alloc<float>(size_t(n)));
  auto on_tensors = [&](auto&& f) { return [&]<size_t... I>(std::index_sequence<I...>) { return f(t[I]...); }(std::make_index_sequence<N>{}); };
  CompiledKernel k = on_tensors([&](const auto&... b) { return kernel.compile(gpu.target(), DeviceTensor<f32>(b)...); });
  CUmodule module;
  CUfunction raw;
  bench::check(cuModuleLoadData(&module, k.cubin.data()), "cuModuleLoadData");
  bench::check(cuModuleGetFunction(&raw, module, k.name.c_str()), "cuModuleGetFunction");
  CUdeviceptr pointers[N];
  int32_t shape = int32_t(n), stride = 1;
  void* params[3 * N];
  for (size_t i = 0; i < N; ++i) {
    pointers[i] = t[i].data();
    params[3 * i] = &pointers[i], params[3 * i + 1] = &shape, params[3 * i + 2] = &stride;
  }
  const double raw_us = host_us_per_launch(
      [&] { bench::check(cuLaunchKernel(raw, cfg.grid.x, 1, 1, cfg.block.x, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel"); });
  const double ours_us = host_us_per_launch([&] { on_tensors([&](const auto&... b) { kernel(gpu, cfg, b...); }); });
  PreparedLaunch prepared = on_tensors([&](const auto&... b) { return kernel.prepare(gpu, cfg, b...); });
  const double prepared_us = host_us_per_launch([&] { prepared(); });
  std::printf("%s: raw cuLaunchKernel %.3f us, Kernel::operator() %.3f us (+%.3f), PreparedLaunch %.3f us (+%.3f)\n", label, raw_us,
              ours_us, ours_us - raw_us, prepared_us, prepared_us - raw_us);
}
}  // namespace

int main() {
  setenv("CUTEJIT_CACHE", "off", 1);  // first-launch figures here are cold JIT, not cache hits
  auto process_start = Clock::now();
  Device gpu;
  auto context_ready = Clock::now();
  {
    auto a = gpu.alloc<float>(1024), b = gpu.alloc<float>(1024), c = gpu.alloc<float>(1024);
    fixtures::vector_add(gpu, fixtures::vector_add_launch(1024), a, b, c);
    gpu.synchronize();
  }
  auto first_done = Clock::now();
  std::printf("first_kernel: context %.1f ms, then JIT + load + launch + sync %.1f ms (total %.1f ms from main)\n",
              ms(process_start, context_ready), ms(context_ready, first_done), ms(process_start, first_done));

  // A second, different kernel in the same process: cold JIT after the first.
  {
    auto t0 = Clock::now();
    auto v = DeviceTensor<f32>::make(0, std::array<int64_t, 1>{1 << 20}, std::array<int64_t, 1>{1});
    CompiledKernel k = fixtures::vector_add.compile(gpu.target(), v, v, DeviceTensor<f32>::make(0, std::array<int64_t, 1>{1 << 20}, std::array<int64_t, 1>{1}));
    std::printf("cold_jit_after_first: vector_add trace->cubin %.1f ms (pipeline %.1f ms: trace %.2f verify %.2f lower %.2f "
                "O3+PTX %.2f assemble %.2f)\n",
                ms(t0, Clock::now()), k.times.total_ms(), k.times.trace_ms, k.times.verify_ms, k.times.lower_ms,
                k.times.codegen_ms, k.times.assemble_ms);
  }

  // Bandwidth: 3 x 1 GiB.
  {
    const int64_t n = int64_t(1) << 28;
    auto a = gpu.upload(fixtures::random_floats(n, 1)), b = gpu.upload(fixtures::random_floats(n, 2));
    auto c = gpu.alloc<float>(n);
    auto launch = fixtures::vector_add.prepare(gpu, fixtures::vector_add_launch(n), a, b, c);
    double t = bench::median_gpu_ms([&] { launch(); }, 30);
    double gbs = 3.0 * double(n) * 4 / (t * 1e-3) / 1e9;
    std::printf("vector_add_bandwidth: %.3f ms per call, %.1f GB/s (3 x 1 GiB f32)\n", t, gbs);
  }

  // The layout-algebra examples on an 8192 x 8192 f32 matrix (peers.py times torch on the same).
  {
    const int64_t m = 8192, n = 8192;
    auto a = gpu.upload(fixtures::random_floats(m * n, 1)), b = gpu.upload(fixtures::random_floats(m * n, 2));
    auto c = gpu.alloc<float>(m * n);
    auto add = fixtures::elementwise_add_tv.prepare(gpu, fixtures::elementwise_add_tv_launch(m, n), a.view({m, n}),
                                                    b.view({m, n}), c.view({m, n}));
    double t = bench::median_gpu_ms([&] { add(); }, 30);
    std::printf("elementwise_add_tv_bandwidth: %.3f ms per call, %.1f GB/s (8192 x 8192 f32, 3 tensors)\n", t,
                3.0 * m * n * 4 / (t * 1e-3) / 1e9);
    auto add256 = fixtures::elementwise_add_tv_256.prepare(gpu, fixtures::elementwise_add_tv_launch(m, n, 8), a.view({m, n}),
                                                           b.view({m, n}), c.view({m, n}));
    t = bench::median_gpu_ms([&] { add256(); }, 30);
    std::printf("elementwise_add_tv_256_bandwidth: %.3f ms per call, %.1f GB/s (8192 x 8192 f32, 3 tensors, 256 threads)\n", t,
                3.0 * m * n * 4 / (t * 1e-3) / 1e9);
    auto transpose = fixtures::transpose_swizzle.prepare(
        gpu, Launch{.grid = {ceil_div(n, 32), ceil_div(m, 32)}, .block = {32, 8}}, a.view({m, n}), c.view({n, m}));
    t = bench::median_gpu_ms([&] { transpose(); }, 30);
    std::printf("transpose_swizzle_bandwidth: %.3f ms per call, %.1f GB/s (8192 x 8192 f32, read + write)\n", t,
                2.0 * m * n * 4 / (t * 1e-3) / 1e9);
  }

  // Launch overhead, with three tensors and with the eight of the Python launch figures' sum7.
  print_launch_overhead<3>("launch_overhead", gpu, fixtures::vector_add, fixtures::vector_add_launch(1024), 1024);
  print_launch_overhead<8>("launch_overhead_eight_tensors", gpu, fixtures::sum7, Launch{.grid = 4, .block = 256}, 1024);
  return 0;
}
