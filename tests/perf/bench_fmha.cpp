// The FlashAttention-2 forward (examples/fmha_sm80.hpp) on the GPU: TFLOP/s for batch 4, 16
// heads, sequence lengths 1k to 8k, head dims 64 and 128, causal and not, the median of 30
// timed runs after warm-up (CUDA events), rotating through copies of Q, K, V and O; plus the
// cold JIT time and registers of each kernel. peers_fmha.py measures PyTorch's SDPA with the
// FlashAttention-2 backend on the same shapes and method in the same device call.
// FLOPs: 4 B H S^2 D, halved for causal (as FlashAttention counts them).
#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fmha_sm80.hpp"
#include "gemm_bf16.hpp"
#include "gpu_timing.hpp"

using namespace cutejit;
using examples::fmha80::Config;

namespace {

/// Other tilings than the launch's, to compare against its choice.
constexpr Config hd128_128x64_w8{128, false, 128, 64, 8}, hd128_causal_128x64_w8{128, true, 128, 64, 8},
    hd128_128x32{128, false, 128, 32, 4}, hd64_128x128_w8{64, false, 128, 128, 8};

PreparedLaunch variants(const Device& gpu, const Config& c, const examples::FmhaProblem& p, const Buffer<bf16>& q, const Buffer<bf16>& k,
                        const Buffer<bf16>& v, const Buffer<bf16>& o, const Buffer<float>& lse, const Buffer<int32_t>& cu) {
  using examples::fmha80::prepare;
  if (c == hd128_128x64_w8) return prepare<bf16, hd128_128x64_w8>(gpu, p, q, k, v, o, lse, cu, cu);
  if (c == hd128_causal_128x64_w8) return prepare<bf16, hd128_causal_128x64_w8>(gpu, p, q, k, v, o, lse, cu, cu);
  if (c == hd128_128x32) return prepare<bf16, hd128_128x32>(gpu, p, q, k, v, o, lse, cu, cu);
  return prepare<bf16, hd64_128x128_w8>(gpu, p, q, k, v, o, lse, cu, cu);
}

template <Config C>
void report_jit(const Device& gpu) {
  auto t0 = std::chrono::steady_clock::now();
  CompiledKernel k = examples::fmha_compile<bf16, C>(gpu.target());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CUmodule module;
  CUfunction f;
  bench::check(cuModuleLoadData(&module, k.cubin.data()), "cuModuleLoadData");
  bench::check(cuModuleGetFunction(&f, module, k.name.c_str()), "cuModuleGetFunction");
  int regs = 0, local = 0;
  bench::check(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f), "cuFuncGetAttribute");
  bench::check(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f), "cuFuncGetAttribute");
  std::printf("%s_jit: trace->cubin %.1f ms (trace %.2f verify %.2f lower %.2f O3+PTX %.2f assemble %.2f); "
              "%d registers, %d bytes local memory per thread, %u bytes shared per CTA\n",
              k.name.c_str(), ms, k.times.trace_ms, k.times.verify_ms, k.times.lower_ms, k.times.codegen_ms, k.times.assemble_ms, regs,
              local, C.template shared_bytes<bf16>());
}

/// Times the forward on B = 4, H = 16: with the launch's own choice of kernel, or with
/// `variant`'s configuration when one is given (labelled with its name).
void time_forward(const Device& gpu, const std::vector<bf16>& pool, int64_t seqlen, int64_t head_dim, bool causal,
                  const Config* variant = nullptr) {
  const int64_t batch = 4, heads = 16, tokens = batch * seqlen, elements = tokens * heads * head_dim;
  examples::FmhaProblem p{.batch = batch, .heads = heads, .kv_heads = heads, .head_dim = head_dim, .total_q = tokens,
                          .total_k = tokens, .max_seqlen_q = seqlen, .causal = causal};
  std::vector<int32_t> cu;
  for (int64_t b = 0; b <= batch; ++b) cu.push_back(int32_t(b * seqlen));
  auto cu_seqlens = gpu.upload(cu);
  const int sets = bench::rotation_sets(4.0 * double(elements) * sizeof(bf16));
  std::vector<Buffer<bf16>> q, k, v, o;
  std::vector<Buffer<float>> lse;
  std::vector<PreparedLaunch> launches;
  for (int i = 0; i < sets; ++i) {
    // Different slices of one random pool: no two copies hold the same data.
    auto slice = [&](size_t at) { return gpu.upload(std::span<const bf16>(pool.data() + at % (pool.size() - size_t(elements) + 1), size_t(elements))); };
    q.push_back(slice(size_t(i) * 4096));
    k.push_back(slice(size_t(i) * 4096 + 1024));
    v.push_back(slice(size_t(i) * 4096 + 2048));
    o.push_back(gpu.alloc<bf16>(size_t(elements)));
    lse.push_back(gpu.alloc<float>(size_t(heads * tokens)));
    launches.push_back(variant ? variants(gpu, *variant, p, q.back(), k.back(), v.back(), o.back(), lse.back(), cu_seqlens)
                               : examples::fmha_forward_prepare(gpu, p, q.back(), k.back(), v.back(), o.back(), lse.back(), cu_seqlens,
                                                                cu_seqlens));
  }
  double ms = bench::median_gpu_ms_rotated([&](int i) { launches[size_t(i)](); }, sets, 30);
  double flops = 4.0 * double(batch * heads) * double(seqlen) * double(seqlen) * double(head_dim) / (causal ? 2 : 1);
  std::printf("%s b%lld h%lld s%lld d%lld%s: %.3f ms, %.1f TFLOP/s\n", variant ? variant->name("bf16").c_str() : "fmha_fwd_bf16",
              (long long)batch, (long long)heads, (long long)seqlen, (long long)head_dim, causal ? " causal" : "", ms,
              flops / (ms * 1e-3) / 1e12);
}

}  // namespace

int main() {
  setenv("CUTEJIT_CACHE", "off", 1);  // the JIT figures below are cold, not cache hits
  Device gpu;
  report_jit<examples::fmha80::hd64>(gpu);
  report_jit<examples::fmha80::hd128>(gpu);
  report_jit<examples::fmha80::hd128_causal>(gpu);
  std::vector<bf16> pool = examples::random_bf16(size_t(4) * 8192 * 16 * 128 + 8192, 5);
  for (int64_t head_dim : {64, 128})
    for (bool causal : {false, true})
      for (int64_t seqlen : {1024, 2048, 4096, 8192}) time_forward(gpu, pool, seqlen, head_dim, causal);
  for (const Config* c : {&hd128_128x64_w8, &hd128_causal_128x64_w8, &hd128_128x32, &hd64_128x128_w8})
    for (int64_t seqlen : {2048, 8192}) time_forward(gpu, pool, seqlen, c->head_dim, c->causal, c);
}
