/** \file
 * Choosing the next token from a row of logits, on the host: greedy, or drawn from the softmax
 * at a temperature, restricted first to the top_k largest logits and then to the fewest of
 * those whose probabilities sum to top_p (Hugging Face's order, and its rule that the most
 * likely token always stays). Logits of another kind than a finite number are an error.
 */
#pragma once

#include <cstdint>
#include <random>
#include <span>

#include <cutejit/core/types.hpp>

namespace qwen3 {

struct SamplingOptions {
  float temperature = 1.0f;  ///< 0: greedy
  int64_t top_k = 0;         ///< 0: every token
  float top_p = 1.0f;        ///< in (0, 1]; 1: no cut
};

/// The index of the largest logit, the first of equals.
int32_t greedy(std::span<const cutejit::bf16> logits);
/// A token drawn with `rng` as `options` say.
int32_t sample(std::span<const cutejit::bf16> logits, const SamplingOptions& options, std::mt19937_64& rng);

}  // namespace qwen3
