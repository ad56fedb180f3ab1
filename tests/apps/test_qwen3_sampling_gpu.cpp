// Sampling at a temperature on the device (apps/qwen3/argmax_rows.hpp's sample_rows, and
// Model::decode_sampled over it): the draws of many rows of the same logits, counted, against
// the softmax at that temperature (a chi-square test at a fixed seed: a temperature applied as a
// factor instead of a divisor, or noise that is not Gumbel, fails it by far); a seed replayed
// gives the same draws and another seed others; a row that is not all finite numbers is -1. The
// top-k and top-p cuts against kept sets worked out by hand, with the cuts among equal logits.
// On the model: draws in the vocabulary, the same for the same seeds with and without CUDA
// graphs, a temperature that is not above 0 and cuts out of range refused, and cuts that keep
// one token giving the greedy tokens.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "qwen3/argmax_rows.hpp"
#include "qwen3/kv_cache.hpp"
#include "qwen3/model.hpp"
#include "qwen3_test_weights.hpp"

using namespace cutejit;

namespace {

/// sample_rows over `rows` copies of `logits` with `seed` at `temperature` after the cuts: each
/// row's draw.
std::vector<int32_t> draw(const Device& gpu, const std::vector<bf16>& logits, int64_t rows, uint32_t seed, float temperature,
                          int32_t top_k = 0, float top_p = 1.0f) {
  const int64_t n = int64_t(logits.size());
  std::vector<bf16> all;
  for (int64_t r = 0; r < rows; ++r) all.insert(all.end(), logits.begin(), logits.end());
  auto l = gpu.upload(all);
  auto out = gpu.upload(std::vector<int32_t>(size_t(rows), -2));
  auto s = gpu.upload(std::vector<uint32_t>{seed});
  auto t = gpu.upload(std::vector<float>{1.0f / temperature});
  auto k = gpu.upload(std::vector<int32_t>{top_k});
  auto p = gpu.upload(std::vector<float>{top_p});
  qwen3::sample_rows(gpu, Launch{.grid = uint32_t(rows), .block = qwen3::row_choice::threads}, l.view({rows, n}), out.view({rows}),
                     s.view({1}), t.view({1}), k.view({1}), p.view({1}));
  gpu.synchronize();
  return out.to_host();
}

}  // namespace

TEST_CASE("qwen3's device sampling draws as the softmax at the temperature, from its seed", "[gpu][qwen3]") {
  Device gpu;
  const int64_t rows = 2048;
  const float temperature = 0.8f;
  std::vector<bf16> logits;
  for (int i = 0; i < 12; ++i) logits.push_back(bf16(0.5f * float(i - 6)));
  const std::vector<int32_t> got = draw(gpu, logits, rows, 12345u, temperature);
  std::vector<double> p(logits.size()), count(logits.size(), 0.0);
  double sum = 0;
  for (size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp(double(float(logits[i])) / temperature);
  for (int32_t t : got) {
    REQUIRE((t >= 0 && t < int32_t(logits.size())));
    count[size_t(t)] += 1;
  }
  // Pearson's chi-square over 12 outcomes (11 degrees of freedom): above 40 once in about 30000
  // seeds when the draws follow p. The temperature applied as a factor gives 774 at this seed,
  // exponential noise (-log u) in place of Gumbel's 74.
  double chi2 = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double expected = double(rows) * p[i] / sum;
    chi2 += (count[i] - expected) * (count[i] - expected) / expected;
  }
  INFO("chi-square " << chi2);
  CHECK(chi2 < 40);
  CHECK(draw(gpu, logits, rows, 12345u, temperature) == got);
  const std::vector<int32_t> other = draw(gpu, logits, rows, 54321u, temperature);
  size_t differ = 0;
  for (size_t r = 0; r < got.size(); ++r) differ += got[r] != other[r];
  CHECK(differ > got.size() / 2);  // two draws agree with probability sum p_i^2, about 0.3 here
  logits[5] = bf16(NAN);
  for (int32_t t : draw(gpu, logits, 4, 1u, temperature)) CHECK(t == -1);
}

TEST_CASE("qwen3's device top-k and top-p keep the prefix, ties by column, and draw in it as the softmax", "[gpu][qwen3]") {
  Device gpu;
  // Four logits of 2 (columns 1, 2, 4, 9), four of 1 (0, 5, 6, 11), then 0.5, 0, -1, -2: the
  // cuts fall among equals. At temperature 1 the weights are e^2 = 7.389 (each 2), e = 2.718
  // (each 1), 1.649, 1, 0.368 and 0.135: 43.581 in all.
  const std::vector<float> values{1, 2, 2, 0, 2, 1, 1, -1, 0.5f, 2, -2, 1};
  std::vector<bf16> logits;
  for (float v : values) logits.push_back(bf16(v));
  struct Cut {
    int32_t top_k;
    float top_p;
    std::vector<int32_t> kept;  // worked out by hand from the weights above
  };
  const std::vector<Cut> cuts{
      {3, 1.0f, {1, 2, 4}},               // the first three 2s, by column
      {6, 1.0f, {1, 2, 4, 9, 0, 5}},      // all the 2s, then the first two 1s
      {0, 0.5f, {1, 2, 4}},               // 7.389 x 3 = 22.17 reaches 0.5 x 43.58 = 21.79; x 2 does not
      {0, 0.75f, {1, 2, 4, 9, 0, 5}},     // 29.56 + 2.718 = 32.27 < 32.69 = 0.75 x 43.58 <= 34.99
      {5, 0.9f, {1, 2, 4, 9}},            // of the top 5 (32.27), 0.9 is 29.05: the four 2s reach it
      {0, 1e-6f, {1}},                    // the most likely stays
  };
  for (const Cut& cut : cuts) {
    INFO("top_k " << cut.top_k << ", top_p " << cut.top_p);
    const int64_t rows = 512;
    const std::vector<int32_t> got = draw(gpu, logits, rows, 777u, 1.0f, cut.top_k, cut.top_p);
    std::vector<double> count(values.size(), 0.0);
    for (int32_t t : got) {
      REQUIRE((t >= 0 && t < int32_t(values.size())));
      count[size_t(t)] += 1;
    }
    double sum = 0, chi2 = 0;
    for (int32_t i : cut.kept) sum += std::exp(double(values[size_t(i)]));
    for (size_t i = 0; i < values.size(); ++i) {
      const bool kept = std::find(cut.kept.begin(), cut.kept.end(), int32_t(i)) != cut.kept.end();
      if (!kept) {
        CHECK(count[i] == 0);  // a cut token is never drawn
        continue;
      }
      const double expected = double(rows) * std::exp(double(values[i])) / sum;
      chi2 += (count[i] - expected) * (count[i] - expected) / expected;
    }
    // At most 5 degrees of freedom: above 30 once in about 60000 seeds when the draws follow
    // the kept softmax.
    INFO("chi-square " << chi2);
    CHECK(chi2 < 30);
  }
}

TEST_CASE("qwen3::Model::decode_sampled draws in the vocabulary, the same with and without graphs for the same seeds",
          "[gpu][qwen3]") {
  Device gpu;
  const qwen3::Config tiny = qwen3::Config::named("tiny");
  qwen3::Model model(gpu, tiny, qwen3_test::values);
  auto run = [&](bool graphs) {
    model.use_graphs(graphs);
    qwen3::KvCache cache(gpu, tiny, 2, 32);
    model.prefill({{1, 2, 3, 4, 5}, {6, 7}}, cache);
    std::vector<int32_t> next{8, 9}, all;
    for (uint32_t step = 0; step < 4; ++step) {
      next = model.decode_sampled(next, cache, 1.0f, 1000u + step);
      all.insert(all.end(), next.begin(), next.end());
    }
    return all;
  };
  const std::vector<int32_t> with_graphs = run(true), without = run(false);
  for (int32_t t : with_graphs) CHECK((t >= 0 && t < tiny.vocab));
  CHECK(with_graphs == without);
  qwen3::KvCache cache(gpu, tiny, 1, 16);
  model.prefill({{1, 2}}, cache);
  CHECK_THROWS_WITH(model.decode_sampled({3}, cache, 0.0f, 1u), Catch::Contains("decode_sampled draws at a temperature above 0"));
  CHECK_THROWS_WITH(model.decode_sampled({3}, cache, NAN, 1u), Catch::Contains("a finite number"));
  CHECK_THROWS_WITH(model.decode_sampled({3}, cache, 1.0f, 1u, -1), Catch::Contains("top_k of 0 (no cut) or more"));
  CHECK_THROWS_WITH(model.decode_sampled({3}, cache, 1.0f, 1u, 0, 0.0f), Catch::Contains("top_p in (0, 1]"));
}

TEST_CASE("qwen3::Model::decode_sampled with top_k 1, or a tiny top_p, takes the greedy token", "[gpu][qwen3]") {
  // Either cut keeps only the largest logit (the first of equals), whatever the draw.
  Device gpu;
  const qwen3::Config tiny = qwen3::Config::named("tiny");
  qwen3::Model model(gpu, tiny, qwen3_test::values);
  auto run = [&](int mode) {
    qwen3::KvCache cache(gpu, tiny, 2, 32);
    model.prefill({{1, 2, 3, 4, 5}, {6, 7}}, cache);
    std::vector<int32_t> next{8, 9}, all;
    for (uint32_t step = 0; step < 3; ++step) {
      next = mode == 0   ? model.decode_greedy(next, cache)
             : mode == 1 ? model.decode_sampled(next, cache, 1.0f, 50u + step, 1)
                         : model.decode_sampled(next, cache, 1.0f, 50u + step, 0, 1e-6f);
      all.insert(all.end(), next.begin(), next.end());
    }
    return all;
  };
  const std::vector<int32_t> greedy = run(0);
  CHECK(run(1) == greedy);
  CHECK(run(2) == greedy);
}

namespace {

/// The prefix the cuts keep, worked out here on the host: columns by (logit descending, column
/// ascending), the first top_k, then the fewest whose probabilities at 1 / inv_temperature reach
/// top_p of theirs.
std::vector<int32_t> kept_by_host(const std::vector<bf16>& logits, int32_t top_k, double top_p, double inv_temperature) {
  std::vector<int32_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int32_t(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return float(logits[size_t(a)]) > float(logits[size_t(b)]); });
  order.resize(size_t(top_k));
  const double top = float(logits[size_t(order[0])]);
  double sum = 0;
  for (int32_t i : order) sum += std::exp((float(logits[size_t(i)]) - top) * inv_temperature);
  double running = 0;
  size_t kept = 0;
  while (kept < order.size() && running < top_p * sum) running += std::exp((float(logits[size_t(order[kept++])]) - top) * inv_temperature);
  order.resize(kept);
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace

TEST_CASE("qwen3's device top-k keeps the host's prefix on a long row: gathered after radix passes, and the slow way past them",
          "[gpu][qwen3]") {
  Device gpu;
  // 8192 logits on a grid of eighths, so that the k-th falls among equals; at temperature 1000
  // the kept tokens are about equally likely, and 512 rows draw each of 20 about 25 times: the
  // set drawn is the set kept.
  const int64_t n = 8192, rows = 512;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<bf16> logits(static_cast<size_t>(n));
  for (bf16& v : logits) v = bf16(std::round(normal(rng) * 8.0f) / 8.0f);
  const float temperature = 1000.0f;
  auto drawn = [&](const std::vector<bf16>& row, int32_t top_k, float top_p) {
    std::vector<int32_t> got = draw(gpu, row, rows, 99u, temperature, top_k, top_p);
    std::sort(got.begin(), got.end());
    got.erase(std::unique(got.begin(), got.end()), got.end());
    return got;
  };
  for (auto [top_k, top_p] : {std::pair{20, 1.0f}, {20, 0.87f}, {7, 0.6f}}) {
    INFO("top_k " << top_k << ", top_p " << top_p);
    CHECK(drawn(logits, top_k, top_p) == kept_by_host(logits, top_k, top_p, 1.0 / temperature));
  }
  // 2000 logits tied at the top: more than the gathered path holds, so the bit-by-bit one cuts;
  // the first 20 by column are kept.
  std::vector<bf16> tied = logits;
  for (int64_t i = 0; i < 2000; ++i) tied[size_t(i * 4)] = bf16(16.0f);
  CHECK(drawn(tied, 20, 1.0f) == kept_by_host(tied, 20, 1.0, 1.0 / temperature));
  // A top-k past the gathered path's 1024: whatever is drawn is in the host's prefix.
  const std::vector<int32_t> wide = kept_by_host(logits, 1500, 1.0, 1.0 / temperature);
  for (int32_t t : drawn(logits, 1500, 1.0f)) CHECK(std::binary_search(wide.begin(), wide.end(), t));
}
