// kernels::attention_decode against a float64 attention over each sequence's cached keys, read
// through a shuffled block table: one split and several (the combine), decode (q_len 1) and
// speculative queries (q_len 2, causal within them), GQA; mistakes are errors at this file's
// lines. It runs the mma.sync kernel on every target ([sm100] and [sm120] on those emulated
// devices).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <stdlib.h>

#include <cutejit/cutejit.hpp>
#include <cutejit/cache/kernel_cache.hpp>
#include <cutejit/kernels/attention.hpp>

#include "kernel_test_values.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::random_values;
using test::value;

namespace {

struct Case {
  std::vector<int32_t> seqlens;
  int64_t heads = 8, kv_heads = 2, head_dim = 64, q_len = 1, page_size = 16, splits = 0;
  bool workspace = false;  ///< the splits' partial results in a workspace of the test's (NaN before)
};

/// The largest |O - reference| and |lse - reference| of one decode.
std::pair<double, double> run_case(const Device& gpu, const Case& c) {
  const int64_t batch = int64_t(c.seqlens.size()), H = c.heads, Hk = c.kv_heads, D = c.head_dim, P = c.page_size;
  const int64_t longest = *std::max_element(c.seqlens.begin(), c.seqlens.end());
  const int64_t per_sequence = (longest + P - 1) / P, pages = batch * per_sequence + 3;  // spare pages nobody uses
  std::vector<int32_t> table(size_t(batch * per_sequence));
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), std::mt19937(7));
  const int64_t tokens = batch * c.q_len;
  const std::vector<bf16> hq = random_values<bf16>(size_t(tokens * H * D), 1), hk = random_values<bf16>(size_t(pages * P * Hk * D), 2);
  const std::vector<bf16> hv = random_values<bf16>(size_t(pages * P * Hk * D), 3);
  auto q = gpu.upload(hq), k = gpu.upload(hk), v = gpu.upload(hv);
  auto dtable = gpu.upload(table), lens = gpu.upload(c.seqlens);
  auto o = gpu.upload(std::vector<bf16>(size_t(tokens * H * D), bf16(NAN)));
  auto lse = gpu.upload(std::vector<float>(size_t(H * tokens), NAN));
  kernels::DecodeOptions options{.q_len = c.q_len, .max_seqlen_k = longest, .splits = c.splits};
  Buffer<float> workspace;
  if (c.workspace) {
    const int64_t floats = kernels::attention_decode_workspace(gpu, q.view({tokens, H, D}), k.view({pages, P, Hk, D}),
                                                               dtable.view({batch, per_sequence}), options);
    REQUIRE(floats > 0);
    workspace = gpu.upload(std::vector<float>(size_t(floats), NAN));
    options.workspace = workspace.view({floats});
  }
  kernels::attention_decode(gpu, q.view({tokens, H, D}), k.view({pages, P, Hk, D}), v.view({pages, P, Hk, D}), dtable.view({batch, per_sequence}),
                            lens.view({batch}), o.view({tokens, H, D}), lse.view({H, tokens}), options);
  gpu.synchronize();
  const std::vector<bf16> got = o.to_host();
  const std::vector<float> got_lse = lse.to_host();
  // Key j of sequence b, head h, element d: in page table[b][j / P] at slot j % P.
  auto cached = [&](const std::vector<bf16>& cache, int64_t b, int64_t j, int64_t h, int64_t d) {
    const int64_t page = table[size_t(b * per_sequence + j / P)];
    return value(cache[size_t(((page * P + j % P) * Hk + h) * D + d)]);
  };
  double worst_o = 0, worst_lse = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < c.q_len; ++i)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t token = b * c.q_len + i, kv = h / (H / Hk), last = c.seqlens[size_t(b)] - c.q_len + i;  // causal
        std::vector<double> s;
        double m = -INFINITY;
        for (int64_t j = 0; j <= last; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += value(hq[size_t((token * H + h) * D + d)]) * cached(hk, b, j, kv, d);
          s.push_back(dot / std::sqrt(double(D)));
          m = std::max(m, s.back());
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - m));
        const double g_lse = got_lse[size_t(h * tokens + token)];
        worst_lse = std::max(worst_lse, s.empty() ? (g_lse == -INFINITY ? 0.0 : INFINITY) : std::isnan(g_lse) ? INFINITY : std::abs(g_lse - (m + std::log(sum))));
        for (int64_t d = 0; d < D; ++d) {
          double want = 0;
          for (size_t j = 0; j < s.size(); ++j) want += s[j] / sum * cached(hv, b, int64_t(j), kv, d);
          const double g = value(got[size_t((token * H + h) * D + d)]);
          worst_o = std::max(worst_o, std::isnan(g) ? INFINITY : std::abs(g - want));
        }
      }
  return {worst_o, worst_lse};
}

void check(const Device& gpu, const Case& c) {
  INFO("head_dim " << c.head_dim << ", q_len " << c.q_len << ", splits " << c.splits << (c.workspace ? ", the test's workspace" : ""));
  auto [o, lse] = run_case(gpu, c);
  CHECK(o < 1e-2);   // bf16 O of values below 1
  CHECK(lse < 1e-3);
}

}  // namespace

TEST_CASE("kernels::attention_decode matches a float64 attention over a paged cache, in one split and several",
          "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  check(gpu, {.seqlens = {5, 40, 100}, .splits = 1});
  check(gpu, {.seqlens = {5, 40, 100}, .splits = 3});
  check(gpu, {.seqlens = {33, 70}, .head_dim = 128, .q_len = 2, .splits = 2});
  check(gpu, {.seqlens = {300}, .heads = 4, .kv_heads = 4, .page_size = 32});  // splits chosen for the GPU
  check(gpu, {.seqlens = {5, 40, 100}, .splits = 3, .workspace = true});
  check(gpu, {.seqlens = {33, 70}, .head_dim = 128, .q_len = 2, .splits = 2, .workspace = true});
}

TEST_CASE("kernels::attention_decode refuses what it cannot take, at the caller's line", "[gpu][kernels]") {
  Device gpu;
  auto x = gpu.upload(random_values<bf16>(64 * 16 * 2 * 64, 4));
  auto lse = gpu.upload(std::vector<float>(64, 0.0f));
  auto table = gpu.upload(std::vector<int32_t>(8, 0)), lens = gpu.upload(std::vector<int32_t>(2, 16));
  const auto cache = x.view({64, 16, 2, 64}), q = x.view({2, 8, 64});
  const std::string here = "test_attention_decode_gpu.cpp:";
  CHECK_THAT(test::error_of([&] { kernels::attention_decode(gpu, q, cache, cache, table.view({2, 4}), lens.view({2}), q, lse.view({8, 3})); }),
             Contains(here) && Contains("attention_decode: lse is (8, 3); it must be (heads, batch * q_len) = (8, 2)"));
  CHECK_THAT(test::error_of([&] { kernels::attention_decode(gpu, q, cache, cache, table.view({2, 4}), lens.view({2}), q, lse.view({8, 2}), {.q_len = 2}); }),
             Contains("q has 2 rows; a batch of 2 with q_len 2 has 4"));
  CHECK_THAT(test::error_of([&] { kernels::attention_decode(gpu, q, x.view({64, 8, 2, 64}), x.view({64, 8, 2, 64}), table.view({2, 4}), lens.view({2}), q,
                                                            lse.view({8, 2})); }),
             Contains(here) && Contains("page sizes are multiples of 16"));
  // A workspace too small for the splits: (3 splits) x (2 rows) x (8 heads) x (64 + 1) values are needed.
  CHECK(kernels::attention_decode_workspace(gpu, q, cache, table.view({2, 4}), {.splits = 3}) == 3 * 2 * 8 * 65);
  CHECK(kernels::attention_decode_workspace(gpu, q, cache, table.view({2, 4}), {.splits = 1}) == 0);
  auto small = gpu.alloc<float>(100);
  CHECK_THAT(test::error_of([&] { kernels::attention_decode(gpu, q, cache, cache, table.view({2, 4}), lens.view({2}), q, lse.view({8, 2}),
                                                            {.splits = 3, .workspace = small.view({100})}); }),
             Contains(here) && Contains("the workspace has 100 f32 values; these 3 splits need 3120"));
}

TEST_CASE("kernels::attention_decode_compile builds every kernel attention_decode may launch, so a cache it warmed serves the decode",
          "[gpu][kernels]") {
  const int64_t batch = 3, H = 8, Hk = 2, D = 128, P = 16, pages = 24, per_sequence = 8, tokens = batch;
  auto dq = DeviceTensor<bf16>::for_compile({tokens, H, D}), dk = DeviceTensor<bf16>::for_compile({pages, P, Hk, D});
  auto dtable = DeviceTensor<int32_t>::for_compile({batch, per_sequence}), dlens = DeviceTensor<int32_t>::for_compile({batch});
  auto dlse = DeviceTensor<f32>::for_compile({H, tokens});
  // With no GPU: the one-split kernel, and a split and a combine kernel for each of the split
  // counts' divisibilities (1, 2, 4, 8, 16 and more); options.splits narrows it to one count.
  for (const char* t : {"sm_80", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(t);
    const std::vector<CompiledKernel> all = kernels::attention_decode_compile(Target::parse(t), dq, dk, dk, dtable, dlens, dq, dlse);
    REQUIRE(all.size() == 9);
    CHECK(all[0].name == "cutejit_attention_decode_bf16");
    CHECK(all[1].name == "cutejit_attention_decode_bf16_partial");
    CHECK(all[2].name == "cutejit_attention_decode_combine_bf16");
    CHECK(kernels::attention_decode_compile(Target::parse(t), dq, dk, dk, dtable, dlens, dq, dlse, {.splits = 3}).size() == 2);
  }
  CHECK_THROWS_WITH(kernels::attention_decode_compile(Target::parse("sm_90a"), dq, dk, dk, dtable, dlens, dq, dlse, {.q_len = 2}),
                    Contains("rows"));
  // On this device: a cache warmed for its target alone serves the decode, which compiles nothing.
  Device gpu;
  const test::TempDir dir;
  const test::ScopedEnv cache_dir("CUTEJIT_CACHE_DIR", dir.path.string());
  kernels::attention_decode_compile(gpu.target(), dq, dk, dk, dtable, dlens, dq, dlse);
  const size_t warmed = KernelCache::from_environment().stats().entries;
  std::vector<int32_t> table(size_t(batch * per_sequence));
  std::iota(table.begin(), table.end(), 0);
  auto q = gpu.upload(random_values<bf16>(size_t(tokens * H * D), 1)), k = gpu.upload(random_values<bf16>(size_t(pages * P * Hk * D), 2));
  auto t = gpu.upload(table), lens = gpu.upload(std::vector<int32_t>{100, 7, 128});
  auto o = gpu.alloc<bf16>(size_t(tokens * H * D));
  auto lse = gpu.alloc<float>(size_t(H * tokens));
  kernels::attention_decode(gpu, q.view({tokens, H, D}), k.view({pages, P, Hk, D}), k.view({pages, P, Hk, D}), t.view({batch, per_sequence}),
                            lens.view({batch}), o.view({tokens, H, D}), lse.view({H, tokens}));
  gpu.synchronize();
  const size_t after = KernelCache::from_environment().stats().entries;
  CHECK(warmed > 0);
  CHECK(after == warmed);
}
