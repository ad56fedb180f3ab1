#include "model.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <string>

#include <cutejit/kernels/attention.hpp>
#include <cutejit/kernels/elementwise.hpp>
#include <cutejit/kernels/gemm.hpp>
#include <cutejit/kernels/norm.hpp>

#include "argmax_rows.hpp"
#include "row_copies.hpp"
#include "split_qkv.hpp"

namespace qwen3 {

using namespace cutejit;

namespace {

/// The checkpoint's tensor `name`'s values (its BF16 bytes as they are).
std::vector<bf16> values_of(const Checkpoint& checkpoint, const std::string& name) {
  const TensorView& t = checkpoint.tensor(name);
  std::vector<bf16> host(t.bytes.size() / sizeof(bf16));
  std::memcpy(host.data(), t.bytes.data(), t.bytes.size());
  return host;
}

}  // namespace

Model::Model(const Device& device, const Checkpoint& checkpoint)
    : Model(device, checkpoint.config(), [&](const ExpectedTensor& t) { return values_of(checkpoint, t.name); }) {}

Model::Model(const Device& device, const Config& config, const WeightSource& weight)
    : device_(device), config_(config), stream_(device) {
  std::map<std::string, ExpectedTensor> expected;
  for (ExpectedTensor& t : expected_tensors(config)) expected.emplace(t.name, std::move(t));
  auto values = [&](const std::string& name) {
    const ExpectedTensor& t = expected.at(name);
    std::vector<bf16> v = weight(t);
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    if (int64_t(v.size()) != n)
      throw Error("error: qwen3: the weight source gave " + std::to_string(v.size()) + " values for " + name + ", which has " + std::to_string(n));
    return v;
  };
  auto w = [&](const std::string& name) { return device.upload(values(name)); };
  embedding_ = w("model.embed_tokens.weight");
  final_norm_ = w("model.norm.weight");
  if (!config_.tie_word_embeddings) lm_head_ = w("lm_head.weight");
  for (int64_t l = 0; l < config_.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    // The gate and up projections as one (2 x intermediate, hidden) weight: one GEMM writes
    // both halves of each token's row.
    std::vector<bf16> gate_up = values(p + "mlp.gate_proj.weight"), up = values(p + "mlp.up_proj.weight");
    gate_up.insert(gate_up.end(), up.begin(), up.end());
    // Likewise q, k and v as one (heads + 2 kv_heads) x head_dim by hidden weight, and the q and
    // k norms' weights as the rows of one (2, head_dim) tensor.
    std::vector<bf16> qkv = values(p + "self_attn.q_proj.weight");
    for (const char* name : {"self_attn.k_proj.weight", "self_attn.v_proj.weight"}) {
      std::vector<bf16> more = values(p + name);
      qkv.insert(qkv.end(), more.begin(), more.end());
    }
    std::vector<bf16> qk_norm = values(p + "self_attn.q_norm.weight"), k_norm = values(p + "self_attn.k_norm.weight");
    qk_norm.insert(qk_norm.end(), k_norm.begin(), k_norm.end());
    layers_.push_back({w(p + "input_layernorm.weight"), device.upload(qkv), device.upload(qk_norm), w(p + "self_attn.o_proj.weight"),
                       w(p + "post_attention_layernorm.weight"), device.upload(gate_up), w(p + "mlp.down_proj.weight")});
  }
  inv_freq_ = device.upload(kernels::rope_inv_freq(config_.head_dim, config_.rope_theta));
}

/// One forward pass: sequences packed along tokens, each token's id and position, and what
/// the attention needs. A prefill attends within each sequence (cu_seqlens, from position 0); a
/// decode step attends to the cache, one query a sequence.
struct Model::Pass {
  std::vector<int32_t> ids, positions;
  std::vector<int32_t> cu_seqlens;  ///< prefill: batch + 1 offsets
  int64_t max_seqlen = 0;           ///< prefill: the longest prompt
  bool decode = false;
  bool greedy = false;              ///< the tokens chosen on the device instead of the logits
  float temperature = 0;            ///< with greedy: 0 takes the largest logit, more draws from the softmax
  uint32_t seed = 0;                ///< the draw's seed
  int32_t top_k = 0;                ///< the draw's cuts (sampling.hpp)
  float top_p = 1.0f;
  std::vector<int32_t> slots;       ///< with a cache: each token's cache slot
  std::vector<int32_t> logit_rows;  ///< the tokens whose logits are wanted; empty: all
};

void Model::check_tokens(const std::vector<int32_t>& tokens, const char* what) const {
  for (size_t t = 0; t < tokens.size(); ++t)
    if (tokens[t] < 0 || tokens[t] >= config_.vocab)
      throw Error("error: qwen3: token " + std::to_string(tokens[t]) + " at " + what + " " + std::to_string(t) +
                  " is outside the vocabulary of " + std::to_string(config_.vocab));
}

void Model::check_cache(const KvCache& cache) const {
  if (cache.layers() != config_.layers || cache.kv_heads() != config_.kv_heads || cache.head_dim() != config_.head_dim)
    throw Error("error: qwen3: the KV cache was made for " + std::to_string(cache.layers()) + " layers of " +
                std::to_string(cache.kv_heads()) + " KV heads of " + std::to_string(cache.head_dim()) + ", the model has " +
                std::to_string(config_.layers) + " of " + std::to_string(config_.kv_heads) + " of " + std::to_string(config_.head_dim));
}

PrefillOutputs Model::prefill(const std::vector<int32_t>& tokens) const {
  const int64_t T = int64_t(tokens.size());
  if (T < 1) throw Error("error: qwen3: prefill takes at least one token");
  check_tokens(tokens, "position");
  Pass pass{.ids = tokens, .positions = std::vector<int32_t>(size_t(T)), .cu_seqlens = {0, int32_t(T)}, .max_seqlen = T};
  std::iota(pass.positions.begin(), pass.positions.end(), 0);
  PrefillOutputs out;
  out.logits = forward(pass, nullptr, &out.layers);
  return out;
}

std::vector<bf16> Model::prefill(const std::vector<std::vector<int32_t>>& prompts, KvCache& cache, int64_t first) const {
  check_cache(cache);
  if (first < 0 || first >= cache.sequences())
    throw Error("error: qwen3: prefill's first sequence is " + std::to_string(first) + "; the KV cache has sequences 0 to " +
                std::to_string(cache.sequences() - 1));
  if (prompts.empty() || int64_t(prompts.size()) > cache.sequences() - first)
    throw Error("error: qwen3: prefill from sequence " + std::to_string(first) + " takes 1 to " + std::to_string(cache.sequences() - first) +
                " prompts (the KV cache's sequences from there), not " + std::to_string(prompts.size()));
  Pass pass{.cu_seqlens = {0}};
  std::vector<int64_t> counts(size_t(first), 0);  // the sequences before `first` do not grow
  for (size_t b = 0; b < prompts.size(); ++b) {
    const std::vector<int32_t>& p = prompts[b];
    const int64_t sequence = first + int64_t(b);
    if (p.empty()) throw Error("error: qwen3: prompt " + std::to_string(b) + " is empty; a prompt has at least one token");
    if (cache.length(sequence) != 0)
      throw Error("error: qwen3: prefill writes a sequence from its start, but the KV cache's sequence " + std::to_string(sequence) +
                  " holds " + std::to_string(cache.length(sequence)) + " tokens: reset it, or continue it with decode");
    check_tokens(p, ("prompt " + std::to_string(b) + ", position").c_str());
    pass.ids.insert(pass.ids.end(), p.begin(), p.end());
    for (size_t t = 0; t < p.size(); ++t) pass.positions.push_back(int32_t(t));
    pass.cu_seqlens.push_back(int32_t(pass.ids.size()));
    pass.logit_rows.push_back(int32_t(pass.ids.size() - 1));
    pass.max_seqlen = std::max(pass.max_seqlen, int64_t(p.size()));
    counts.push_back(int64_t(p.size()));
  }
  pass.slots = cache.append(counts);
  cache.upload(stream_);
  return forward(pass, &cache, nullptr);
}

std::vector<bf16> Model::decode(const std::vector<int32_t>& tokens, KvCache& cache) const {
  Pass pass = decode_pass(tokens, cache);
  return forward(pass, &cache, nullptr);
}

std::vector<int32_t> Model::decode_greedy(const std::vector<int32_t>& tokens, KvCache& cache) const {
  Pass pass = decode_pass(tokens, cache);
  pass.greedy = true;
  return chosen_tokens(pass, cache, "greedy");
}

std::vector<int32_t> Model::decode_sampled(const std::vector<int32_t>& tokens, KvCache& cache, float temperature, uint32_t seed,
                                           int64_t top_k, float top_p) const {
  if (!(temperature > 0 && temperature <= 3.4028235e38f))
    throw Error("error: qwen3: decode_sampled draws at a temperature above 0 (a finite number), not " + std::to_string(temperature) +
                "; decode_greedy is temperature 0");
  if (top_k < 0 || !(top_p > 0 && top_p <= 1))
    throw Error("error: qwen3: decode_sampled takes top_k of 0 (no cut) or more and top_p in (0, 1] (1: no cut), not " +
                std::to_string(top_k) + " and " + std::to_string(top_p));
  Pass pass = decode_pass(tokens, cache);
  pass.greedy = true;
  pass.temperature = temperature;
  pass.seed = seed;
  pass.top_k = int32_t(std::min<int64_t>(top_k, config_.vocab));  // more than the vocabulary is all of it
  pass.top_p = top_p;
  return chosen_tokens(pass, cache, "sampling");
}

std::vector<int32_t> Model::chosen_tokens(const Pass& pass, KvCache& cache, const char* how) const {
  std::vector<int32_t> next;
  forward(pass, &cache, nullptr, &next);
  for (size_t b = 0; b < next.size(); ++b)
    if (next[b] < 0)
      throw Error("error: qwen3: the logits of sequence " + std::to_string(b) + " hold a value that is not a finite number; " + how +
                  " needs finite logits");
  return next;
}

Model::Pass Model::decode_pass(const std::vector<int32_t>& tokens, KvCache& cache) const {
  check_cache(cache);
  if (tokens.empty() || int64_t(tokens.size()) > cache.sequences())
    throw Error("error: qwen3: a decode step takes 1 to " + std::to_string(cache.sequences()) + " tokens (one a sequence of the KV cache), not " +
                std::to_string(tokens.size()));
  check_tokens(tokens, "sequence");
  Pass pass{.ids = tokens, .decode = true};
  for (size_t b = 0; b < tokens.size(); ++b) pass.positions.push_back(int32_t(cache.length(int64_t(b))));
  pass.slots = cache.append(std::vector<int64_t>(tokens.size(), 1));
  cache.upload(stream_);
  return pass;
}

namespace {

/// Copies `values` to the start of `buffer` on `stream` (the rest of the buffer gets zeros: an
/// asynchronous copy moves a whole buffer). From pageable memory the copy is staged before the
/// call returns, so `values` may go at once.
void upload_start(Buffer<int32_t>& buffer, const std::vector<int32_t>& values, StreamHandle stream) {
  std::vector<int32_t> whole(buffer.size(), 0);
  std::copy(values.begin(), values.end(), whole.begin());
  buffer.upload_async(whole, stream);
}

}  // namespace

Model::Activations& Model::activations(int64_t tokens) const {
  Activations& a = activations_;
  if (tokens <= a.tokens) return a;
  graphs_.clear();  // they hold the old buffers' addresses
  stream_.synchronize();
  const Config& c = config_;
  const auto n = size_t(tokens);
  Buffer<bf16> logits = std::move(a.logits);
  Buffer<float> workspace = std::move(a.decode_workspace);
  a = {};  // the old buffers go first
  a.logits = std::move(logits), a.decode_workspace = std::move(workspace);
  a.tokens = tokens;
  a.h = device_.alloc<bf16>(n * size_t(c.hidden)), a.x = device_.alloc<bf16>(n * size_t(c.hidden));
  a.qkv = device_.alloc<bf16>(n * size_t((c.heads + 2 * c.kv_heads) * c.head_dim));
  a.q = device_.alloc<bf16>(n * size_t(c.heads * c.head_dim)), a.attention = device_.alloc<bf16>(n * size_t(c.heads * c.head_dim));
  a.k = device_.alloc<bf16>(n * size_t(c.kv_heads * c.head_dim)), a.v = device_.alloc<bf16>(n * size_t(c.kv_heads * c.head_dim));
  a.gate_up = device_.alloc<bf16>(n * size_t(2 * c.intermediate));
  a.lse = device_.alloc<float>(n * size_t(c.heads));
  a.ids = device_.alloc<int32_t>(n), a.positions = device_.alloc<int32_t>(n), a.cu_seqlens = device_.alloc<int32_t>(n + 1);
  a.slots = device_.alloc<int32_t>(n), a.logit_rows = device_.alloc<int32_t>(n), a.greedy = device_.alloc<int32_t>(n);
  a.seed = device_.alloc<uint32_t>(1), a.inv_temperature = device_.alloc<float>(1);
  a.top_k = device_.alloc<int32_t>(1), a.top_p = device_.alloc<float>(1);
  return a;
}

std::vector<bf16> Model::forward(const Pass& pass, KvCache* cache, std::vector<std::vector<bf16>>* layers, std::vector<int32_t>* greedy) const {
  const Config& c = config_;
  const int64_t T = int64_t(pass.ids.size()), B = pass.decode ? T : int64_t(pass.cu_seqlens.size()) - 1;
  const int64_t R = pass.logit_rows.empty() ? T : int64_t(pass.logit_rows.size());
  Activations& a = activations(T);
  if (size_t(R * c.vocab) > a.logits.size()) {
    graphs_.clear();
    stream_.synchronize();
    a.logits = device_.alloc<bf16>(size_t(R * c.vocab));
  }
  // A decode step attends over the cache with its splits chosen for the cache's capacity, not
  // this step's lengths, so that every step of a batch size runs the same kernels (and a graph
  // of them).
  kernels::DecodeOptions decode{.q_len = 1, .max_seqlen_k = cache ? cache->max_tokens() : 0, .splits = decode_splits_, .stream = stream_,
                                .programmatic_dependent_launch = dependent_launches(pass)};
  if (pass.decode) {
    const auto floats = size_t(kernels::attention_decode_workspace(device_, a.q.view({T, c.heads, c.head_dim}), cache->keys(0),
                                                                   cache->block_table(B), decode));
    if (floats > a.decode_workspace.size()) {
      graphs_.clear();
      stream_.synchronize();
      a.decode_workspace = device_.alloc<float>(floats);
    }
    if (floats > 0) decode.workspace = a.decode_workspace.view({int64_t(floats)});
  }
  upload_start(a.ids, pass.ids, stream_), upload_start(a.positions, pass.positions, stream_);
  upload_start(a.cu_seqlens, pass.cu_seqlens, stream_), upload_start(a.slots, pass.slots, stream_);
  upload_start(a.logit_rows, pass.logit_rows, stream_);
  if (pass.temperature > 0) {
    a.seed.upload_async(std::vector<uint32_t>{pass.seed}, stream_);
    a.inv_temperature.upload_async(std::vector<float>{1.0f / pass.temperature}, stream_);
    a.top_k.upload_async(std::vector<int32_t>{pass.top_k}, stream_);
    a.top_p.upload_async(std::vector<float>{pass.top_p}, stream_);
  }

  marked_ = 0;
  mark("start");
  if (pass.decode && use_graphs_ && !profile_) {
    if (graphs_cache_ != cache->id()) graphs_.clear(), graphs_cache_ = cache->id();
    const GraphKey key{B, pass.greedy, pass.temperature > 0};
    if (auto g = graphs_.find(key); g != graphs_.end()) {
      g->second.launch(stream_);
    } else {
      // The first step of this batch size runs (compiling and loading what it needs), then the
      // same kernels are captured for the next.
      queue_kernels(pass, cache, decode, nullptr);
      stream_.synchronize();
      graphs_.emplace(key, Graph::capture(device_, stream_, [&] { queue_kernels(pass, cache, decode, nullptr); }));
    }
  } else {
    queue_kernels(pass, cache, decode, layers);
  }
  // An asynchronous copy moves a whole buffer.
  std::vector<bf16> logits(pass.greedy ? 0 : a.logits.size());
  if (pass.greedy) {
    greedy->resize(a.greedy.size());
    a.greedy.download_async(*greedy, stream_);
  } else {
    a.logits.download_async(logits, stream_);
  }
  stream_.synchronize();
  if (pass.greedy) greedy->resize(size_t(R));
  else logits.resize(size_t(R * c.vocab));
  for (size_t i = 1; profile_ && i < marked_; ++i)
    profile_->emplace_back(marks_[i].first, cutejit::elapsed_ms(marks_[i - 1].second, marks_[i].second));
  return logits;
}

bool Model::dependent_launches(const Pass& pass) const {
  return use_dependent_launches_ && pass.decode && decode_launches_dependent(device_.target());
}

void Model::mark(const char* stage) const {
  if (!profile_) return;
  if (marked_ == marks_.size()) marks_.emplace_back(stage, Event(device_));
  marks_[marked_].first = stage;
  marks_[marked_++].second.record(stream_);
}

void Model::queue_kernels(const Pass& pass, KvCache* cache, const kernels::DecodeOptions& decode,
                          std::vector<std::vector<bf16>>* layers) const {
  const Config& c = config_;
  const int64_t T = int64_t(pass.ids.size()), H = c.hidden, d = c.head_dim, nq = c.heads * d, nkv = c.kv_heads * d, I = c.intermediate;
  const int64_t nqkv = nq + 2 * nkv, B = pass.decode ? T : int64_t(pass.cu_seqlens.size()) - 1;
  Activations& a = activations_;
  const Buffer<int32_t> &ids = a.ids, &pos = a.positions, &cu = a.cu_seqlens, &slots = a.slots;
  Buffer<bf16> &h = a.h, &x = a.x, &qkv = a.qkv, &q = a.q, &k = a.k, &v = a.v, &attention = a.attention, &gate_up = a.gate_up;
  Buffer<float>& lse = a.lse;
  const StreamHandle stream = stream_;
  const kernels::NormOptions norm{.eps = float(c.rms_norm_eps), .stream = stream};
  const kernels::ElementwiseOptions on_stream{.stream = stream};
  // A decode step's few-row projections, split and attention are each scheduled before the
  // kernel ahead of them completes (programmatic dependent launch): a step is some 250 short
  // kernels, and the gaps between them add up.
  const bool dependent = dependent_launches(pass);
  const kernels::GemmOptions plain{.stream = stream, .programmatic_dependent_launch = dependent};
  const kernels::GemmOptions residual{.beta = 1, .stream = stream, .programmatic_dependent_launch = dependent};
  const Launch rows{.grid = uint32_t(T), .block = 128, .stream = stream};
  // For one or two tokens (decode steps), each norm fuses into the projection that reads it,
  // and SiLU·mul into the gate/up projection (gemm's rmsnorm_a and glu): three launches fewer
  // a layer, each of which cost more in launch and tail than its few KB of work.
  const bool fused = use_fusions_ && T <= fused_pass_max_tokens;
  // Past those, SiLU·mul still fuses wherever gemm takes it: up to 8 rows (the few-row kernel on
  // the tensor cores, which pair W's and V's rows in one MMA) and for any M on sm_90a.
  const bool glu_fused = use_fusions_ && kernels::gemm_fuses_glu(device_.target(), T);
  auto normed = [&](const Buffer<bf16>& weight) {
    return kernels::GemmOptions{.rmsnorm_a = kernels::RmsNorm{weight.view({H}), float(c.rms_norm_eps)}, .stream = stream,
                                .programmatic_dependent_launch = dependent};
  };

  gather_rows(device_, rows, embedding_.view({c.vocab, H}), ids.view({T}), h.view({T, H}));
  mark("embedding");
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& L = layers_[l];
    // Attention: x = norm(h); the q, k and v projections as one GEMM, split with q and k normed
    // per head and rotated, and the new keys and values written into the cache.
    if (fused) {
      kernels::gemm(device_, h.view({T, H}), L.qkv.view({nqkv, H}), qkv.view({T, nqkv}), normed(L.input_norm));
      mark("rmsnorm + qkv projection");
    } else {
      kernels::rmsnorm(device_, h.view({T, H}), L.input_norm.view({H}), x.view({T, H}), norm);
      mark("rmsnorm");
      kernels::gemm(device_, x.view({T, H}), L.qkv.view({nqkv, H}), qkv.view({T, nqkv}), plain);
      mark("qkv projection");
    }
    // With no cache, k and v stand in for the cache's rows (store = 0: never touched).
    const DeviceTensor<bf16> k_rows = cache ? cache->key_rows(int64_t(l)) : k.view({T, nkv});
    const DeviceTensor<bf16> v_rows = cache ? cache->value_rows(int64_t(l)) : v.view({T, nkv});
    split_qkv(device_, split_qkv_launch(T, c.heads + 2 * c.kv_heads, int(d), stream, dependent),
              qkv.view({T, nqkv}), L.qk_norm.view({2, d}), pos.view({T}), inv_freq_.view({d / 2}), q.view({T, c.heads, d}),
              k.view({T, c.kv_heads, d}), v.view({T, c.kv_heads, d}), slots.view({T}), k_rows, v_rows, float(c.rms_norm_eps), int(d),
              int(cache != nullptr), dependent);
    mark("split_qkv (q/k norm, rope, kv store)");
    if (pass.decode)
      kernels::attention_decode(device_, q.view({T, c.heads, d}), cache->keys(int64_t(l)), cache->values(int64_t(l)),
                                cache->block_table(B), cache->lengths(B), attention.view({T, c.heads, d}), lse.view({c.heads, T}),
                                decode);
    else
      kernels::attention_forward(device_, q.view({T, c.heads, d}), k.view({T, c.kv_heads, d}), v.view({T, c.kv_heads, d}),
                                 attention.view({T, c.heads, d}), lse.view({c.heads, T}),
                                 {.cu_seqlens_q = cu.view({B + 1}), .cu_seqlens_k = cu.view({B + 1}), .max_seqlen_q = pass.max_seqlen,
                                  .causal = true, .stream = stream});
    mark("attention");
    // h += o_proj(attention): the residual add in the GEMM's epilogue.
    kernels::gemm(device_, attention.view({T, nq}), L.o.view({H, nq}), h.view({T, H}), residual);
    mark("output projection + residual");
    // MLP: x = norm(h); h += down(silu(gate(x)) * up(x)), gate and up from one GEMM.
    const DeviceTensor<bf16> gate = gate_up.view({T, I}, {2 * I, 1});
    if (fused) {
      kernels::GemmOptions swiglu = normed(L.post_norm);
      swiglu.glu = kernels::Activation::silu;
      kernels::gemm(device_, h.view({T, H}), L.gate_up.view({2 * I, H}), gate, swiglu);
      mark("rmsnorm + gate/up projection + silu_mul");
    } else {
      kernels::rmsnorm(device_, h.view({T, H}), L.post_norm.view({H}), x.view({T, H}), norm);
      mark("rmsnorm");
      if (glu_fused) {  // SiLU·mul in the projection's epilogue: gate/up's product is never stored
        kernels::GemmOptions swiglu = plain;
        swiglu.glu = kernels::Activation::silu;
        kernels::gemm(device_, x.view({T, H}), L.gate_up.view({2 * I, H}), gate, swiglu);
        mark("gate/up projection + silu_mul");
      } else {
        kernels::gemm(device_, x.view({T, H}), L.gate_up.view({2 * I, H}), gate_up.view({T, 2 * I}), plain);
        mark("gate/up projection");
        const DeviceTensor<bf16> up = DeviceTensor<bf16>::from_pointer(gate_up.data() + uint64_t(I) * sizeof(bf16), {T, I}, {2 * I, 1});
        kernels::silu_mul(device_, gate, up, gate, on_stream);
        mark("silu_mul");
      }
    }
    kernels::gemm(device_, gate, L.down.view({H, I}), h.view({T, H}), residual);
    mark("down projection + residual");
    if (layers) {
      layers->emplace_back(h.size());
      h.download_async(layers->back(), stream);
      stream_.synchronize();
      layers->back().resize(size_t(T * H));
    }
  }
  // The final norm and the LM head, over the rows whose logits are wanted.
  int64_t R = T;
  if (!pass.logit_rows.empty()) {
    R = int64_t(pass.logit_rows.size());
    gather_rows(device_, Launch{.grid = uint32_t(R), .block = 128, .stream = stream}, h.view({T, H}), a.logit_rows.view({R}), x.view({R, H}));
    h.copy_from(x, stream);
    mark("logit rows");
  }
  const Buffer<bf16>& head = c.tie_word_embeddings ? embedding_ : lm_head_;
  if (use_fusions_ && R <= fused_pass_max_tokens) {
    kernels::gemm(device_, h.view({R, H}), head.view({c.vocab, H}), a.logits.view({R, c.vocab}), normed(final_norm_));
    mark("rmsnorm + lm head");
  } else {
    kernels::rmsnorm(device_, h.view({R, H}), final_norm_.view({H}), x.view({R, H}), norm);
    mark("rmsnorm");
    kernels::gemm(device_, x.view({R, H}), head.view({c.vocab, H}), a.logits.view({R, c.vocab}), plain);
    mark("lm head");
  }
  const Launch choice{.grid = uint32_t(R), .block = row_choice::threads, .stream = stream};
  if (pass.greedy && pass.temperature > 0) {
    sample_rows(device_, choice, a.logits.view({R, c.vocab}), a.greedy.view({R}), a.seed.view({1}), a.inv_temperature.view({1}),
                a.top_k.view({1}), a.top_p.view({1}));
    mark("sampled choice");
  } else if (pass.greedy) {
    argmax_rows(device_, choice, a.logits.view({R, c.vocab}), a.greedy.view({R}));
    mark("greedy choice");
  }
}

}  // namespace qwen3
