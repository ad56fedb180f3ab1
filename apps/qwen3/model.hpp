/** \file
 * Qwen3 on the GPU, on the kernel library: the checkpoint's weights uploaded once, then forward
 * passes over sequences packed along tokens, all in BF16 with f32 inside each kernel: the
 * embedding; per layer RMSNorm, the q, k and v projections as one GEMM, split into q, k and v
 * by one kernel that also applies the per-head RMSNorm of q and k and RoPE and writes the new
 * keys and values into the KV cache (split_qkv.hpp),
 * causal grouped-query attention, the output projection with the residual add fused into its
 * epilogue (beta = 1 on the residual stream), RMSNorm, the gate and up projections as one GEMM,
 * SiLU·mul and the down projection, its residual add fused too; the final norm and the LM head.
 * The fused projections' weights are concatenated at load. Every step is a kernels:: operator
 * except split_qkv, the row gather of row_copies.hpp and the greedy choice of argmax_rows.hpp.
 *
 * With a KV cache (kv_cache.hpp), a prefill writes a batch of prompts' keys and values into it
 * and attends with kernels::attention_forward over the packed prompts; a decode step appends one
 * token to each sequence and attends with kernels::attention_decode over the paged cache.
 * Every kernel is queued on the model's own stream.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cutejit/kernels/attention.hpp>
#include <cutejit/runtime/buffer.hpp>
#include <cutejit/runtime/device.hpp>
#include <cutejit/runtime/graph.hpp>
#include <cutejit/runtime/stream.hpp>

#include "checkpoint.hpp"
#include "kv_cache.hpp"

namespace qwen3 {

/// The most tokens a pass of which fuses each norm into the projection that reads it and SiLU·mul
/// into the gate/up projection (gemm's rmsnorm_a and glu). Measured on an H100 (Qwen3-8B,
/// context 1k, fused against not in one call): 5.2% faster a step at batch 1, 1.7% at 2, 0.8%
/// slower at 4 and 17% slower at 8, where the few-row kernel's arithmetic, not the weights'
/// bytes, sets its pace and the norm adds to it.
inline constexpr int64_t fused_pass_max_tokens = 2;

/// Whether a decode step's kernels take programmatic dependent launch on `target` (unless
/// Model::use_dependent_launches(false)): where griddepcontrol exists, sm_90 and newer.
inline bool decode_launches_dependent(const cutejit::Target& target) { return target.sm >= 90; }

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
  /// The weights `weight` gives for each of expected_tensors(config), uploaded to `device`
  /// (benchmarks make them random, with no checkpoint written).
  using WeightSource = std::function<std::vector<cutejit::bf16>(const ExpectedTensor&)>;
  Model(const cutejit::Device& device, const Config& config, const WeightSource& weight);

  const Config& config() const { return config_; }
  /// The forward pass over one sequence's `tokens` (positions 0, 1, ...), with no cache: every
  /// layer's output and every position's logits, for checking the model.
  PrefillOutputs prefill(const std::vector<int32_t>& tokens) const;
  /// Writes prompts[b] into the cache's sequence first + b, which must be empty, and returns the
  /// logits of each prompt's last token (prompts.size() x vocab). A large batch may be written
  /// a few sequences a pass, so that a pass's activations stay small.
  std::vector<cutejit::bf16> prefill(const std::vector<std::vector<int32_t>>& prompts, KvCache& cache, int64_t first = 0) const;
  /// One decode step: appends tokens[b] to the cache's sequence b, for b below tokens.size(),
  /// and returns each one's logits (tokens.size() x vocab). The first step of a batch size runs
  /// the kernels one by one and captures them as a CUDA graph; later steps of that size on the
  /// same cache replay it (write the step's inputs, one launch, read the logits back).
  std::vector<cutejit::bf16> decode(const std::vector<int32_t>& tokens, KvCache& cache) const;
  /// decode, with each sequence's next token chosen on the device as qwen3::greedy chooses it
  /// (the first of equal largest logits): only tokens.size() ids come back, not the logits.
  /// Logits that are not all finite numbers are an error, as for qwen3::greedy.
  std::vector<int32_t> decode_greedy(const std::vector<int32_t>& tokens, KvCache& cache) const;
  /// decode, with each sequence's next token drawn on the device from the softmax of its logits
  /// at `temperature` (above 0), the draws a function of `seed` (give each step its own), after
  /// the cuts of sampling.hpp's host `sample`: the top_k largest logits (0: all), then the fewest
  /// of those whose probabilities reach top_p (1: all). A step of a batch size is a CUDA graph
  /// of its own, as for decode_greedy; the cuts, like the seed, are inputs written before it.
  std::vector<int32_t> decode_sampled(const std::vector<int32_t>& tokens, KvCache& cache, float temperature, uint32_t seed,
                                      int64_t top_k = 0, float top_p = 1.0f) const;
  /// Whether decode steps are captured and replayed as CUDA graphs (the default), or run
  /// kernel by kernel each time; both compute the same logits, bit for bit.
  void use_graphs(bool on) { use_graphs_ = on, graphs_.clear(); }
  /// Whether a pass of a few tokens fuses each norm into the projection that reads it and
  /// SiLU·mul into the gate/up projection (gemm's rmsnorm_a and glu; the default), and a larger
  /// pass SiLU·mul where the GEMM takes it (kernels::gemm_fuses_glu), or runs them as kernels of
  /// their own: for measuring what the fusions save.
  void use_fusions(bool on) { use_fusions_ = on, graphs_.clear(); }
  /// Whether a decode step's projections, split and attention are launched with programmatic
  /// dependent launch (sm_90 and newer; the default), each kernel's blocks scheduled once the
  /// one before it has no block left running and waiting for its completion before reading
  /// what it wrote, or one after another: for measuring what it saves. Both compute the same
  /// logits, bit for bit.
  void use_dependent_launches(bool on) { use_dependent_launches_ = on, graphs_.clear(); }
  /// The decode attention's key ranges per sequence (kernels::DecodeOptions::splits); 0, the
  /// default, lets it choose for the GPU: for measuring other counts.
  void decode_splits(int64_t splits) { decode_splits_ = splits, graphs_.clear(); }
  /// Where a pass's GPU time goes. With `stages` given, the next passes run kernel by kernel
  /// (no graph), recording an event after each stage, and append each stage's name and GPU
  /// milliseconds to `stages` in the order they ran (a layer's stages once per layer); null
  /// stops it. The events add a few microseconds a stage, so the whole is slower than a step.
  void profile(std::vector<std::pair<std::string, float>>* stages) const { profile_ = stages; }

 private:
  struct Layer {
    cutejit::Buffer<cutejit::bf16> input_norm, qkv, qk_norm, o, post_norm, gate_up, down;
  };
  struct Pass;
  /// What a pass works in, kept from pass to pass (allocating and freeing device memory waits
  /// for the GPU) and grown when a pass has more tokens (the logits and the decode's workspace
  /// when a pass needs more of them).
  struct Activations {
    int64_t tokens = 0;
    cutejit::Buffer<cutejit::bf16> h, x, qkv, q, k, v, attention, gate_up, logits;
    cutejit::Buffer<float> lse, decode_workspace;
    cutejit::Buffer<int32_t> ids, positions, cu_seqlens, slots, logit_rows, greedy;
    cutejit::Buffer<uint32_t> seed;  // a sampled step's seed, 1 / temperature and cuts, written before each step
    cutejit::Buffer<float> inv_temperature, top_p;
    cutejit::Buffer<int32_t> top_k;
  };
  Activations& activations(int64_t tokens) const;
  /// The pass's logits (the rows it asks for) on the host, and each layer's output in `layers`
  /// when given; for a greedy pass, its tokens in `greedy` and no logits.
  std::vector<cutejit::bf16> forward(const Pass& pass, KvCache* cache, std::vector<std::vector<cutejit::bf16>>* layers,
                                     std::vector<int32_t>* greedy = nullptr) const;
  /// Queues the pass's kernels on the model's stream, its inputs already on the device.
  void queue_kernels(const Pass& pass, KvCache* cache, const cutejit::kernels::DecodeOptions& decode,
                     std::vector<std::vector<cutejit::bf16>>* layers) const;
  /// With a profile asked for, marks the end of `stage` on the model's stream.
  void mark(const char* stage) const;
  /// Whether the pass's kernels take programmatic dependent launch: decode steps on sm_90 and
  /// newer, unless use_dependent_launches(false).
  bool dependent_launches(const Pass& pass) const;
  /// A decode step's pass over `tokens`, their cache slots appended and uploaded.
  Pass decode_pass(const std::vector<int32_t>& tokens, KvCache& cache) const;
  /// Runs a pass that chooses its tokens on the device; an Error naming `how` for a row of logits
  /// that are not all finite numbers.
  std::vector<int32_t> chosen_tokens(const Pass& pass, KvCache& cache, const char* how) const;
  void check_tokens(const std::vector<int32_t>& tokens, const char* what) const;
  void check_cache(const KvCache& cache) const;

  const cutejit::Device& device_;
  Config config_;
  cutejit::Buffer<cutejit::bf16> embedding_, final_norm_, lm_head_;  // lm_head_ is empty when tied
  std::vector<Layer> layers_;
  cutejit::Buffer<float> inv_freq_;
  cutejit::Stream stream_;
  // So a model runs one pass at a time:
  mutable Activations activations_;
  bool use_graphs_ = true;
  bool use_fusions_ = true;
  bool use_dependent_launches_ = true;
  int64_t decode_splits_ = 0;
  // Decode steps by batch size, whether they choose on the device, and whether they sample, for one cache.
  using GraphKey = std::tuple<int64_t, bool, bool>;
  mutable std::map<GraphKey, cutejit::Graph> graphs_;
  mutable uint64_t graphs_cache_ = 0;                                   // that cache's id
  mutable std::vector<std::pair<std::string, float>>* profile_ = nullptr;
  mutable std::vector<std::pair<const char*, cutejit::Event>> marks_;  // this pass's, when profiled
  mutable size_t marked_ = 0;                                          // of marks_, those recorded
};

}  // namespace qwen3
