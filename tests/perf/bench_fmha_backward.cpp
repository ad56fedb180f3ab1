// The attention backwards on the GPU, the Hopper one (tests/fixtures/fmha_backward_sm90.hpp) and the
// mma.sync one (tests/fixtures/fmha_backward.hpp): TFLOP/s for 16k tokens
// (batch x sequence length), 16 heads, sequence lengths 1k to 8k, head dims 64 and 128, causal
// and not; the median of 30 timed runs after warm-up (CUDA events), rotating through copies of
// the inputs and gradients (O and the log-sum-exp from the FA2 forward); plus the cold JIT time and registers of each kernel.
// peers_fmha_backward.py times PyTorch's SDPA backward with the cuDNN and FlashAttention-2
// backends on the same shapes and method in the same call. FLOPs: 10 B H S^2 D (five products),
// halved for causal, as FlashAttention counts them; the dQ kernel's two recomputed products
// are not counted.
#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "fmha_backward_sm90.hpp"
#include "gpu_timing.hpp"
#include "jit_report.hpp"

using namespace cutejit;

namespace {

/// The Hopper backward at head dim 128 with 32 queries a dK/dV block instead of config_for's 64.
fixtures::BackwardLaunch with_32_queries(const Device& gpu, const fixtures::FmhaProblem& p, const Buffer<bf16>* b,
                                         const Buffer<float>& lse, const Buffer<int32_t>& cu) {
  using namespace fixtures::fmha_bwd90;
  fixtures::BackwardLaunch l;
  l.delta = gpu.alloc<float>(size_t(p.heads * p.total_q));
  l.dot = fixtures::fmha_bwd::prepare_dot(gpu, p, b[3], b[4], l.delta);
  auto go = [&]<Config C>() { prepare<bf16, C>(l, gpu, p, b[0], b[1], b[2], b[4], lse, cu, cu, b[5], b[6], b[7]); };
  p.causal ? go.template operator()<with_queries(hd128_causal, 32)>() : go.template operator()<with_queries(hd128, 32)>();
  return l;
}

/// Times one backward on 16k tokens of `seqlen`-long sequences, 16 heads (`q32`: with_32_queries).
void time_backward(const Device& gpu, bool hopper, const std::vector<bf16>& pool, int64_t seqlen, int64_t head_dim, bool causal,
                   bool q32 = false) {
  const int64_t batch = 16384 / seqlen, heads = 16, tokens = batch * seqlen, elements = tokens * heads * head_dim;
  fixtures::FmhaProblem p{.batch = batch, .heads = heads, .kv_heads = heads, .head_dim = head_dim, .total_q = tokens, .total_k = tokens,
                          .max_seqlen_q = seqlen, .max_seqlen_k = seqlen, .causal = causal};
  std::vector<int32_t> cu;
  for (int64_t b = 0; b <= batch; ++b) cu.push_back(int32_t(b * seqlen));
  auto cu_seqlens = gpu.upload(cu);
  // Q, K, V, O, dO in; dQ, dK, dV out.
  const int sets = bench::rotation_sets(8.0 * double(elements) * sizeof(bf16));
  std::vector<Buffer<bf16>> buffers;
  buffers.reserve(size_t(sets) * 8);
  std::vector<Buffer<float>> lse;
  std::vector<fixtures::BackwardLaunch> launches;
  for (int i = 0; i < sets; ++i) {
    // Different slices of one random pool: no two copies hold the same data.
    auto slice = [&](size_t at) {
      return gpu.upload(std::span<const bf16>(pool.data() + at % (pool.size() - size_t(elements) + 1), size_t(elements)));
    };
    // Q, K, V and dO from the pool; O and the log-sum-exp from the FA2 forward on them.
    for (int t = 0; t < 3; ++t) buffers.push_back(slice(size_t(i) * 5120 + size_t(t) * 1024));
    buffers.push_back(gpu.alloc<bf16>(size_t(elements)));
    buffers.push_back(slice(size_t(i) * 5120 + 4096));
    for (int t = 0; t < 3; ++t) buffers.push_back(gpu.alloc<bf16>(size_t(elements)));
    lse.push_back(gpu.alloc<float>(size_t(heads * tokens)));
    const Buffer<bf16>* b = &buffers[buffers.size() - 8];
    fixtures::fmha_forward_prepare(gpu, p, b[0], b[1], b[2], b[3], lse.back(), cu_seqlens, cu_seqlens)();
    auto prepare = hopper ? fixtures::fmha_backward_sm90_prepare<bf16> : fixtures::fmha_backward_prepare<bf16>;
    if (q32) launches.push_back(with_32_queries(gpu, p, b, lse.back(), cu_seqlens));
    else launches.push_back(prepare(gpu, p, b[0], b[1], b[2], b[3], b[4], lse.back(), cu_seqlens, cu_seqlens, b[5], b[6], b[7], detail::Where::current()));
  }
  double ms = bench::median_gpu_ms_rotated([&](int i) { launches[size_t(i)](); }, sets, 30);
  // Where the time goes: each of the three kernels alone.
  double dot_ms = bench::median_gpu_ms_rotated([&](int i) { launches[size_t(i)].dot(); }, sets, 30);
  double dkdv_ms = bench::median_gpu_ms_rotated([&](int i) { launches[size_t(i)].dkdv(); }, sets, 30);
  double dq_ms = bench::median_gpu_ms_rotated([&](int i) { launches[size_t(i)].dq(); }, sets, 30);
  double flops = 10.0 * double(batch * heads) * double(seqlen) * double(seqlen) * double(head_dim) / (causal ? 2 : 1);
  std::printf("%s b%lld h%lld s%lld d%lld%s: %.3f ms, %.1f TFLOP/s (dot %.3f, dK/dV %.3f, dQ %.3f ms)\n", q32 ? "fmha90_bwd_bf16_q32" : hopper ? "fmha90_bwd_bf16" : "fmha_bwd_bf16", (long long)batch, (long long)heads, (long long)seqlen,
              (long long)head_dim, causal ? " causal" : "", ms, flops / (ms * 1e-3) / 1e12, dot_ms, dkdv_ms, dq_ms);
}

}  // namespace

int main(int argc, char** argv) {
  setenv("CUTEJIT_CACHE", "off", 1);  // the JIT figures below are cold, not cache hits
  Device gpu;
  if (argc > 1 && std::string(argv[1]) == "queries") {
    // Only the Hopper backward: at head dim 128 with 64 and with 32 queries a dK/dV block, back
    // to back; at head dim 64 as the launch picks it.
    std::vector<bf16> pool = fixtures::random_values<bf16>(size_t(16384) * 16 * 128 + 8192, 7);
    for (int64_t head_dim : {64, 128})
      for (bool causal : {false, true})
        for (int64_t seqlen : {1024, 2048, 4096, 8192})
          for (bool q32 : {false, true})
            if (!q32 || head_dim == 128) time_backward(gpu, true, pool, seqlen, head_dim, causal, q32);
    return 0;
  }
  auto cold = [](const char* what, auto&& compile) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<CompiledKernel> kernels = compile();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: its kernels cold in %.1f ms\n", what, ms);
    for (const CompiledKernel& k : kernels) bench::report_jit(k, k.times.total_ms());
  };
  cold("fmha90_bwd hd64", [&] { return fixtures::backward_sm90_compile<bf16, fixtures::fmha_bwd90::hd64>(gpu.target()); });
  cold("fmha90_bwd hd128", [&] { return fixtures::backward_sm90_compile<bf16, fixtures::fmha_bwd90::hd128>(gpu.target()); });
  for (int64_t head_dim : {64, 128}) {
    auto t0 = std::chrono::steady_clock::now();
    auto kernels = fixtures::backward_compile<bf16>(gpu.target(), {.head_dim = int(head_dim), .causal = false});
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("fmha_bwd hd%lld: the three kernels cold in %.1f ms\n", (long long)head_dim, ms);
    for (const CompiledKernel& k : kernels) bench::report_jit(k, k.times.total_ms());
  }
  std::vector<bf16> pool = fixtures::random_values<bf16>(size_t(16384) * 16 * 128 + 8192, 7);
  for (bool hopper : {true, false})
    for (int64_t head_dim : {64, 128})
      for (bool causal : {false, true})
        for (int64_t seqlen : {1024, 2048, 4096, 8192}) time_backward(gpu, hopper, pool, seqlen, head_dim, causal);
}
