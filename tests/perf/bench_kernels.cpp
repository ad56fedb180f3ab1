// The kernel library's memory-bound operators on the GPU (cutejit/kernels/*.hpp), BF16 at
// Qwen3-8B's shapes: add_rmsnorm over hidden 4096 (a prefill of 4096 tokens, and decode's 1 and
// 64), silu_mul over intermediate 12288, rope over 32 heads of 128. The median of 30 timed runs
// after warm-up (CUDA events), rotating through copies of the data so each run starts from
// DRAM; the bandwidth counts each byte read or written once, against the H200's measured
// 4.2 TB/s copy bandwidth. And gemm at a decode step's shapes (a few rows of A against
// Qwen3-8B's weights), in bf16 and in FP8; and the prefill's projections at 8192 tokens, in
// TFLOP/s. peers_kernels.py measures PyTorch on the same shapes in the same call. `few-rows`
// times the two few-row GEMM kernels (FMA and tensor-core, the latter at several warp and
// unroll counts) against each other at each batch up to 8, the data kernels::gemm's choice
// between them rests on; and the tensor-core one at batches 16, 32 and 64 against what
// kernels::gemm runs there (on sm_90a the wgmma kernel, N / tile_n CTAs), the data a choice
// of it there would rest on.
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/elementwise.hpp>
#include <cutejit/kernels/gemm.hpp>
#include <cutejit/kernels/gemm/small_m.hpp>
#include <cutejit/kernels/gemm/small_m_mma.hpp>
#include <cutejit/kernels/norm.hpp>

#include "gpu_timing.hpp"

using namespace cutejit;

namespace {

/// n normal(0, 1) values rounded to T: a window, which the seed places, of one pool drawn once.
/// Drawing each of the prefill's operands afresh (up to 200 million values for C) took longer
/// than a device call allows. The pool's length is odd, so no two rows of a matrix whose rows
/// are a power of two long are the same window.
template <class T = bf16>
std::vector<T> random_values(size_t n, uint32_t seed) {
  static const std::vector<float> pool = [] {
    std::mt19937 rng(1);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> p((size_t(1) << 24) + 17);
    for (float& x : p) x = d(rng);
    return p;
  }();
  std::vector<T> v(n);
  size_t at = (size_t(seed) * 1000003) % pool.size();
  for (T& x : v) {
    x = T(pool[at]);
    if (++at == pool.size()) at = 0;
  }
  return v;
}
std::vector<bf16> random_bf16(size_t n, uint32_t seed) { return random_values<bf16>(n, seed); }

void report(const char* what, double bytes, double ms) {
  std::printf("%-44s %9.1f us  %7.0f GB/s\n", what, ms * 1e3, bytes / (ms * 1e-3) / 1e9);
}

void time_add_rmsnorm(const Device& gpu, int64_t rows, int64_t hidden) {
  const double bytes = 2.0 * double(rows * hidden) * 4 + 2.0 * double(hidden);  // x, residual (read, write), y
  const int sets = bench::rotation_sets(bytes);
  std::vector<Buffer<bf16>> x, r, y;
  for (int s = 0; s < sets; ++s) {
    x.push_back(gpu.upload(random_bf16(size_t(rows * hidden), uint32_t(s))));
    r.push_back(gpu.upload(random_bf16(size_t(rows * hidden), uint32_t(100 + s))));
    y.push_back(gpu.alloc<bf16>(size_t(rows * hidden)));
  }
  auto w = gpu.upload(random_bf16(size_t(hidden), 7));
  const double ms = bench::median_gpu_ms_rotated(
      [&](int s) { kernels::add_rmsnorm(gpu, x[size_t(s)].view({rows, hidden}), r[size_t(s)].view({rows, hidden}), w.view({hidden}),
                                        y[size_t(s)].view({rows, hidden})); },
      sets, 30);
  char what[96];
  std::snprintf(what, sizeof what, "add_rmsnorm %lld x %lld", (long long)rows, (long long)hidden);
  report(what, bytes, ms);
}

void time_silu_mul(const Device& gpu, int64_t rows, int64_t n) {
  const double bytes = 2.0 * double(rows * n) * 3;
  const int sets = bench::rotation_sets(bytes);
  std::vector<Buffer<bf16>> g, u, o;
  for (int s = 0; s < sets; ++s) {
    g.push_back(gpu.upload(random_bf16(size_t(rows * n), uint32_t(s))));
    u.push_back(gpu.upload(random_bf16(size_t(rows * n), uint32_t(50 + s))));
    o.push_back(gpu.alloc<bf16>(size_t(rows * n)));
  }
  const double ms = bench::median_gpu_ms_rotated(
      [&](int s) { kernels::silu_mul(gpu, g[size_t(s)].view({rows, n}), u[size_t(s)].view({rows, n}), o[size_t(s)].view({rows, n})); },
      sets, 30);
  char what[96];
  std::snprintf(what, sizeof what, "silu_mul %lld x %lld", (long long)rows, (long long)n);
  report(what, bytes, ms);
}

void time_rope(const Device& gpu, int64_t tokens, int64_t heads, int64_t head_dim) {
  const double bytes = 2.0 * double(tokens * heads * head_dim) * 2;
  const int sets = bench::rotation_sets(bytes);
  std::vector<Buffer<bf16>> x;
  for (int s = 0; s < sets; ++s) x.push_back(gpu.upload(random_bf16(size_t(tokens * heads * head_dim), uint32_t(s))));
  std::vector<int32_t> positions(static_cast<size_t>(tokens));
  for (int64_t t = 0; t < tokens; ++t) positions[size_t(t)] = int32_t(t);
  auto p = gpu.upload(positions);
  auto f = gpu.upload(kernels::rope_inv_freq(head_dim, 1e6));
  const double ms = bench::median_gpu_ms_rotated(
      [&](int s) { kernels::rope(gpu, x[size_t(s)].view({tokens, heads, head_dim}), p.view({tokens}), f.view({head_dim / 2})); }, sets,
      30);
  char what[96];
  std::snprintf(what, sizeof what, "rope %lld x %lld x %lld", (long long)tokens, (long long)heads, (long long)head_dim);
  report(what, bytes, ms);
}

/// The median time of kernels::gemm(a, b, c, options) in ms: A (m x k) and B (b_rows x k) of T, C
/// (m x n) bf16 holding random values (read where options.beta is set), B rotated through
/// copies of itself.
template <class T = bf16>
double gemm_ms(const Device& gpu, int64_t m, int64_t b_rows, int64_t n, int64_t k, const kernels::GemmOptions& options = {}) {
  const int sets = bench::rotation_sets(double(sizeof(T)) * double(b_rows * k + m * k) + 2.0 * double(m * n));
  std::vector<Buffer<T>> b;
  for (int s = 0; s < sets; ++s) b.push_back(gpu.upload(random_values<T>(size_t(b_rows * k), uint32_t(200 + s))));
  auto a = gpu.upload(random_values<T>(size_t(m * k), 9));
  auto c = gpu.upload(random_bf16(size_t(m * n), 12));
  return bench::median_gpu_ms_rotated(
      [&](int s) { kernels::gemm(gpu, a.view({m, k}), b[size_t(s)].view({b_rows, k}), c.view({m, n}), options); }, sets, 30);
}

/// A decode step's projection: C (m x n) = A (m x k) B^T, B the weights (n x k), A and B of T
/// (bf16, or FP8 weights with FP8 activations), C bf16; the bytes are B read once (A and C are a
/// rounding error next to it).
template <class T = bf16>
void time_gemm(const Device& gpu, int64_t m, int64_t n, int64_t k) {
  const double bytes = double(sizeof(T)) * double(n * k + m * k) + 2.0 * double(m * n);
  const double ms = gemm_ms<T>(gpu, m, n, n, k);
  char what[96];
  std::snprintf(what, sizeof what, "gemm%s %lld x %lld x %lld", sizeof(T) == 1 ? " fp8" : "", (long long)m, (long long)n, (long long)k);
  report(what, bytes, ms);
}

/// A prefill's projection as the Qwen3 model calls it: C (m x n) = A (m x k) B^T at m = 8192
/// tokens, TFLOP/s of the product (a multiply-add counted as two), B rotated (A, 64 MB or more,
/// does not stay in L2 either). `how`: "" (the plain product), "residual" (C += A B^T, beta =
/// 1) or "glu" (B is [W; V], 2 n rows, and C = silu(A W^T) * (A V^T)); `tune`: GemmOptions::tune.
void time_prefill_gemm(const Device& gpu, int64_t m, int64_t n, int64_t k, std::string_view how, bool tune = false) {
  const bool glu = how == "glu";
  const int64_t b_rows = glu ? 2 * n : n;
  kernels::GemmOptions options;
  if (how == "residual") options.beta = 1;
  if (glu) options.glu = kernels::Activation::silu;
  options.tune = tune;
  const double ms = gemm_ms(gpu, m, b_rows, n, k, options);
  const std::string what = "prefill gemm " + std::to_string(m) + " x " + std::to_string(b_rows) + " x " + std::to_string(k) +
                           (how.empty() ? "" : " ") + std::string(how) + (tune ? " tuned" : "");
  std::printf("%-44s %9.1f us  %7.1f TFLOP/s\n", what.c_str(), ms * 1e3, 2.0 * double(m) * double(b_rows) * double(k) / (ms * 1e-3) / 1e12);
}

/// The few-row kernels with the plain store; `gated`: B is [W; V] and C = silu(A W^T) * (A V^T).
kernels::gemm_small_m::Fusion silu_glu(bool gated) {
  kernels::gemm_small_m::Fusion f;
  f.gated = gated;
  if (gated) f.gate = [](const F32& x) { return x / (1.0f + exp(-x)); };
  return f;
}
/// The FMA kernel (gemm/small_m.hpp), two rows of B a warp.
auto& fma_few_rows() {
  static Kernel k{"bench_few_rows_fma", [](Tensor<bf16> a, Tensor<bf16> b, Tensor<bf16> c, Constexpr<bool> gated, Constexpr<int> m) {
                    kernels::gemm_small_m::kernel(kernels::gemm_small_m::Config{.m = m, .rows = 2}, a, b, c, kernels::Identity{},
                                                  silu_glu(gated));
                  }};
  return k;
}
/// The tensor-core kernel (gemm/small_m_mma.hpp).
auto& mma_few_rows() {
  static Kernel k{"bench_few_rows_mma", [](Tensor<bf16> a, Tensor<bf16> b, Tensor<bf16> c, Constexpr<bool> gated, Constexpr<int> warps,
                                           Constexpr<int> unroll, Constexpr<int> m_blocks) {
                    kernels::gemm_small_m_mma::kernel(kernels::gemm_small_m_mma::Config{.warps = warps, .unroll = unroll, .m_blocks = m_blocks},
                                                      a, b, c, kernels::Identity{}, silu_glu(gated));
                  }};
  return k;
}

/// C (m x n) = A B^T with B's `b_rows` rows (2 n with `gated`) by each few-row kernel: the FMA
/// one (up to 8 rows) and the tensor-core one at each (warps, unroll); past 8 rows, also
/// kernels::gemm (this kernel up to gemm_few_rows_max_m rows, then the architecture's); GB/s
/// of B, A and C moved once.
void time_few_rows(const Device& gpu, int64_t m, int64_t b_rows, int64_t k, bool gated) {
  const int64_t n = gated ? b_rows / 2 : b_rows;
  const double bytes = 2.0 * double(b_rows * k + m * k + m * n);
  const int sets = bench::rotation_sets(bytes);
  std::vector<Buffer<bf16>> b;
  for (int s = 0; s < sets; ++s) b.push_back(gpu.upload(random_bf16(size_t(b_rows * k), uint32_t(300 + s))));
  auto a = gpu.upload(random_bf16(size_t(m * k), 9));
  auto c = gpu.alloc<bf16>(size_t(m * n));
  char what[96];
  std::snprintf(what, sizeof what, "few rows %lld x %lld x %lld%s", (long long)m, (long long)b_rows, (long long)k, gated ? " glu" : "");
  if (m <= kernels::gemm_small_m::Config::max_m) {
    const kernels::gemm_small_m::Config fma{.m = int(m), .rows = 2};
    const double fma_ms = bench::median_gpu_ms_rotated(
        [&](int s) {
          fma_few_rows()(gpu, kernels::gemm_small_m::launch(n, fma, gated), a.view({m, k}), b[size_t(s)].view({b_rows, k}), c.view({m, n}),
                         gated, int(m));
        },
        sets, 30);
    report((std::string(what) + " fma").c_str(), bytes, fma_ms);
  } else {
    kernels::GemmOptions options;
    if (gated) options.glu = kernels::Activation::silu;
    const double ms = bench::median_gpu_ms_rotated(
        [&](int s) { kernels::gemm(gpu, a.view({m, k}), b[size_t(s)].view({b_rows, k}), c.view({m, n}), options); }, sets, 30);
    report((std::string(what) + " kernels::gemm").c_str(), bytes, ms);
  }
  const int m_blocks = kernels::gemm_small_m_mma::Config::m_blocks_for(m);
  for (auto [warps, unroll] : {std::pair{4, 4}, {8, 2}, {8, 4}, {4, 8}, {16, 2}}) {
    if (warps * m_blocks > 96) continue;  // the warps' sums would not fit the kernel's shared memory
    const kernels::gemm_small_m_mma::Config config{.warps = warps, .unroll = unroll, .m_blocks = m_blocks};
    const double ms = bench::median_gpu_ms_rotated(
        [&](int s) {
          mma_few_rows()(gpu, kernels::gemm_small_m_mma::launch(n, config, gated), a.view({m, k}), b[size_t(s)].view({b_rows, k}),
                         c.view({m, n}), gated, warps, unroll, m_blocks);
        },
        sets, 30);
    report((std::string(what) + " mma w" + std::to_string(warps) + " u" + std::to_string(unroll)).c_str(), bytes, ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // A line at a time, so that what finished before a time limit cut the run still shows.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Device gpu;
  std::printf("kernel library, BF16, %s (GB/s: bytes read and written once / median time)\n", gpu.name().c_str());
  // `prefill`: the prefill's projections alone.
  const bool prefill_only = argc > 1 && std::string(argv[1]) == "prefill";
  if (argc > 1 && std::string(argv[1]) == "few-rows") {
    // Qwen3-8B's decode projections: qkv (6144 x 4096), o (4096 x 4096), gate/up with SiLU·mul
    // (24576 x 4096), down (4096 x 12288). `few-rows wide`: batches 16, 32 and 64.
    const bool wide = argc > 2 && std::string(argv[2]) == "wide";
    for (int64_t m : wide ? std::vector<int64_t>{16, 32, 64} : std::vector<int64_t>{1, 2, 3, 4, 8}) {
      time_few_rows(gpu, m, 6144, 4096, false);
      time_few_rows(gpu, m, 4096, 4096, false);
      time_few_rows(gpu, m, 24576, 4096, true);
      time_few_rows(gpu, m, 4096, 12288, false);
    }
    return 0;
  }
  if (!prefill_only) {
    for (int64_t rows : {1, 64, 4096}) time_add_rmsnorm(gpu, rows, 4096);
    for (int64_t rows : {64, 4096}) time_silu_mul(gpu, rows, 12288);
    for (int64_t tokens : {64, 4096}) time_rope(gpu, tokens, 32, 128);
    // Qwen3-8B's projections at decode batches 1 and 8: q/o (4096 x 4096), k/v (1024 x 4096),
    // gate/up (12288 x 4096), down (4096 x 12288).
    for (int64_t m : {1, 8})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {1024, 4096}, {12288, 4096}, {4096, 12288}}) time_gemm(gpu, m, n, k);
    // The same with FP8 weights and activations: half the bytes of B.
    for (int64_t m : {1, 8})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {12288, 4096}, {4096, 12288}}) time_gemm<f8e4m3>(gpu, m, n, k);
  }
  // Qwen3-8B's prefill projections at 8 x 1024 tokens: qkv (6144 x 4096), o (4096 x 4096) with
  // the residual, gate/up (24576 x 4096) plain and with SiLU·mul fused, down (4096 x 12288)
  // plain and with the residual.
  time_prefill_gemm(gpu, 8192, 6144, 4096, "");
  time_prefill_gemm(gpu, 8192, 4096, 4096, "");
  time_prefill_gemm(gpu, 8192, 4096, 4096, "residual");
  time_prefill_gemm(gpu, 8192, 24576, 4096, "");
  time_prefill_gemm(gpu, 8192, 12288, 4096, "glu");
  time_prefill_gemm(gpu, 8192, 4096, 12288, "");
  time_prefill_gemm(gpu, 8192, 4096, 12288, "residual");
  // The same through GemmOptions::tune (the fastest tile width, timed on the first call).
  time_prefill_gemm(gpu, 8192, 6144, 4096, "", true);
  time_prefill_gemm(gpu, 8192, 4096, 4096, "residual", true);
  time_prefill_gemm(gpu, 8192, 12288, 4096, "glu", true);
  return 0;
}
