// kernels::attention_forward against a float64 softmax attention of the same bf16 inputs, O and
// lse poisoned: packed batches of sequences of different lengths, GQA, causal masks aligned
// bottom-right and (sm_90a) top-left and windowed, q read in place from a fused QKV tensor;
// mistakes are errors at this file's lines with nothing written; the compile form builds each
// architecture's kernel with no GPU. On sm_90a the cases take the FlashAttention-3-style kernel,
// elsewhere the FlashAttention-2 one ([sm100] and [sm120] run them on those emulated devices).
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/attention.hpp>

#include "kernel_test_values.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::random_values;
using test::value;

namespace {

bool is_hopper(const Device& gpu) { return gpu.target().sm == 90 && gpu.target().arch_specific(); }

struct Case {
  std::vector<int32_t> q_lens, k_lens;
  int64_t heads = 4, kv_heads = 2, head_dim = 64;
  bool causal = false, top_left = false;
  int64_t window_left = -1, window_right = -1;
  bool fused_qkv = false;  // q, k and v as views into one (tokens, (heads + 2 kv_heads) * head_dim) tensor
};

/// Runs the case; returns the largest |O - reference| (O's values are below 1) and the largest
/// |lse - reference| (infinite where a row that sees no key is not -inf).
std::pair<double, double> run_case(const Device& gpu, const Case& c) {
  const int64_t batch = int64_t(c.q_lens.size()), H = c.heads, Hk = c.kv_heads, D = c.head_dim;
  std::vector<int32_t> cu_q{0}, cu_k{0};
  for (size_t b = 0; b < c.q_lens.size(); ++b) cu_q.push_back(cu_q.back() + c.q_lens[b]), cu_k.push_back(cu_k.back() + c.k_lens[b]);
  const int64_t tq = cu_q.back(), tk = cu_k.back();
  REQUIRE((!c.fused_qkv || tq == tk));
  const int64_t row = c.fused_qkv ? (H + 2 * Hk) * D : 0;  // the fused tensor's row length
  const std::vector<bf16> hq = random_values<bf16>(size_t(c.fused_qkv ? tq * row : tq * H * D), 1);
  const std::vector<bf16> hk = c.fused_qkv ? hq : random_values<bf16>(size_t(tk * Hk * D), 2);
  const std::vector<bf16> hv = c.fused_qkv ? hq : random_values<bf16>(size_t(tk * Hk * D), 3);
  auto dq = gpu.upload(hq), dk = gpu.upload(hk), dv = gpu.upload(hv);
  auto dcu_q = gpu.upload(cu_q), dcu_k = gpu.upload(cu_k);
  auto o = gpu.upload(std::vector<bf16>(size_t(tq * H * D), bf16(NAN)));
  auto lse = gpu.upload(std::vector<float>(size_t(H * tq), NAN));
  // Where element (token, head, d) of q, k and v lies in its host vector.
  auto q_at = [&](int64_t t, int64_t h, int64_t d) { return c.fused_qkv ? t * row + h * D + d : (t * H + h) * D + d; };
  auto k_at = [&](int64_t t, int64_t h, int64_t d) { return c.fused_qkv ? t * row + (H + h) * D + d : (t * Hk + h) * D + d; };
  auto v_at = [&](int64_t t, int64_t h, int64_t d) { return c.fused_qkv ? t * row + (H + Hk + h) * D + d : (t * Hk + h) * D + d; };
  DeviceTensor<bf16> q = c.fused_qkv ? dq.view({tq, H, D}, {row, D, 1}) : dq.view({tq, H, D});
  DeviceTensor<bf16> k = c.fused_qkv ? DeviceTensor<bf16>::make(dq.view({tq * row}).ptr + uint64_t(H * D * 2), std::array<int64_t, 3>{tk, Hk, D},
                                                                std::array<int64_t, 3>{row, D, 1})
                                     : dk.view({tk, Hk, D});
  DeviceTensor<bf16> v = c.fused_qkv ? DeviceTensor<bf16>::make(dq.view({tq * row}).ptr + uint64_t((H + Hk) * D * 2),
                                                                std::array<int64_t, 3>{tk, Hk, D}, std::array<int64_t, 3>{row, D, 1})
                                     : dv.view({tk, Hk, D});
  kernels::attention_forward(gpu, q, k, v, o.view({tq, H, D}), lse.view({H, tq}),
                             {.cu_seqlens_q = dcu_q.view({batch + 1}), .cu_seqlens_k = dcu_k.view({batch + 1}),
                              .max_seqlen_q = *std::max_element(c.q_lens.begin(), c.q_lens.end()), .causal = c.causal,
                              .window_left = c.window_left, .window_right = c.window_right, .top_left = c.top_left});
  gpu.synchronize();
  const std::vector<bf16> got_o = o.to_host();
  const std::vector<float> got_lse = lse.to_host();
  const double scale = 1 / std::sqrt(double(D));
  double worst_o = 0, worst_lse = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t sq = c.q_lens[size_t(b)], sk = c.k_lens[size_t(b)];
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < sq; ++i) {
        const int64_t tok = cu_q[size_t(b)] + i, hk_ = h / (H / Hk);
        const int64_t diagonal = i + (c.top_left ? 0 : sk - sq);
        int64_t first = 0, last = sk - 1;
        if (c.causal) last = std::min(last, diagonal);
        if (c.window_right >= 0) last = std::min(last, diagonal + c.window_right);
        if (c.window_left >= 0) first = std::max<int64_t>(0, diagonal - c.window_left);
        std::vector<double> s;
        double m = -INFINITY;
        for (int64_t j = first; j <= last; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += value(hq[size_t(q_at(tok, h, d))]) * value(hk[size_t(k_at(cu_k[size_t(b)] + j, hk_, d))]);
          s.push_back(dot * scale);
          m = std::max(m, s.back());
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - m));
        const double want_lse = s.empty() ? -INFINITY : m + std::log(sum);
        const double g = got_lse[size_t(h * tq + tok)];
        worst_lse = std::max(worst_lse, s.empty() ? (g == -INFINITY ? 0.0 : INFINITY) : std::isnan(g) ? INFINITY : std::abs(g - want_lse));
        for (int64_t d = 0; d < D; ++d) {
          double want = 0;
          for (size_t jj = 0; jj < s.size(); ++jj) want += s[jj] / sum * value(hv[size_t(v_at(cu_k[size_t(b)] + first + int64_t(jj), hk_, d))]);
          const double got = value(got_o[size_t((tok * H + h) * D + d)]);
          worst_o = std::max(worst_o, std::isnan(got) ? INFINITY : std::abs(got - want));
        }
      }
  }
  return {worst_o, worst_lse};
}

/// bf16 O (about 2^-9 relative on values below 1) from P rounded to bf16 for P V; lse in f32.
void check(const Device& gpu, const Case& c) {
  auto [o, lse] = run_case(gpu, c);
  CHECK(o < 1e-2);
  CHECK(lse < 1e-3);
}

}  // namespace

TEST_CASE("kernels::attention_forward matches a float64 attention on packed sequences of different lengths, with GQA",
          "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  // Lengths that leave partial query and key blocks; keys longer than queries (a prefix cache).
  check(gpu, {.q_lens = {17, 130}, .k_lens = {17, 130}});
  check(gpu, {.q_lens = {40, 9}, .k_lens = {100, 70}, .causal = true});
  check(gpu, {.q_lens = {65}, .k_lens = {65}, .heads = 2, .kv_heads = 1, .head_dim = 128, .causal = true});
  // q, k and v read in place from a fused QKV projection's output (rows of (4 + 2 * 2) heads).
  check(gpu, {.q_lens = {33, 31}, .k_lens = {33, 31}, .causal = true, .fused_qkv = true});
}

TEST_CASE("kernels::attention_forward on sm_90a: top-left causal masks, sliding windows and head dim 256", "[gpu][kernels]") {
  Device gpu;
  if (!is_hopper(gpu)) {
    WARN("skipped: " << gpu.target().name() << " takes the FlashAttention-2 kernel, which has neither");
    return;
  }
  check(gpu, {.q_lens = {40, 9}, .k_lens = {100, 70}, .causal = true, .top_left = true});
  check(gpu, {.q_lens = {150}, .k_lens = {150}, .window_left = 32, .window_right = 8});
  check(gpu, {.q_lens = {20}, .k_lens = {20}, .heads = 1, .kv_heads = 1, .head_dim = 256, .causal = true});
}

TEST_CASE("kernels::attention_forward refuses what it cannot take, at the caller's line, writing nothing", "[gpu][kernels]") {
  Device gpu;
  auto x = gpu.upload(random_values<bf16>(64 * 4 * 64, 4)), o = gpu.upload(std::vector<bf16>(64 * 4 * 64, bf16(0.0f)));
  auto lse = gpu.upload(std::vector<float>(4 * 64, 0.0f));
  auto cu = gpu.upload(std::vector<int32_t>{0, 64});
  const auto q = x.view({64, 4, 64}), out = o.view({64, 4, 64});
  const kernels::AttentionOptions packed{.cu_seqlens_q = cu.view({2}), .cu_seqlens_k = cu.view({2})};
  const std::string here = "test_attention_gpu.cpp:";
  CHECK_THAT(test::error_of([&] { kernels::attention_forward(gpu, q, q, q, out, lse.view({4, 64})); }),
             Contains(here) && Contains("attention_forward: packed (tokens, heads, head_dim) tensors need cu_seqlens_q and cu_seqlens_k"));
  CHECK_THAT(test::error_of([&] { kernels::attention_forward(gpu, q, q, q, out, lse.view({64, 4}), packed); }),
             Contains(here) && Contains("lse is (64, 4); it must be (heads, total_q) = (4, 64)"));
  CHECK_THAT(test::error_of([&] { kernels::attention_forward(gpu, q, x.view({64, 3, 64}), x.view({64, 3, 64}), out, lse.view({4, 64}), packed); }),
             Contains("query heads a multiple of the key/value heads"));
  CHECK_THAT(test::error_of([&] { kernels::attention_forward(gpu, x.view({64, 8, 32}), x.view({64, 8, 32}), x.view({64, 8, 32}), o.view({64, 8, 32}),
                                                    lse.view({8, 32}), packed); }),
             Contains("lse is (8, 32)"));
  CHECK_THAT(test::error_of([&] { kernels::attention_forward(gpu, x.view({64, 4, 64}, {1, 64, 256}), q, q, out, lse.view({4, 64}), packed); }),
             Contains("q's head_dim has stride 256; it must be contiguous"));
  auto x96 = x.view({16, 8, 96});
  CHECK_THAT(test::error_of([&] { kernels::attention_forward(gpu, x96, x96, x96, o.view({16, 8, 96}), lse.view({8, 16}), packed); }),
             Contains(here) && Contains("head dims"));
  gpu.synchronize();
  for (bf16 v : o.to_host()) REQUIRE(float(v) == 0.0f);
  for (float v : lse.to_host()) REQUIRE(v == 0.0f);
}

TEST_CASE("kernels::attention_forward_compile builds each architecture's kernel with no GPU", "[unit][kernels]") {
  auto q = DeviceTensor<bf16>::for_compile({512, 32, 128}), kv = DeviceTensor<bf16>::for_compile({512, 8, 128});
  auto lse = DeviceTensor<f32>::for_compile({32, 512});
  auto cu = DeviceTensor<int32_t>::for_compile({3});
  const kernels::AttentionOptions options{.cu_seqlens_q = cu, .cu_seqlens_k = cu, .max_seqlen_q = 256, .causal = true};
  CHECK(test::contains(kernels::attention_forward_compile(Target::parse("sm_90a"), q, kv, kv, q, lse, options).ptx, "wgmma.mma_async"));
  for (const char* t : {"sm_80", "sm_100a", "sm_120a"}) {
    INFO(t);
    CHECK(test::contains(kernels::attention_forward_compile(Target::parse(t), q, kv, kv, q, lse, options).ptx, "mma.sync.aligned.m16n8k16"));
  }
  // Dense BSHD tensors: the sm_90a kernel only.
  auto dq = DeviceTensor<bf16>::for_compile({2, 256, 32, 128}), dkv = DeviceTensor<bf16>::for_compile({2, 256, 8, 128});
  auto dlse = DeviceTensor<f32>::for_compile({2, 32, 256});
  CHECK(test::contains(kernels::attention_forward_compile(Target::parse("sm_90a"), dq, dkv, dkv, dq, dlse, {.causal = true}).ptx, "wgmma"));
  CHECK_THROWS_WITH(kernels::attention_forward_compile(Target::parse("sm_120a"), dq, dkv, dkv, dq, dlse),
                    Contains("dense (batch, seqlen, heads, head_dim) tensors take the sm_90a kernel"));
}
