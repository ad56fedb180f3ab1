// The Hopper tensor-core GEMMs (tests/fixtures/gemm_bf16.hpp, gemm_fp8.hpp) on the GPU:
// TFLOP/s on 8192^3, 4096^3, 8192x8192x1024, 16384x1024x8192 and 128x8192x8192 (M x N x K;
// the mma.sync GEMMs of gemm_sm80.hpp and gemm_tma_tensorop.hpp on the two square ones),
// the median of 30 timed runs after warm-up (CUDA events through the driver API), rotating
// through copies of A, B and C so that no run finds its inputs in L2 from the run before;
// plus the cold JIT time of each kernel, and its registers and local memory per thread; and
// kernels::gemm with f16 and FP8 operands on the same shapes.
// peers_gemm.py measures cuBLAS on the same shapes, layouts and method in the same device call
// (torch.matmul for BF16 and f16, torch._scaled_mm for FP8); the ratio is ours / theirs.
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include <cutejit/kernels/gemm.hpp>

#include "gemm_bf16.hpp"
#include "gemm_fp8.hpp"
#include "gemm_fp8_e4m3_out.hpp"
#include "gemm_sm80.hpp"
#include "gemm_tma_tensorop.hpp"
#include "gpu_timing.hpp"

using namespace cutejit;

namespace {
struct GemmShape {
  int64_t m, n, k;
};

/// gemm_bf16 with groups of GroupM tile rows in the tile order instead of 8.
template <int GroupM>
auto grouped_tn(const char* name) {
  return Kernel{name, [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Int m, Int n, Int k) {
    fixtures::gemm_sm90::kernel<bf16, fixtures::gemm_sm90::Config{.group_m = GroupM}>(a, b, c, m, n, k);
  }};
}
auto group4 = grouped_tn<4>("gemm_bf16_group4");
auto group16 = grouped_tn<16>("gemm_bf16_group16");
const GemmShape shapes[] = {{8192, 8192, 8192}, {4096, 4096, 4096}, {8192, 8192, 1024}, {16384, 1024, 8192}, {128, 8192, 8192}};

void report_jit(const char* name, const fixtures::KernelCheck& e, const Device& gpu, uint32_t shared = fixtures::gemm_sm90::Config{}.shared_bytes()) {
  auto t0 = std::chrono::steady_clock::now();
  CompiledKernel k = e.compile(gpu.target());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CUmodule module;
  CUfunction f;
  bench::check(cuModuleLoadData(&module, k.cubin.data()), "cuModuleLoadData");
  bench::check(cuModuleGetFunction(&f, module, name), "cuModuleGetFunction");
  int regs = 0, local = 0;
  bench::check(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f), "cuFuncGetAttribute");
  bench::check(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f), "cuFuncGetAttribute");
  std::printf("%s_jit: trace->cubin %.1f ms (trace %.2f verify %.2f lower %.2f O3+PTX %.2f assemble %.2f); "
              "%d registers, %d bytes local memory per thread, %u bytes shared per CTA\n",
              name, ms, k.times.trace_ms, k.times.verify_ms, k.times.lower_ms, k.times.codegen_ms, k.times.assemble_ms, regs, local,
              shared);
}

void report(const char* name, const GemmShape& s, double ms) {
  std::printf("%s %lldx%lldx%lld: %.3f ms, %.1f TFLOP/s\n", name, (long long)s.m, (long long)s.n, (long long)s.k, ms,
              2.0 * double(s.m) * double(s.n) * double(s.k) / (ms * 1e-3) / 1e12);
}

/// Times one GEMM on `on` (every shape by default): `prepare(a, b, c, shape)` gives the launch for
/// one copy of the data. `tile_widths`: say which tile width the kernel chose (gemm_bf16, gemm_fp8).
template <class T, class Prepare, class Out = bf16>
void bench_shapes(const char* name, const Device& gpu, const std::vector<T>& pool, Prepare&& prepare,
                  std::span<const GemmShape> on = shapes, bool tile_widths = false) {
  for (const GemmShape& s : on) {
    double bytes = double(s.m * s.k + s.n * s.k) * sizeof(T) + double(s.m * s.n) * sizeof(Out);
    int sets = bench::rotation_sets(bytes);
    std::vector<Buffer<T>> as, bs;
    std::vector<Buffer<Out>> cs;
    std::vector<PreparedLaunch> launches;
    for (int i = 0; i < sets; ++i) {
      // Different slices of one random pool: no two copies hold the same data.
      size_t a_at = size_t(i) * 4096 % (pool.size() - size_t(s.m * s.k) + 1);
      size_t b_at = size_t(i) * 8192 % (pool.size() - size_t(s.n * s.k) + 1);
      as.push_back(gpu.upload(std::span<const T>(pool.data() + a_at, size_t(s.m * s.k))));
      bs.push_back(gpu.upload(std::span<const T>(pool.data() + b_at, size_t(s.n * s.k))));
      cs.push_back(gpu.alloc<Out>(size_t(s.m * s.n)));
      launches.push_back(prepare(as.back(), bs.back(), cs.back(), s));
    }
    double ms = bench::median_gpu_ms_rotated([&](int i) { launches[size_t(i)](); }, sets, 30);
    report(name, s, ms);
    if (tile_widths) std::printf("  (tiles 128 x %d)\n", fixtures::gemm_sm90::choose_tile_n(gpu.multiprocessors(), s.m, s.n));
  }
}
}  // namespace

int main() {
  setenv("CUTEJIT_CACHE", "off", 1);  // the JIT figures below are cold, not cache hits
  Device gpu;
  report_jit("gemm_bf16", fixtures::gemm_bf16_check(8192, 8192, 8192), gpu);
  report_jit("gemm_fp8", fixtures::gemm_fp8_check(8192, 8192, 8192), gpu);
  report_jit(fixtures::gemm_tensorop_bf16.name().c_str(), fixtures::gemm_tensorop_bf16_check(8192, 8192, 8192), gpu,
             fixtures::gemm_sm80::Config{}.shared_bytes<bf16>());
  // The largest A (16384 x 8192) is the largest operand.
  const size_t pool = size_t(16384) * 8192;
  {
    std::vector<bf16> host = fixtures::random_bf16(pool, 1);
    bench_shapes("gemm_bf16", gpu, host, [&](const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, const GemmShape& s) {
      return fixtures::gemm_bf16_prepare(gpu, a, b, c, s.m, s.n, s.k);
    }, shapes, true);
  }
  {  // the same kernel with the tile width autotune measured (on the first input set) instead of the rule's,
     // on the shapes above and on ones where the rule's threshold is near (few tiles per multiprocessor)
    std::vector<bf16> host = fixtures::random_bf16(pool, 1);
    const GemmShape near_threshold[] = {{256, 8192, 8192}, {512, 8192, 8192}, {1024, 4096, 8192}, {2048, 2048, 8192}};
    bench_shapes("gemm_bf16", gpu, host, [&](const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, const GemmShape& s) {
      return fixtures::gemm_bf16_prepare(gpu, a, b, c, s.m, s.n, s.k);
    }, near_threshold, true);
    std::vector<GemmShape> tuned(std::begin(shapes), std::end(shapes));
    tuned.insert(tuned.end(), std::begin(near_threshold), std::end(near_threshold));
    bench_shapes("gemm_bf16_tuned", gpu, host, [&](const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, const GemmShape& s) {
      Tuned<int> t = fixtures::gemm_bf16_tune(gpu, a, b, c, s.m, s.n, s.k);
      if (!t.from_record) {
        std::printf("  (autotune: tiles 128 x %s;", t.name.c_str());
        for (const TuneTiming& timing : t.timings)
          if (timing.error.empty()) std::printf(" %s: %.3f ms", timing.name.c_str(), timing.median_ms);
          else std::printf(" %s: failed (%s)", timing.name.c_str(), timing.error.c_str());
        std::printf("; the rule picks %d)\n", fixtures::gemm_sm90::choose_tile_n(gpu.multiprocessors(), s.m, s.n));
      }
      return fixtures::gemm_bf16_prepare_tile(gpu, t.config, a, b, c, s.m, s.n, s.k);
    }, tuned);
  }
  {
    std::vector<f8e4m3> host = fixtures::random_e4m3(pool, 2);
    bench_shapes("gemm_fp8", gpu, host, [&](const Buffer<f8e4m3>& a, const Buffer<f8e4m3>& b, const Buffer<bf16>& c, const GemmShape& s) {
      return fixtures::gemm_fp8_prepare(gpu, a, b, c, 0.5f, 0.25f, s.m, s.n, s.k);
    }, shapes, true);
  }
  {  // FP8 with an e4m3 C, on the square shapes
    std::vector<f8e4m3> host = fixtures::random_e4m3(pool, 3);
    const GemmShape square[] = {shapes[0], shapes[1]};
    auto prepare = [&](const Buffer<f8e4m3>& a, const Buffer<f8e4m3>& b, const Buffer<f8e4m3>& c, const GemmShape& s) {
      return fixtures::gemm_fp8_e4m3_out_prepare(gpu, a, b, c, 0.5f, 0.25f, 4.0f, s.m, s.n, s.k);
    };
    bench_shapes<f8e4m3, decltype(prepare)&, f8e4m3>("gemm_fp8_e4m3_out", gpu, host, prepare, square);
  }
  {  // the library's operator (kernels::gemm_prepare) with f16 and FP8 operands: the same wgmma kernel
     // instantiated for them; FP8's scales (0.5 and 0.25) as alpha
    const std::vector<f16> host16 = fixtures::random_values<f16>(pool, 4);
    auto prepare16 = [&](const Buffer<f16>& a, const Buffer<f16>& b, const Buffer<f16>& c, const GemmShape& s) {
      return kernels::gemm_prepare(gpu, a.view({s.m, s.k}), b.view({s.n, s.k}), c.view({s.m, s.n}));
    };
    bench_shapes<f16, decltype(prepare16)&, f16>("kernels_gemm_f16", gpu, host16, prepare16);
    const std::vector<f8e4m3> host8 = fixtures::random_e4m3(pool, 2);
    bench_shapes("kernels_gemm_fp8", gpu, host8, [&](const Buffer<f8e4m3>& a, const Buffer<f8e4m3>& b, const Buffer<bf16>& c, const GemmShape& s) {
      return kernels::gemm_prepare(gpu, a.view({s.m, s.k}), b.view({s.n, s.k}), c.view({s.m, s.n}), {.alpha = 0.5f * 0.25f});
    });
  }
  {  // the warp-level path (mma.sync, cp.async, ldmatrix) on the square shapes
    std::vector<bf16> host = fixtures::random_bf16(pool, 1);
    const GemmShape square[] = {shapes[0], shapes[1]};
    bench_shapes("gemm_tensorop_bf16", gpu, host, [&](const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, const GemmShape& s) {
      return fixtures::gemm_tensorop_bf16_prepare(gpu, a, b, c, s.m, s.n, s.k);
    }, square);
    // Other tile shapes and ring depths, to choose the default from.
    auto variant = [&](const char* name, auto& kernel, const fixtures::gemm_sm80::Config& config) {
      bench_shapes(name, gpu, host, [&](const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, const GemmShape& s) {
        return kernel.prepare(gpu, fixtures::gemm_sm80::launch<bf16>(s.m, s.n, config), a.view({s.m, s.k}), b.view({s.n, s.k}),
                              c.view({s.m, s.n}));
      }, square);
    };
    constexpr fixtures::gemm_sm80::Config s4{.stages = 4}, wide{.tile_n = 256, .warps_n = 4}, wide4{.tile_n = 256, .warps_n = 4, .stages = 4};
    variant("gemm_tensorop_bf16_128x128_s4", fixtures::gemm_tensorop_bf16_config<s4>, s4);
    variant("gemm_tensorop_bf16_128x256_s3", fixtures::gemm_tensorop_bf16_config<wide>, wide);
    variant("gemm_tensorop_bf16_128x256_s4", fixtures::gemm_tensorop_bf16_config<wide4>, wide4);
    // The same mma.sync tile fed by TMA with a producer warp (the sm_120 family's GEMM).
    bench_shapes("gemm_tma_tensorop_bf16", gpu, host, [&](const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, const GemmShape& s) {
      return fixtures::gemm_tma_tensorop_prepare<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(gpu, a, b, c, s.m, s.n, s.k);
    }, square);
  }
  {  // last: the variants must not cost the kernels above their figures
    std::vector<bf16> host = fixtures::random_bf16(pool, 1);
    bench_shapes("gemm_bf16_cluster", gpu, host, [&](const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, const GemmShape& s) {
      return fixtures::gemm_bf16_cluster_prepare(gpu, a, b, c, s.m, s.n, s.k);
    });
    // The tile order: groups of 4 and 16 tile rows instead of 8, on the square shapes.
    const GemmShape square[] = {shapes[0], shapes[1]};
    auto grouped = [&](const char* name, auto& k) {
      bench_shapes(name, gpu, host, [&](const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, const GemmShape& s) {
        auto [ta, tb] = fixtures::gemm_sm90::tensor_maps(a, b, s.m, s.n, s.k);
        return k.prepare(gpu, fixtures::gemm_sm90::launch_config(gpu, s.m, s.n), ta, tb, fixtures::gemm_sm90::output_map(c, s.m, s.n),
                         int32_t(s.m), int32_t(s.n), int32_t(s.k));
      }, square);
    };
    grouped("gemm_bf16_group4", group4);
    grouped("gemm_bf16_group16", group16);
  }
  return 0;
}
