/** \file
 * Qwen3 on the GPU, on the kernel library: the checkpoint's weights uploaded once, then the
 * prefill of one sequence (positions 0, 1, ...), all in BF16 with f32 inside each kernel:
 * the embedding; per layer RMSNorm, the q, k and v projections, the per-head RMSNorm of q and k,
 * RoPE, causal grouped-query attention, the output projection with the residual add fused into
 * its epilogue (beta = 1 on the residual stream), RMSNorm, the gate and up projections, SiLU·mul
 * and the down projection, its residual add fused too; the final norm and the LM head. Every
 * step is a kernels:: operator except the embedding's row gather (embedding.hpp).
 * Not yet: the paged KV cache and decode steps, batches of sequences, sampling, CUDA graphs.
 */
#pragma once

#include <cstdint>
#include <vector>

#include <cutejit/runtime/buffer.hpp>
#include <cutejit/runtime/device.hpp>

#include "checkpoint.hpp"

namespace qwen3 {

/// What a prefill leaves on the host: each layer's output (the hidden state after its MLP's
/// residual add, tokens x hidden) and the logits (tokens x vocab).
struct PrefillOutputs {
  std::vector<std::vector<cutejit::bf16>> layers;
  std::vector<cutejit::bf16> logits;
};

class Model {
 public:
  /// Uploads the checkpoint's weights to `device`, which must outlive the model.
  Model(const cutejit::Device& device, const Checkpoint& checkpoint);

  const Config& config() const { return config_; }
  /// The forward pass over `tokens` (ids below the vocabulary's size, checked on the host).
  PrefillOutputs prefill(const std::vector<int32_t>& tokens) const;

 private:
  struct Layer {
    cutejit::Buffer<cutejit::bf16> input_norm, q, k, v, q_norm, k_norm, o, post_norm, gate, up, down;
  };
  const cutejit::Device& device_;
  Config config_;
  cutejit::Buffer<cutejit::bf16> embedding_, final_norm_, lm_head_;  // lm_head_ is empty when tied
  std::vector<Layer> layers_;
  cutejit::Buffer<float> inv_freq_;
};

}  // namespace qwen3
