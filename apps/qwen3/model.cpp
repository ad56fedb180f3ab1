#include "model.hpp"

#include <cstring>
#include <numeric>
#include <string>

#include <cutejit/kernels/attention.hpp>
#include <cutejit/kernels/elementwise.hpp>
#include <cutejit/kernels/gemm.hpp>
#include <cutejit/kernels/norm.hpp>

#include "embedding.hpp"

namespace qwen3 {

using namespace cutejit;

namespace {

/// The checkpoint's tensor `name` on the device (its BF16 bytes as they are).
Buffer<bf16> upload(const Device& device, const Checkpoint& checkpoint, const std::string& name) {
  const TensorView& t = checkpoint.tensor(name);
  std::vector<bf16> host(t.bytes.size() / sizeof(bf16));
  std::memcpy(host.data(), t.bytes.data(), t.bytes.size());
  return device.upload(host);
}

}  // namespace

Model::Model(const Device& device, const Checkpoint& checkpoint) : device_(device), config_(checkpoint.config()) {
  embedding_ = upload(device, checkpoint, "model.embed_tokens.weight");
  final_norm_ = upload(device, checkpoint, "model.norm.weight");
  if (!config_.tie_word_embeddings) lm_head_ = upload(device, checkpoint, "lm_head.weight");
  for (int64_t l = 0; l < config_.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    auto w = [&](const char* name) { return upload(device, checkpoint, p + name); };
    layers_.push_back({w("input_layernorm.weight"), w("self_attn.q_proj.weight"), w("self_attn.k_proj.weight"),
                       w("self_attn.v_proj.weight"), w("self_attn.q_norm.weight"), w("self_attn.k_norm.weight"),
                       w("self_attn.o_proj.weight"), w("post_attention_layernorm.weight"), w("mlp.gate_proj.weight"),
                       w("mlp.up_proj.weight"), w("mlp.down_proj.weight")});
  }
  inv_freq_ = device.upload(kernels::rope_inv_freq(config_.head_dim, config_.rope_theta));
}

PrefillOutputs Model::prefill(const std::vector<int32_t>& tokens) const {
  const Config& c = config_;
  const int64_t T = int64_t(tokens.size()), H = c.hidden, d = c.head_dim, nq = c.heads * d, nkv = c.kv_heads * d, I = c.intermediate;
  if (T < 1) throw Error("error: qwen3: prefill takes at least one token");
  for (int64_t t = 0; t < T; ++t)
    if (tokens[size_t(t)] < 0 || tokens[size_t(t)] >= c.vocab)
      throw Error("error: qwen3: token " + std::to_string(tokens[size_t(t)]) + " at position " + std::to_string(t) +
                  " is outside the vocabulary of " + std::to_string(c.vocab));
  std::vector<int32_t> positions(static_cast<size_t>(T));
  std::iota(positions.begin(), positions.end(), 0);
  const Buffer<int32_t> ids = device_.upload(tokens), pos = device_.upload(positions), cu = device_.upload(std::vector<int32_t>{0, int32_t(T)});
  Buffer<bf16> h = device_.alloc<bf16>(size_t(T * H)), x = device_.alloc<bf16>(size_t(T * H));
  Buffer<bf16> q = device_.alloc<bf16>(size_t(T * nq)), k = device_.alloc<bf16>(size_t(T * nkv)), v = device_.alloc<bf16>(size_t(T * nkv));
  Buffer<bf16> attention = device_.alloc<bf16>(size_t(T * nq)), gate = device_.alloc<bf16>(size_t(T * I)), up = device_.alloc<bf16>(size_t(T * I));
  Buffer<float> lse = device_.alloc<float>(size_t(c.heads * T));
  const kernels::NormOptions norm{.eps = float(c.rms_norm_eps)};
  const kernels::AttentionOptions causal{.cu_seqlens_q = cu.view({2}), .cu_seqlens_k = cu.view({2}), .max_seqlen_q = T, .causal = true};

  embedding_gather(device_, Launch{.grid = uint32_t(T), .block = 128}, embedding_.view({c.vocab, H}), ids.view({T}), h.view({T, H}));
  PrefillOutputs out;
  for (const Layer& L : layers_) {
    // Attention: x = norm(h); q, k, v projections; q and k normed per head and rotated.
    kernels::rmsnorm(device_, h.view({T, H}), L.input_norm.view({H}), x.view({T, H}), norm);
    kernels::gemm(device_, x.view({T, H}), L.q.view({nq, H}), q.view({T, nq}));
    kernels::gemm(device_, x.view({T, H}), L.k.view({nkv, H}), k.view({T, nkv}));
    kernels::gemm(device_, x.view({T, H}), L.v.view({nkv, H}), v.view({T, nkv}));
    kernels::rmsnorm(device_, q.view({T * c.heads, d}), L.q_norm.view({d}), q.view({T * c.heads, d}), norm);
    kernels::rmsnorm(device_, k.view({T * c.kv_heads, d}), L.k_norm.view({d}), k.view({T * c.kv_heads, d}), norm);
    kernels::rope(device_, q.view({T, c.heads, d}), pos.view({T}), inv_freq_.view({d / 2}));
    kernels::rope(device_, k.view({T, c.kv_heads, d}), pos.view({T}), inv_freq_.view({d / 2}));
    kernels::attention_forward(device_, q.view({T, c.heads, d}), k.view({T, c.kv_heads, d}), v.view({T, c.kv_heads, d}),
                               attention.view({T, c.heads, d}), lse.view({c.heads, T}), causal);
    // h += o_proj(attention): the residual add in the GEMM's epilogue.
    kernels::gemm(device_, attention.view({T, nq}), L.o.view({H, nq}), h.view({T, H}), {.beta = 1});
    // MLP: h += down(silu(gate(x)) * up(x)), x = norm(h).
    kernels::rmsnorm(device_, h.view({T, H}), L.post_norm.view({H}), x.view({T, H}), norm);
    kernels::gemm(device_, x.view({T, H}), L.gate.view({I, H}), gate.view({T, I}));
    kernels::gemm(device_, x.view({T, H}), L.up.view({I, H}), up.view({T, I}));
    kernels::silu_mul(device_, gate.view({T, I}), up.view({T, I}), gate.view({T, I}));
    kernels::gemm(device_, gate.view({T, I}), L.down.view({H, I}), h.view({T, H}), {.beta = 1});
    out.layers.push_back(h.to_host());
  }
  kernels::rmsnorm(device_, h.view({T, H}), final_norm_.view({H}), x.view({T, H}), norm);
  Buffer<bf16> logits = device_.alloc<bf16>(size_t(T * c.vocab));
  const Buffer<bf16>& head = c.tie_word_embeddings ? embedding_ : lm_head_;
  kernels::gemm(device_, x.view({T, H}), head.view({c.vocab, H}), logits.view({T, c.vocab}));
  out.logits = logits.to_host();
  return out;
}

}  // namespace qwen3
