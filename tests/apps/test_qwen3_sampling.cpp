// Choosing tokens from logits (apps/qwen3/sampling.hpp): greedy; draws whose frequencies match
// the softmax at the temperature; top-k and top-p cutting the candidates as Hugging Face does.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "qwen3/sampling.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {

std::vector<bf16> logits_of(std::initializer_list<float> v) {
  std::vector<bf16> out;
  for (float x : v) out.push_back(bf16(x));
  return out;
}

/// How often each token is drawn in `n` draws.
std::map<int32_t, double> frequencies(const std::vector<bf16>& logits, const qwen3::SamplingOptions& o, int n = 20000) {
  std::mt19937_64 rng(1);
  std::map<int32_t, double> f;
  for (int i = 0; i < n; ++i) f[qwen3::sample(logits, o, rng)] += 1.0 / n;
  return f;
}

}  // namespace

TEST_CASE("greedy takes the largest logit, the first of equals; temperature 0 is greedy", "[qwen3]") {
  CHECK(qwen3::greedy(logits_of({0.5f, 3.0f, -1.0f, 3.0f})) == 1);
  std::mt19937_64 rng(3);
  CHECK(qwen3::sample(logits_of({0.5f, -2.0f, 1.5f}), {.temperature = 0}, rng) == 2);
}

TEST_CASE("sampling draws tokens as often as the softmax at the temperature says", "[qwen3]") {
  // Logits log(1), log(2), log(5): probabilities 0.125, 0.25, 0.625; at temperature 2 they
  // are proportional to 1, sqrt 2, sqrt 5.
  const auto logits = logits_of({0.0f, 0.6931472f, 1.6094379f});
  auto f = frequencies(logits, {});
  CHECK(std::abs(f[0] - 0.125) < 0.015);
  CHECK(std::abs(f[1] - 0.25) < 0.015);
  CHECK(std::abs(f[2] - 0.625) < 0.015);
  const double z = 1 + std::sqrt(2.0) + std::sqrt(5.0);
  f = frequencies(logits, {.temperature = 2});
  CHECK(std::abs(f[0] - 1 / z) < 0.015);
  CHECK(std::abs(f[2] - std::sqrt(5.0) / z) < 0.015);
}

TEST_CASE("top-k keeps the k largest logits and top-p the fewest whose probabilities reach p", "[qwen3]") {
  // Probabilities 0.4, 0.3, 0.2, 0.1 (as logits, in another order).
  const auto logits = logits_of({std::log(0.2f), std::log(0.4f), std::log(0.1f), std::log(0.3f)});
  auto f = frequencies(logits, {.top_k = 2});
  CHECK(f.size() == 2);
  CHECK(std::abs(f[1] - 4.0 / 7) < 0.015);
  CHECK(std::abs(f[3] - 3.0 / 7) < 0.015);
  // top_p 0.5: 0.4 is not enough, 0.4 + 0.3 is; top_p 0.4 keeps the first alone (it reaches p).
  f = frequencies(logits, {.top_p = 0.5f});
  CHECK(f.size() == 2);
  CHECK(std::abs(f[1] - 4.0 / 7) < 0.015);
  CHECK(frequencies(logits, {.top_p = 0.3f}).size() == 1);
  // top-k first, then top-p over the renormalized survivors: of 0.4, 0.3, 0.2 (sum 0.9),
  // 0.4 / 0.9 < 0.5 <= 0.7 / 0.9.
  CHECK(frequencies(logits, {.top_k = 3, .top_p = 0.5f}).size() == 2);
  CHECK(frequencies(logits, {.top_k = 3, .top_p = 0.8f}).size() == 3);
}

TEST_CASE("sampling refuses options and logits it cannot use", "[qwen3]") {
  std::mt19937_64 rng(1);
  const auto logits = logits_of({1.0f, 2.0f});
  CHECK_THROWS_WITH(qwen3::sample(logits, {.top_p = 0}, rng), Contains("top_p in (0, 1]"));
  CHECK_THROWS_WITH(qwen3::sample(logits, {.temperature = -1}, rng), Contains("a temperature of 0 or more"));
  CHECK_THROWS_WITH(qwen3::sample(logits, {.top_k = -2}, rng), Contains("top_k of 0 or more"));
  CHECK_THROWS_WITH(qwen3::greedy(logits_of({1.0f, NAN})), Contains("logit 1 is nan"));
  CHECK_THROWS_WITH(qwen3::greedy({}), Contains("at least one logit"));
}
