// The BF16 tensor-core GEMM (examples/gemm_bf16.hpp) on the GPU: TFLOP/s for 8192^3 and 4096^3
// (median of 30 timed runs after warm-up, CUDA events through the driver API), the cold JIT
// time of the kernel, and its registers and local memory per thread. peers_gemm.py measures
// torch.matmul (cuBLAS) on the same shapes in the same device call; the ratio is ours / theirs.
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gemm_bf16.hpp"
#include "gpu_timing.hpp"

using namespace cutejit;

int main() {
  setenv("CUTEJIT_CACHE", "off", 1);  // the JIT figure below is cold, not a cache hit
  Device gpu;
  {
    auto t0 = std::chrono::steady_clock::now();
    CompiledKernel k = examples::gemm_bf16_example(8192, 8192, 8192).compile(gpu.target());
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CUmodule module;
    CUfunction f;
    bench::check(cuModuleLoadData(&module, k.cubin.data()), "cuModuleLoadData");
    bench::check(cuModuleGetFunction(&f, module, "gemm_bf16"), "cuModuleGetFunction");
    int regs = 0, local = 0;
    bench::check(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f), "cuFuncGetAttribute");
    bench::check(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f), "cuFuncGetAttribute");
    std::printf("gemm_bf16_jit: trace->cubin %.1f ms (trace %.2f verify %.2f lower %.2f O3+PTX %.2f assemble %.2f); "
                "%d registers, %d bytes local memory per thread, %u bytes shared per CTA\n",
                ms, k.times.trace_ms, k.times.verify_ms, k.times.lower_ms, k.times.codegen_ms, k.times.assemble_ms, regs, local,
                examples::gemm::shared_bytes);
  }
  for (int64_t size : {8192, 4096}) {
    int64_t m = size, n = size, k = size;
    auto a = gpu.upload(examples::random_bf16(m * k, 1)), b = gpu.upload(examples::random_bf16(n * k, 2));
    auto c = gpu.alloc<bf16>(m * n);
    PreparedLaunch launch = examples::gemm_bf16_prepare(gpu, a, b, c, m, n, k);
    double ms = bench::median_gpu_ms([&] { launch(); }, 30);
    std::printf("gemm_bf16 %lldx%lldx%lld: %.3f ms, %.1f TFLOP/s\n", (long long)m, (long long)n, (long long)k, ms,
                2.0 * double(m) * double(n) * double(k) / (ms * 1e-3) / 1e12);
  }
  return 0;
}
