// The attention forwards on the GPU: the Hopper one (tests/fixtures/fmha_sm90.hpp) and the FA2 one
// (tests/fixtures/fmha_sm80.hpp). TFLOP/s for 32k tokens (batch x sequence length), 16 heads,
// sequence lengths 1k to 16k, head dims 64, 128 and 256 (FA2: 64 and 128), causal and not, the
// median of 30 timed runs after warm-up (CUDA events), rotating through copies of Q, K, V and
// O; the Hopper one also on BHSD views of the same memory (its dense form); plus the cold JIT
// time and registers of each kernel. peers_fmha.py measures PyTorch's SDPA with the cuDNN and
// FlashAttention-2 backends on the same shapes and method in the same call.
// FLOPs: 4 B H S^2 D, halved for causal (as FlashAttention counts them).
#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fmha_sm90.hpp"
#include "gemm_bf16.hpp"
#include "gpu_timing.hpp"
#include "jit_report.hpp"

using namespace cutejit;

namespace {

template <class Compile>
void time_jit(Compile&& compile, uint32_t shared_bytes) {
  auto t0 = std::chrono::steady_clock::now();
  CompiledKernel k = compile();
  bench::report_jit(k, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), shared_bytes);
}

enum class Forward { sm90, sm90_bhsd, sm90_serial, sm90_pingpong, sm90_no_pingpong, sm90_keys, fa2 };

/// The Hopper forward without its overlap (fmha90::*_serial).
PreparedLaunch serial(const Device& gpu, const fixtures::FmhaProblem& p, const Buffer<bf16>& q, const Buffer<bf16>& k,
                      const Buffer<bf16>& v, const Buffer<bf16>& o, const Buffer<float>& lse, const Buffer<int32_t>& cu) {
  using namespace fixtures::fmha90;
  if (p.head_dim == 64) return prepare<bf16, hd64_serial>(gpu, p, q, k, v, o, lse, cu, cu);
  if (p.causal) return prepare<bf16, hd128_causal_serial>(gpu, p, q, k, v, o, lse, cu, cu);
  return prepare<bf16, hd128_serial>(gpu, p, q, k, v, o, lse, cu, cu);
}

/// The Hopper forward with ping-pong between its consumer warpgroups forced on or off, whatever
/// the launch would pick (fmha90::pingpong_pays).
PreparedLaunch pingpong(bool on, const Device& gpu, const fixtures::FmhaProblem& p, const Buffer<bf16>& q, const Buffer<bf16>& k,
                        const Buffer<bf16>& v, const Buffer<bf16>& o, const Buffer<float>& lse, const Buffer<int32_t>& cu) {
  using namespace fixtures::fmha90;
  return with_config(p, [&]<Config C>() {
    return on ? prepare<bf16, with_pingpong(C, true)>(gpu, p, q, k, v, o, lse, cu, cu)
              : prepare<bf16, with_pingpong(C, false)>(gpu, p, q, k, v, o, lse, cu, cu);
  });
}

/// The Hopper forward with `keys` keys a block instead of config_for's (ping-pong as the launch
/// picks it): 160 or 176 at head dim 128 (FlashAttention-3 takes 176), 64 at 256 (config_for
/// takes 80, FlashAttention-3's choice).
PreparedLaunch keys_per_block(int keys, const Device& gpu, const fixtures::FmhaProblem& p, const Buffer<bf16>& q, const Buffer<bf16>& k,
                              const Buffer<bf16>& v, const Buffer<bf16>& o, const Buffer<float>& lse, const Buffer<int32_t>& cu) {
  using namespace fixtures::fmha90;
  auto go = [&]<Config C>() {
    return pingpong_pays(C.head_dim, C.mask, p.max_seqlen_q) ? prepare<bf16, with_pingpong(C)>(gpu, p, q, k, v, o, lse, cu, cu)
                                                             : prepare<bf16, C>(gpu, p, q, k, v, o, lse, cu, cu);
  };
  const Mask mask = mask_of(p);
  auto pick = [&]<int D, int Keys>() {
    if (mask == Mask::causal) return go.template operator()<with_keys(config_for(D, Mask::causal), Keys)>();
    return go.template operator()<with_keys(config_for(D, Mask::none), Keys)>();
  };
  if (p.head_dim == 128 && keys == 160) return pick.template operator()<128, 160>();
  if (p.head_dim == 128 && keys == 176) return pick.template operator()<128, 176>();
  if (p.head_dim == 256 && keys == 64) return pick.template operator()<256, 64>();
  std::fprintf(stderr, "no forward of %d keys a block at head dim %lld\n", keys, (long long)p.head_dim);
  std::exit(2);
}

/// Times one forward on 32k tokens of `seqlen`-long sequences, 16 heads (`keys`: keys_per_block's).
void time_forward(const Device& gpu, Forward which, const std::vector<bf16>& pool, int64_t seqlen, int64_t head_dim, bool causal,
                  int keys = 0) {
  const int64_t batch = 32768 / seqlen, heads = 16, tokens = batch * seqlen, elements = tokens * heads * head_dim;
  fixtures::FmhaProblem p{.batch = batch, .heads = heads, .kv_heads = heads, .head_dim = head_dim, .total_q = tokens,
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
    // The same tokens as BHSD (batch, heads, seqlen, head_dim) tensors, through the dense kernel.
    auto bhsd = [&](const Buffer<bf16>& b) {
      return b.view({batch, seqlen, heads, head_dim}, {heads * seqlen * head_dim, head_dim, seqlen * head_dim, 1});
    };
    if (which == Forward::sm90_bhsd) {
      fixtures::FmhaProblem dense = fixtures::FmhaProblem::dense(batch, heads, heads, head_dim, seqlen, seqlen);
      dense.causal = causal;
      launches.push_back(fixtures::fmha_forward_sm90_prepare(gpu, dense, bhsd(q.back()), bhsd(k.back()), bhsd(v.back()), bhsd(o.back()),
                                                             lse.back().view({batch, heads, seqlen})));
    } else if (which == Forward::sm90)
      launches.push_back(
          fixtures::fmha_forward_sm90_prepare(gpu, p, q.back(), k.back(), v.back(), o.back(), lse.back(), cu_seqlens, cu_seqlens));
    else if (which == Forward::sm90_serial)
      launches.push_back(serial(gpu, p, q.back(), k.back(), v.back(), o.back(), lse.back(), cu_seqlens));
    else if (which == Forward::sm90_pingpong || which == Forward::sm90_no_pingpong)
      launches.push_back(pingpong(which == Forward::sm90_pingpong, gpu, p, q.back(), k.back(), v.back(), o.back(), lse.back(), cu_seqlens));
    else if (which == Forward::sm90_keys)
      launches.push_back(keys_per_block(keys, gpu, p, q.back(), k.back(), v.back(), o.back(), lse.back(), cu_seqlens));
    else
      launches.push_back(fixtures::fmha_forward_prepare(gpu, p, q.back(), k.back(), v.back(), o.back(), lse.back(), cu_seqlens, cu_seqlens));
  }
  double ms = bench::median_gpu_ms_rotated([&](int i) { launches[size_t(i)](); }, sets, 30);
  double flops = 4.0 * double(batch * heads) * double(seqlen) * double(seqlen) * double(head_dim) / (causal ? 2 : 1);
  const std::string keyed = "fmha90_fwd_bf16_keys" + std::to_string(keys);
  std::printf("%s b%lld h%lld s%lld d%lld%s: %.3f ms, %.1f TFLOP/s\n", which == Forward::sm90          ? "fmha90_fwd_bf16"
              : which == Forward::sm90_keys   ? keyed.c_str()
              : which == Forward::sm90_bhsd   ? "fmha90_fwd_bf16_bhsd"
              : which == Forward::sm90_serial ? "fmha90_fwd_bf16_serial"
              : which == Forward::sm90_pingpong ? "fmha90_fwd_bf16_pingpong"
              : which == Forward::sm90_no_pingpong ? "fmha90_fwd_bf16_no_pingpong"
                                              : "fmha_fwd_bf16",
              (long long)batch, (long long)heads, (long long)seqlen, (long long)head_dim, causal ? " causal" : "", ms,
              flops / (ms * 1e-3) / 1e12);
}

}  // namespace

int main(int argc, char** argv) {
  setenv("CUTEJIT_CACHE", "off", 1);  // the JIT figures below are cold, not cache hits
  Device gpu;
  using namespace fixtures;
  std::vector<bf16> pool = random_bf16(size_t(32768) * 16 * 256 + 8192, 5);
  if (argc > 1 && std::string(argv[1]) == "pingpong") {
    // Only the Hopper forward without and with ping-pong, each shape's two timed back to back.
    for (int64_t head_dim : {64, 128, 256})
      for (bool causal : {false, true})
        for (int64_t seqlen : {1024, 2048, 4096, 8192})
          for (Forward which : {Forward::sm90_no_pingpong, Forward::sm90_pingpong}) time_forward(gpu, which, pool, seqlen, head_dim, causal);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "keys") {
    // Only the Hopper forward with config_for's keys a block and with the others, each shape's
    // timed back to back.
    for (auto [head_dim, others] : {std::pair{128, std::vector{160, 176}}, std::pair{256, std::vector{64}}})
      for (bool causal : {false, true})
        for (int64_t seqlen : {1024, 2048, 4096, 8192}) {
          time_forward(gpu, Forward::sm90, pool, seqlen, head_dim, causal);
          for (int keys : others) time_forward(gpu, Forward::sm90_keys, pool, seqlen, head_dim, causal, keys);
        }
    return 0;
  }
  time_jit([&] { return fmha_sm90_compile<bf16, fmha90::hd64>(gpu.target()); }, fmha90::hd64.shared_bytes());
  time_jit([&] { return fmha_sm90_compile<bf16, fmha90::hd128>(gpu.target()); }, fmha90::hd128.shared_bytes());
  time_jit([&] { return fmha_sm90_compile<bf16, fmha90::hd128_causal>(gpu.target()); }, fmha90::hd128_causal.shared_bytes());
  time_jit([&] { return fmha_sm90_compile<bf16, fmha90::hd256>(gpu.target()); }, fmha90::hd256.shared_bytes());
  time_jit([&] { return fmha_compile<bf16, fmha80::hd128>(gpu.target()); }, fmha80::hd128.shared_bytes<bf16>());
  for (Forward which : {Forward::sm90, Forward::fa2})
    for (int64_t head_dim : {64, 128, 256})
      for (bool causal : {false, true})
        if (which == Forward::sm90 || head_dim != 256)  // FA2 has head dims 64 and 128
        for (int64_t seqlen : {1024, 2048, 4096, 8192, 16384}) time_forward(gpu, which, pool, seqlen, head_dim, causal);
  // What the overlap of softmax with P V is worth.
  for (auto [head_dim, causal] : {std::pair{64, false}, std::pair{128, false}, std::pair{128, true}})
    for (int64_t seqlen : {2048, 8192}) time_forward(gpu, Forward::sm90_serial, pool, seqlen, head_dim, causal);
  // The other side of the launch's ping-pong choice (fmha90::pingpong_pays: on at S <= 2k).
  for (int64_t head_dim : {64, 128, 256})
    for (bool causal : {false, true})
      for (int64_t seqlen : {2048, 8192})
        time_forward(gpu, seqlen <= 2048 ? Forward::sm90_no_pingpong : Forward::sm90_pingpong, pool, seqlen, head_dim, causal);
  // What BHSD tensors (the dense kernel, rank-4 maps, O stored with a head's stride) cost.
  for (int64_t head_dim : {64, 128})
    for (bool causal : {false, true})
      for (int64_t seqlen : {2048, 8192}) time_forward(gpu, Forward::sm90_bhsd, pool, seqlen, head_dim, causal);
}
