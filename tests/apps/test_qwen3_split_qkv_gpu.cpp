// qwen3::split_qkv (apps/qwen3/split_qkv.hpp) against the host, head by head: the value heads
// copied, the query and key heads RMS-normed with their weights and rotated (the roundings the
// header documents, computed here in double from the same BF16 inputs), the key and value heads
// also written to their cache slots. Head dims 128 (Qwen3's: eight values a lane, eight lanes a
// head), 96 (a half of six vectors in eight lanes, two idle) and 16 (one lane a head), with head
// counts that leave the last CTA's group of heads part empty. A head placed wrongly, a norm or a
// rotation left out, or a slot written to the wrong row moves values by far more than the few
// BF16 units the bound allows.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "qwen3/split_qkv.hpp"

using namespace cutejit;

namespace {

double round_bf16(double x) { return double(float(bf16(float(x)))); }

}  // namespace

TEST_CASE("qwen3::split_qkv splits, norms and rotates each head and fills the cache slots, as the host computes it", "[gpu][qwen3]") {
  Device gpu;
  INFO(gpu.target().name());
  for (auto [head_dim, heads, kv_heads] : {std::tuple{128, 4, 2}, std::tuple{96, 6, 3}, std::tuple{16, 12, 4}}) {
    INFO("head_dim " << head_dim << ", " << heads << " query heads, " << kv_heads << " KV heads");
    const int64_t tokens = 5, all = heads + 2 * kv_heads, d = head_dim, half = d / 2, cache_rows = 11;
    std::mt19937 rng{static_cast<uint32_t>(head_dim)};
    std::normal_distribution<float> normal(0.0f, 1.0f);
    auto draw = [&](int64_t n, float mean, float scale) {
      std::vector<bf16> v(static_cast<size_t>(n));
      for (bf16& x : v) x = bf16(mean + scale * normal(rng));
      return v;
    };
    const std::vector<bf16> qkv = draw(tokens * all * d, 0.0f, 2.0f), qk_norm = draw(2 * d, 1.0f, 0.2f);
    const std::vector<int32_t> positions{0, 3, 17, 1000, 65535}, slots{7, 2, 10, 0, 5};
    std::vector<float> inv_freq(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i) inv_freq[size_t(i)] = float(std::pow(1e6, -2.0 * double(i) / double(d)));
    const float eps = 1e-6f;

    auto g_qkv = gpu.upload(qkv), g_norm = gpu.upload(qk_norm);
    auto g_pos = gpu.upload(positions), g_slots = gpu.upload(slots);
    auto g_freq = gpu.upload(inv_freq);
    auto q = gpu.alloc<bf16>(size_t(tokens * heads * d)), k = gpu.alloc<bf16>(size_t(tokens * kv_heads * d)),
         v = gpu.alloc<bf16>(size_t(tokens * kv_heads * d));
    const std::vector<bf16> untouched(size_t(cache_rows * kv_heads * d), bf16(-7.0f));
    auto k_cache = gpu.upload(untouched), v_cache = gpu.upload(untouched);
    qwen3::split_qkv(gpu, qwen3::split_qkv_launch(tokens, all, head_dim, nullptr), g_qkv.view({tokens, all * d}), g_norm.view({2, d}),
                     g_pos.view({tokens}), g_freq.view({half}), q.view({tokens, heads, d}), k.view({tokens, kv_heads, d}),
                     v.view({tokens, kv_heads, d}), g_slots.view({tokens}), k_cache.view({cache_rows, kv_heads * d}),
                     v_cache.view({cache_rows, kv_heads * d}), eps, head_dim, 1, false);
    const auto got_q = q.to_host(), got_k = k.to_host(), got_v = v.to_host();
    const auto got_kc = k_cache.to_host(), got_vc = v_cache.to_host();

    auto in = [&](int64_t t, int64_t h, int64_t i) { return double(float(qkv[size_t((t * all + h) * d + i)])); };
    // Head h of token t as the header says: x / rms rounded, times the weight rounded, rotated.
    auto expected = [&](int64_t t, int64_t h, int64_t which) {
      double squares = 0;
      for (int64_t i = 0; i < d; ++i) squares += in(t, h, i) * in(t, h, i);
      const double scale = 1.0 / std::sqrt(squares / double(d) + double(eps));
      std::vector<double> n(static_cast<size_t>(d)), out(static_cast<size_t>(d));
      for (int64_t i = 0; i < d; ++i) n[size_t(i)] = round_bf16(round_bf16(in(t, h, i) * scale) * double(float(qk_norm[size_t(which * d + i)])));
      for (int64_t i = 0; i < half; ++i) {
        // The angle is the f32 product, as the kernel (and transformers) compute it.
        const double angle = double(float(positions[size_t(t)]) * inv_freq[size_t(i)]);
        out[size_t(i)] = n[size_t(i)] * std::cos(angle) - n[size_t(i + half)] * std::sin(angle);
        out[size_t(i + half)] = n[size_t(i + half)] * std::cos(angle) + n[size_t(i)] * std::sin(angle);
      }
      return out;
    };
    // Within three BF16 units of the head's largest value: the kernel's f32 sum and rsqrt may
    // round a normed value the other way, and its rotation is in f32, rounded once.
    auto check_head = [&](const std::vector<double>& want, auto&& got) {
      double largest = 0, worst = 0;
      for (int64_t i = 0; i < d; ++i) largest = std::max(largest, std::abs(want[size_t(i)]));
      for (int64_t i = 0; i < d; ++i) worst = std::max(worst, std::abs(double(float(got(i))) - want[size_t(i)]));
      CHECK(worst <= 3 * std::ldexp(largest, -8));
    };
    for (int64_t t = 0; t < tokens; ++t) {
      INFO("token " << t);
      const int64_t slot = slots[size_t(t)];
      for (int64_t h = 0; h < heads; ++h) {
        INFO("query head " << h);
        check_head(expected(t, h, 0), [&](int64_t i) { return got_q[size_t((t * heads + h) * d + i)]; });
      }
      for (int64_t h = 0; h < kv_heads; ++h) {
        INFO("key head " << h);
        const auto want = expected(t, heads + h, 1);
        check_head(want, [&](int64_t i) { return got_k[size_t((t * kv_heads + h) * d + i)]; });
        check_head(want, [&](int64_t i) { return got_kc[size_t((slot * kv_heads + h) * d + i)]; });
        for (int64_t i = 0; i < d; ++i) {  // the cache's row is k's, bit for bit
          INFO("value " << i);
          REQUIRE(float(got_kc[size_t((slot * kv_heads + h) * d + i)]) == float(got_k[size_t((t * kv_heads + h) * d + i)]));
        }
      }
      for (int64_t h = 0; h < kv_heads; ++h)
        for (int64_t i = 0; i < d; ++i) {
          INFO("value head " << h << ", value " << i);
          const float want = float(qkv[size_t((t * all + heads + kv_heads + h) * d + i)]);
          REQUIRE(float(got_v[size_t((t * kv_heads + h) * d + i)]) == want);
          REQUIRE(float(got_vc[size_t((slot * kv_heads + h) * d + i)]) == want);
        }
    }
    // The cache rows no token names are left as they were.
    for (int64_t row : {1, 3, 4, 6, 8, 9})
      for (int64_t e = 0; e < kv_heads * d; ++e) {
        INFO("cache row " << row << ", element " << e);
        REQUIRE(float(got_kc[size_t(row * kv_heads * d + e)]) == -7.0f);
        REQUIRE(float(got_vc[size_t(row * kv_heads * d + e)]) == -7.0f);
      }
  }
}
