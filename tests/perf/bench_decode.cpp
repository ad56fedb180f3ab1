// The paged-KV decode (tests/fixtures/fmha_decode.hpp) on the GPU: one query per sequence, 16-token
// pages in shuffled order, BF16, head dim 128, GQA 32:8 (Llama-3-8B's) and 64:8 (-70B's), batch
// x cached length from 1 x 32k to 128 x 1k. The median of 30 timed runs after warm-up (CUDA
// events), rotating through copies of the cache; the bandwidth counts K and V once (Q and O
// are under 0.1% of it), as a fraction of the H200's measured 4.2 TB/s copy bandwidth. Plus the
// cold JIT of the split and combine kernels. peers_decode.py measures PyTorch on the same
// shapes in the same call.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "fmha_decode.hpp"
#include "gemm_bf16.hpp"
#include "gpu_timing.hpp"

using namespace cutejit;

namespace {

void time_decode(const Device& gpu, const std::vector<bf16>& pool, int64_t batch, int64_t seqlen, int64_t heads, int64_t kv_heads,
                 int64_t splits = 0, int64_t stages = 0) {
  const int64_t D = 128, page = 16, per_sequence = seqlen / page;
  fixtures::DecodeProblem p{.batch = batch, .heads = heads, .kv_heads = kv_heads, .head_dim = D, .pages = batch * per_sequence,
                            .page_size = page, .pages_per_sequence = per_sequence, .max_seqlen_k = seqlen, .splits = splits,
                            .stages = stages};
  const int64_t cache = p.pages * page * kv_heads * D;
  const double kv_bytes = 2.0 * double(cache) * sizeof(bf16);
  std::vector<int32_t> table(size_t(p.pages));
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), std::mt19937(7));
  auto block_table = gpu.upload(table);
  auto lens = gpu.upload(std::vector<int32_t>(size_t(batch), int32_t(seqlen)));
  const int sets = bench::rotation_sets(kv_bytes);
  std::vector<Buffer<bf16>> q, k, v, o;
  std::vector<Buffer<float>> lse;
  std::vector<fixtures::DecodeLaunch> launches;
  auto slice = [&](size_t at, int64_t n) {
    return gpu.upload(std::span<const bf16>(pool.data() + at % (pool.size() - size_t(n) + 1), size_t(n)));
  };
  for (int i = 0; i < sets; ++i) {
    q.push_back(slice(size_t(i) * 4096, batch * heads * D));
    k.push_back(slice(size_t(i) * 4096 + 1024, cache));
    v.push_back(slice(size_t(i) * 4096 + 2048, cache));
    o.push_back(gpu.alloc<bf16>(size_t(batch * heads * D)));
    lse.push_back(gpu.alloc<float>(size_t(batch * heads)));
    launches.push_back(fixtures::fmha_decode_prepare(gpu, p, q.back(), k.back(), v.back(), block_table, lens, o.back(), lse.back()));
  }
  double ms = bench::median_gpu_ms_rotated([&](int i) { launches[size_t(i)](); }, sets, 30);
  std::printf("fmha_decode_bf16 b%lld s%lld h%lld/%lld d128 page16 (%lld splits, %lld stages%s): %.4f ms, %.0f GB/s, %.2f of 4.2 TB/s\n",
              (long long)batch, (long long)seqlen, (long long)heads, (long long)kv_heads, (long long)launches[0].splits, (long long)launches[0].stages, splits || stages ? ", set" : ", chosen", ms,
              kv_bytes / (ms * 1e-3) / 1e9, kv_bytes / (ms * 1e-3) / 4.2e12);
}

}  // namespace

int main(int argc, char** argv) {
  setenv("CUTEJIT_CACHE", "off", 1);  // the JIT figures below are cold, not cache hits
  Device gpu;
  using namespace fixtures;
  for (int group : {4, 8}) {
    auto t0 = std::chrono::steady_clock::now();
    auto [split, combine] = decode_compile<bf16>(gpu.target(), {.head_dim = 128, .group = group, .q_len = 1, .kv_heads = 8, .stages = 4});
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("fmha_decode_jit g%d: split + combine trace->cubin %.1f ms (split: trace %.2f verify %.2f lower %.2f O3+PTX %.2f "
                "assemble %.2f)\n",
                group, ms, split.times.trace_ms, split.times.verify_ms, split.times.lower_ms, split.times.codegen_ms,
                split.times.assemble_ms);
  }
  std::vector<bf16> pool = random_bf16((size_t(1) << 27) + (size_t(1) << 22), 11);  // the largest cache (128k tokens) and the shifts
  const std::pair<int64_t, int64_t> shapes[] = {{1, 32768}, {8, 8192}, {32, 4096}, {64, 2048}, {128, 1024}};
  for (auto [batch, seqlen] : shapes) time_decode(gpu, pool, batch, seqlen, 32, 8);
  for (auto [batch, seqlen] : shapes) time_decode(gpu, pool, batch, seqlen, 64, 8);
  // `sweep`: the split count and ring depth around the choice.
  if (argc > 1 && std::string(argv[1]) == "sweep")
    for (auto [batch, seqlen] : shapes)
      for (int64_t stages : {2, 3, 4})
        for (int64_t splits : {1, 2, 4, 8, 16, 32, 64})
          if (batch * 8 * splits <= 4 * 132 && splits * 512 <= seqlen) time_decode(gpu, pool, batch, seqlen, 32, 8, splits, stages);
}
