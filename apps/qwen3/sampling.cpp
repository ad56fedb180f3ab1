#include "sampling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include <cutejit/core/error.hpp>

namespace qwen3 {

using namespace cutejit;

namespace {

void check_logits(std::span<const bf16> logits) {
  if (logits.empty()) throw Error("error: qwen3: sampling needs at least one logit");
  for (size_t i = 0; i < logits.size(); ++i)
    if (!std::isfinite(float(logits[i])))
      throw Error("error: qwen3: logit " + std::to_string(i) + " is " + std::to_string(float(logits[i])) + "; sampling needs finite logits");
}

}  // namespace

int32_t greedy(std::span<const bf16> logits) {
  check_logits(logits);
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (float(logits[i]) > float(logits[best])) best = i;
  return int32_t(best);
}

int32_t sample(std::span<const bf16> logits, const SamplingOptions& o, std::mt19937_64& rng) {
  if (!(o.temperature >= 0) || o.top_k < 0 || !(o.top_p > 0 && o.top_p <= 1))
    throw Error("error: qwen3: sampling takes a temperature of 0 or more, top_k of 0 or more and top_p in (0, 1], not " +
                std::to_string(o.temperature) + ", " + std::to_string(o.top_k) + " and " + std::to_string(o.top_p));
  if (o.temperature == 0) return greedy(logits);
  check_logits(logits);
  // The candidates, largest logit first (ties by index): all of them, or the top k.
  const size_t n = logits.size(), k = o.top_k == 0 ? n : std::min(n, size_t(o.top_k));
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto larger = [&](int32_t a, int32_t b) { return float(logits[a]) > float(logits[b]) || (float(logits[a]) == float(logits[b]) && a < b); };
  std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(k), order.end(), larger);
  order.resize(k);
  // Softmax over them at the temperature, in double; then the fewest whose sum reaches top_p.
  std::vector<double> p(k);
  const double top = float(logits[order[0]]);
  for (size_t i = 0; i < k; ++i) p[i] = std::exp((double(float(logits[order[i]])) - top) / o.temperature);
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  size_t kept = 0;
  for (double sum = 0; kept < k && (kept == 0 || sum < o.top_p * total); ++kept) sum += p[kept];
  std::discrete_distribution<size_t> draw(p.begin(), p.begin() + std::ptrdiff_t(kept));
  return order[draw(rng)];
}

}  // namespace qwen3
