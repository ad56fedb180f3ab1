/** \file
 * Qwen3's forward pass on the host, in float64 from the checkpoint's BF16 weights: the
 * definition the GPU model is checked against, written from Hugging Face's modeling_qwen3.py
 * (pre-norm blocks; RMSNorm of the hidden state and, per head, of q and k; rotate-half RoPE;
 * grouped-query causal attention; SwiGLU MLP; a final norm and the LM head, the embedding when
 * tied). No rounding between steps: it is the exact answer the BF16 models approximate. Slow;
 * for the small configurations tests use.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "checkpoint.hpp"

namespace qwen3 {

/// What one forward pass over `tokens` (positions 0, 1, ...) leaves: each layer's output (the
/// hidden state after its MLP's residual add, tokens x hidden) and the logits (tokens x vocab).
struct ReferenceOutputs {
  std::vector<std::vector<double>> layers;
  std::vector<double> logits;
};

ReferenceOutputs reference_forward(const Checkpoint& checkpoint, const std::vector<int32_t>& tokens);

}  // namespace qwen3
