// How fast the emulated device runs: thread-instructions per second on one host thread and on
// every core, for the scalar SGEMM example and, once the tensor-copy path exists, the tcgen05
// GEMM. The kernel is compiled by the library (its PTX, as a launch would load it) and run on
// the emulator directly, which counts what it executed.
#include <cutejit/cutejit.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "emulator/machine.hpp"
#include "gemm_sm100.hpp"
#include "sgemm.hpp"

using namespace cutejit;
namespace emu = cutejit::emulator;

namespace {

void put(emu::LaunchConfig& cfg, const emu::Function& fn, size_t& param, const void* value) {
  std::memcpy(cfg.params.data() + fn.params[param].offset, value, fn.params[param].bytes);
  ++param;
}

/// Runs SGEMM m x n x k on the emulator with `threads` host threads; prints the figures.
void sgemm_run(int m, int n, int k, unsigned threads) {
  emu::DeviceMemory memory;
  std::vector<float> a(size_t(m) * k), b(size_t(k) * n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  uint64_t pa = memory.allocate(a.size() * 4), pb = memory.allocate(b.size() * 4), pc = memory.allocate(size_t(m) * n * 4);
  memory.write(pa, a.data(), a.size() * 4);
  memory.write(pb, b.data(), b.size() * 4);
  auto ta = DeviceTensor<f32>::make(pa, std::array<int64_t, 2>{m, k}, std::array<int64_t, 2>{k, 1});
  auto tb = DeviceTensor<f32>::make(pb, std::array<int64_t, 2>{k, n}, std::array<int64_t, 2>{n, 1});
  auto tc = DeviceTensor<f32>::make(pc, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1});
  CompiledKernel compiled = fixtures::sgemm.compile(Target::parse("sm_90a"), ta, tb, tc);
  auto module = emu::parse_ptx(compiled.ptx, [&](const emu::GlobalVariable& g) { return memory.allocate(g.init.size()); });
  const emu::Function& fn = module->functions.at(0);
  // The kernel's parameters: each tensor's pointer, shape and strides (core/kernel_abi.hpp).
  emu::LaunchConfig cfg;
  cfg.grid[0] = uint32_t((n + 15) / 16), cfg.grid[1] = uint32_t((m + 15) / 16);
  cfg.block[0] = 16, cfg.block[1] = 16;
  cfg.params.assign(fn.param_bytes, 0);
  if (fn.params.size() != 15) {
    std::printf("sgemm's parameters are not three (pointer, 2 extents, 2 strides): %zu\n", fn.params.size());
    std::exit(1);
  }
  size_t p = 0;
  for (auto [ptr, rows, cols] : {std::tuple{pa, m, k}, std::tuple{pb, k, n}, std::tuple{pc, m, n}}) {
    put(cfg, fn, p, &ptr);
    for (int32_t v : {rows, cols, cols, 1}) put(cfg, fn, p, &v);
  }
  emu::RunOptions options;
  options.threads = threads;
  emu::Grid grid(*module, fn, cfg, memory, options);
  auto t0 = std::chrono::steady_clock::now();
  grid.run();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<float> c(size_t(m) * n);
  memory.read(pc, c.data(), c.size() * 4);
  double ref = 0, err = 0;
  for (int i = 0; i < m; i += 37)
    for (int j = 0; j < n; j += 41) {
      double r = 0;
      for (int q = 0; q < k; ++q) r += double(a[size_t(i) * k + q]) * b[size_t(q) * n + j];
      ref = std::max(ref, std::abs(r));
      err = std::max(err, std::abs(r - c[size_t(i) * n + j]));
    }
  std::printf("sgemm %dx%dx%d, %u host thread%s: %.2f s, %.1f M thread-instructions/s (%.1f M warp instructions), max error %.1e of %.1e\n",
              m, n, k, threads, threads == 1 ? "" : "s", s, double(grid.thread_instructions) / s / 1e6, double(grid.instructions) / 1e6, err, ref);
}

/// The sm_100 BF16 tcgen05 GEMM at m x n x k on the emulated sm_100a device, through the
/// library as a program calls it: the first launch (compiling, or reading the disk cache) and
/// then a launch alone.
void tcgen05_gemm(int64_t m, int64_t n, int64_t k) {
  namespace g = fixtures::gemm_sm100;
  using Mainloop = g::Dense<bf16>;
  Device dev = Device::emulated(Target::parse("sm_100a"));
  std::vector<bf16> a(size_t(m * k)), b(size_t(n * k));
  std::mt19937 rng(2);
  std::normal_distribution<float> d(0, 1);
  for (bf16& x : a) x = bf16(d(rng));
  for (bf16& x : b) x = bf16(d(rng));
  auto da = dev.upload(a), db = dev.upload(b);
  auto dc = dev.alloc<bf16>(size_t(m * n));
  auto [ta, tb] = g::tensor_maps<Mainloop>(da, db, m, n, k);
  auto tc = g::c_tensor_map(dc, m, n);
  Launch launch = g::launch_config<Mainloop>(dev.multiprocessors(), m, n);
  auto time = [&] {
    auto t0 = std::chrono::steady_clock::now();
    fixtures::gemm_bf16_sm100(dev, launch, ta, tb, tc, int32_t(m), int32_t(n), int32_t(k));
    dev.synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  double first = time(), second = time();
  std::printf("tcgen05 BF16 GEMM %ldx%ldx%ld on the emulated sm_100a (%u host threads): first launch %.2f s (compiling it, or reading the disk cache), a launch %.2f s\n",
              long(m), long(n), long(k), std::max(1u, std::thread::hardware_concurrency()), first, second);
}

}  // namespace

int main() {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  sgemm_run(256, 256, 256, 1);
  sgemm_run(256, 256, 256, cores);
  tcgen05_gemm(512, 512, 512);
  return 0;
}
