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

  // Launch overhead.
  {
    const int64_t n = 1024;
    auto a = gpu.alloc<float>(n), b = gpu.alloc<float>(n), c = gpu.alloc<float>(n);
    Launch cfg = fixtures::vector_add_launch(n);
    CompiledKernel k = fixtures::vector_add.compile(gpu.target(), DeviceTensor<f32>(a), DeviceTensor<f32>(b), DeviceTensor<f32>(c));
    CUmodule module;
    CUfunction raw;
    bench::check(cuModuleLoadData(&module, k.cubin.data()), "cuModuleLoadData");
    bench::check(cuModuleGetFunction(&raw, module, "vector_add"), "cuModuleGetFunction");
    CUdeviceptr pa = a.data(), pb = b.data(), pc = c.data();
    int32_t shape = int32_t(n), stride = 1;
    void* params[] = {&pa, &shape, &stride, &pb, &shape, &stride, &pc, &shape, &stride};
    double raw_us = host_us_per_launch(
        [&] { bench::check(cuLaunchKernel(raw, cfg.grid.x, 1, 1, cfg.block.x, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel"); });
    double ours_us = host_us_per_launch([&] { fixtures::vector_add(gpu, cfg, a, b, c); });
    auto prepared = fixtures::vector_add.prepare(gpu, cfg, a, b, c);
    double prepared_us = host_us_per_launch([&] { prepared(); });
    std::printf("launch_overhead: raw cuLaunchKernel %.3f us, Kernel::operator() %.3f us (+%.3f), PreparedLaunch %.3f us (+%.3f)\n",
                raw_us, ours_us, ours_us - raw_us, prepared_us, prepared_us - raw_us);
  }
  // The same with eight tensors: 24 parameters (each tensor a pointer, its extent and its
  // stride), as the Python launch figures' sum7 has.
  {
    const int64_t n = 1024;
    std::vector<Buffer<float>> t;
    for (int i = 0; i < 8; ++i) t.push_back(gpu.alloc<float>(n));
    Launch cfg{.grid = uint32_t(n / 256), .block = 256};
    auto view = [&](int i) { return DeviceTensor<f32>(t[size_t(i)]); };
    CompiledKernel k = fixtures::sum7.compile(gpu.target(), view(0), view(1), view(2), view(3), view(4), view(5), view(6), view(7));
    CUmodule module;
    CUfunction raw;
    bench::check(cuModuleLoadData(&module, k.cubin.data()), "cuModuleLoadData");
    bench::check(cuModuleGetFunction(&raw, module, "sum7"), "cuModuleGetFunction");
    CUdeviceptr p[8];
    int32_t shape = int32_t(n), stride = 1;
    void* params[24];
    for (int i = 0; i < 8; ++i) {
      p[i] = t[size_t(i)].data();
      params[3 * i] = &p[i], params[3 * i + 1] = &shape, params[3 * i + 2] = &stride;
    }
    double raw_us = host_us_per_launch(
        [&] { bench::check(cuLaunchKernel(raw, cfg.grid.x, 1, 1, cfg.block.x, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel"); });
    double ours_us = host_us_per_launch([&] { fixtures::sum7(gpu, cfg, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]); });
    auto prepared = fixtures::sum7.prepare(gpu, cfg, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]);
    double prepared_us = host_us_per_launch([&] { prepared(); });
    std::printf("launch_overhead_eight_tensors: raw cuLaunchKernel %.3f us, Kernel::operator() %.3f us (+%.3f), PreparedLaunch %.3f us "
                "(+%.3f)\n",
                raw_us, ours_us, ours_us - raw_us, prepared_us, prepared_us - raw_us);
  }
  return 0;
}
