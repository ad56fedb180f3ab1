// The model's passes (model.cpp's queue_kernels) replayed as descriptions: each kernel's
// tensors with the shapes and strides the pass gives them, through the operators' *_compile
// forms and the model's own kernels' compile. Every layer launches the same kernels, so one
// layer stands for all. A test warms a cache with this and then runs the passes, which must
// compile nothing: that keeps the two in step.
#include "compile.hpp"

#include <string>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/attention.hpp>
#include <cutejit/kernels/elementwise.hpp>
#include <cutejit/kernels/gemm.hpp>
#include <cutejit/kernels/norm.hpp>

#include "argmax_rows.hpp"
#include "kv_cache.hpp"
#include "model.hpp"
#include "row_copies.hpp"
#include "split_qkv.hpp"

namespace qwen3 {

using namespace cutejit;

namespace {

/// A description of a compact bf16 tensor.
DeviceTensor<bf16> described(std::initializer_list<int64_t> shape) { return DeviceTensor<bf16>::for_compile(shape); }

class Compiler {
 public:
  Compiler(const Config& config, const Target& target, const Workload& w)
      : c_(config),
        target_(target),
        geometry_(KvCache::geometry(w.sequences, w.max_tokens, w.page_size, w.pages)),
        sequences_(w.sequences),
        max_tokens_(w.max_tokens),
        page_size_(w.page_size) {}

  /// A prefill of `tokens` tokens in `prompts` prompts into the cache.
  void prefill(int64_t tokens, int64_t prompts) {
    const int64_t T = tokens, B = prompts;
    pass_ = "a prefill of " + std::to_string(T) + " tokens in " + std::to_string(B) + " prompts";
    if (B < 1 || T < B) throw Error("error: each prompt has at least one token");
    if (B > sequences_ || T > B * max_tokens_)
      throw Error("error: the KV cache holds " + std::to_string(sequences_) + " sequences of up to " + std::to_string(max_tokens_) + " tokens");
    embed(T);
    const auto cu = DeviceTensor<int32_t>::for_compile({B + 1});
    layer(T, false, [&](const DeviceTensor<bf16>& q, const DeviceTensor<bf16>& k, const DeviceTensor<bf16>& v, const DeviceTensor<bf16>& o,
                        const DeviceTensor<f32>& lse) {
      keep(kernels::attention_forward_compile(target_, q, k, v, o, lse,
                                              {.cu_seqlens_q = cu, .cu_seqlens_k = cu, .max_seqlen_q = T, .causal = true}));
    });
    // Each prompt's last token: its row gathered, then the final norm and the LM head.
    keep(gather_rows.compile(target_, described({T, c_.hidden}), DeviceTensor<int32_t>::for_compile({B}), described({B, c_.hidden})));
    head(B, false, false);
  }

  /// A decode step of `batch` sequences, its logits brought back or its tokens chosen on the
  /// device (greedy or sampled).
  void decode(int64_t batch) {
    const int64_t B = batch;
    pass_ = "a decode step of " + std::to_string(B) + " sequences";
    if (B < 1 || B > sequences_) throw Error("error: the KV cache holds " + std::to_string(sequences_) + " sequences");
    embed(B);
    const auto cache = described({geometry_.pages, page_size_, c_.kv_heads, c_.head_dim});
    const auto table = DeviceTensor<int32_t>::for_compile({B, geometry_.pages_per_sequence}), lengths = DeviceTensor<int32_t>::for_compile({B});
    // As Model::queue_kernels: a decode step's kernels take programmatic dependent launch.
    const bool dependent = decode_launches_dependent(target_);
    layer(B, dependent, [&](const DeviceTensor<bf16>& q, const DeviceTensor<bf16>&, const DeviceTensor<bf16>&, const DeviceTensor<bf16>& o,
                            const DeviceTensor<f32>& lse) {
      keep(kernels::attention_decode_compile(target_, q, cache, cache, table, lengths, o, lse,
                                             {.q_len = 1, .max_seqlen_k = geometry_.pages_per_sequence * page_size_,
                                              .programmatic_dependent_launch = dependent}));
    });
    head(B, true, dependent);
  }

  std::vector<CompiledKernel> kernels() && { return std::move(kernels_); }
  /// The pass being compiled, in words, for errors.
  const std::string& pass() const { return pass_; }

 private:
  void keep(CompiledKernel k) { kernels_.push_back(std::move(k)); }
  void keep(std::vector<CompiledKernel> ks) {
    for (CompiledKernel& k : ks) kernels_.push_back(std::move(k));
  }

  void embed(int64_t T) {
    keep(gather_rows.compile(target_, described({c_.vocab, c_.hidden}), DeviceTensor<int32_t>::for_compile({T}), described({T, c_.hidden})));
  }

  /// One layer over T tokens, the attention's kernels from `attention(q, k, v, o, lse)`, its
  /// kernels `dependent` (programmatic dependent launch) or not.
  template <class Attention>
  void layer(int64_t T, bool dependent, Attention&& attention) {
    const int64_t H = c_.hidden, d = c_.head_dim, nq = c_.heads * d, nkv = c_.kv_heads * d, I = c_.intermediate, nqkv = nq + 2 * nkv;
    const kernels::GemmOptions plain{.programmatic_dependent_launch = dependent};
    const kernels::GemmOptions residual{.beta = 1, .programmatic_dependent_launch = dependent};
    // As Model::queue_kernels: for a few tokens the norms and SiLU·mul fuse into the projections.
    const bool fused = T <= fused_pass_max_tokens;
    const kernels::GemmOptions normed{.rmsnorm_a = kernels::RmsNorm{described({H}), float(c_.rms_norm_eps)},
                                      .programmatic_dependent_launch = dependent};
    if (!fused) keep(kernels::rmsnorm_compile(target_, DType::bf16, T, H));
    keep(kernels::gemm_compile(target_, described({T, H}), described({nqkv, H}), described({T, nqkv}), fused ? normed : plain));
    const auto q = described({T, c_.heads, d}), k = described({T, c_.kv_heads, d}), v = described({T, c_.kv_heads, d});
    const auto slots = DeviceTensor<int32_t>::for_compile({T});
    const auto rows = described({geometry_.pages * page_size_, nkv});
    keep(split_qkv.compile(target_, described({T, nqkv}), described({2, d}), DeviceTensor<int32_t>::for_compile({T}),
                           DeviceTensor<f32>::for_compile({d / 2}), q, k, v, slots, rows, rows, float(c_.rms_norm_eps), int(d), 1, dependent));
    attention(q, k, v, described({T, c_.heads, d}), DeviceTensor<f32>::for_compile({c_.heads, T}));
    keep(kernels::gemm_compile(target_, described({T, nq}), described({H, nq}), described({T, H}), residual));
    // gate and up are views of the gate/up projection's rows, 2 I apart.
    const auto gate = DeviceTensor<bf16>::for_compile({T, I}, {2 * I, 1});
    if (fused) {
      kernels::GemmOptions swiglu = normed;
      swiglu.glu = kernels::Activation::silu;
      keep(kernels::gemm_compile(target_, described({T, H}), described({2 * I, H}), gate, swiglu));
    } else if (kernels::gemm_fuses_glu(target_, T)) {
      kernels::GemmOptions swiglu = plain;
      swiglu.glu = kernels::Activation::silu;
      keep(kernels::gemm_compile(target_, described({T, H}), described({2 * I, H}), gate, swiglu));
    } else {
      keep(kernels::gemm_compile(target_, described({T, H}), described({2 * I, H}), described({T, 2 * I}), plain));
      keep(kernels::silu_mul_compile(target_, DType::bf16, T, I));
    }
    keep(kernels::gemm_compile(target_, gate, described({H, I}), described({T, H}), residual));
  }

  /// The final norm and the LM head over R rows, and with `greedy` the device's choices of token
  /// (the largest logit, or a draw at a temperature).
  void head(int64_t R, bool greedy, bool dependent) {
    if (R <= fused_pass_max_tokens) {
      const kernels::GemmOptions normed{.rmsnorm_a = kernels::RmsNorm{described({c_.hidden}), float(c_.rms_norm_eps)},
                                        .programmatic_dependent_launch = dependent};
      keep(kernels::gemm_compile(target_, described({R, c_.hidden}), described({c_.vocab, c_.hidden}), described({R, c_.vocab}), normed));
    } else {
      keep(kernels::rmsnorm_compile(target_, DType::bf16, R, c_.hidden));
      keep(kernels::gemm_compile(target_, described({R, c_.hidden}), described({c_.vocab, c_.hidden}), described({R, c_.vocab}),
                                 {.programmatic_dependent_launch = dependent}));
    }
    if (greedy) {
      keep(argmax_rows.compile(target_, described({R, c_.vocab}), DeviceTensor<int32_t>::for_compile({R})));
      keep(sample_rows.compile(target_, described({R, c_.vocab}), DeviceTensor<int32_t>::for_compile({R}),
                               DeviceTensor<uint32_t>::for_compile({1}), DeviceTensor<f32>::for_compile({1}),
                               DeviceTensor<int32_t>::for_compile({1}), DeviceTensor<f32>::for_compile({1})));
    }
  }

 private:
  std::string pass_;
  const Config& c_;
  const Target& target_;
  KvCache::Geometry geometry_;
  int64_t sequences_, max_tokens_, page_size_;
  std::vector<CompiledKernel> kernels_;
};

}  // namespace

std::vector<CompiledKernel> compile_model(const Config& config, const Target& target, const Workload& workload) {
  Compiler compiler(config, target, workload);
  try {
    for (auto [tokens, prompts] : workload.prefills) compiler.prefill(tokens, prompts);
    for (int64_t batch : workload.decode_batches) compiler.decode(batch);
  } catch (const Error& e) {
    std::string why = e.what();
    if (why.rfind("error: ", 0) == 0) why.erase(0, 7);
    throw Error("error: qwen3: compiling " + compiler.pass() + " for " + target.name() + ": " + why);
  }
  return std::move(compiler).kernels();
}

}  // namespace qwen3
