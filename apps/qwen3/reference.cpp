#include "reference.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include <cutejit/core/error.hpp>

namespace qwen3 {

namespace {

/// A BF16 weight as float64 values (row-major, its checkpoint shape).
std::vector<double> weight(const Checkpoint& c, const std::string& name) {
  const TensorView& t = c.tensor(name);
  std::vector<double> out(t.bytes.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, t.bytes.data() + 2 * i, 2);
    const uint32_t f = uint32_t(bits) << 16;
    float v;
    std::memcpy(&v, &f, 4);
    out[i] = v;
  }
  return out;
}

/// y (rows x out) = x (rows x in) W^T, W (out x in) as the checkpoint stores a Linear's weight.
std::vector<double> linear(const std::vector<double>& x, const std::vector<double>& w, int64_t rows, int64_t in, int64_t out) {
  std::vector<double> y(size_t(rows * out));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = 0;
      for (int64_t i = 0; i < in; ++i) s += x[size_t(r * in + i)] * w[size_t(o * in + i)];
      y[size_t(r * out + o)] = s;
    }
  return y;
}

/// RMSNorm of each `width`-long group of x, in place.
void rmsnorm(std::vector<double>& x, const std::vector<double>& w, int64_t width, double eps) {
  for (size_t g = 0; g < x.size(); g += size_t(width)) {
    double squares = 0;
    for (int64_t i = 0; i < width; ++i) squares += x[g + size_t(i)] * x[g + size_t(i)];
    const double scale = 1.0 / std::sqrt(squares / double(width) + eps);
    for (int64_t i = 0; i < width; ++i) x[g + size_t(i)] *= scale * w[size_t(i)];
  }
}

/// Rotate-half RoPE of x (tokens x heads x d), in place, token t at position t.
void rope(std::vector<double>& x, int64_t tokens, int64_t heads, int64_t d, double theta) {
  const int64_t half = d / 2;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < half; ++i) {
        const double angle = double(t) * std::pow(theta, -2.0 * double(i) / double(d));
        const size_t at = size_t((t * heads + h) * d + i);
        const double a = x[at], b = x[at + size_t(half)];
        x[at] = a * std::cos(angle) - b * std::sin(angle);
        x[at + size_t(half)] = b * std::cos(angle) + a * std::sin(angle);
      }
}

}  // namespace

ReferenceOutputs reference_forward(const Checkpoint& checkpoint, const std::vector<int32_t>& tokens) {
  const Config& c = checkpoint.config();
  const int64_t T = int64_t(tokens.size()), H = c.hidden, d = c.head_dim, q_width = c.heads * d, kv_width = c.kv_heads * d;
  const std::vector<double> embedding = weight(checkpoint, "model.embed_tokens.weight");
  std::vector<double> h(size_t(T * H));
  for (int64_t t = 0; t < T; ++t) {
    if (tokens[size_t(t)] < 0 || tokens[size_t(t)] >= c.vocab)
      throw cutejit::Error("error: token " + std::to_string(tokens[size_t(t)]) + " at position " + std::to_string(t) +
                           " is outside the vocabulary of " + std::to_string(c.vocab));
    for (int64_t i = 0; i < H; ++i) h[size_t(t * H + i)] = embedding[size_t(tokens[size_t(t)] * H + i)];
  }
  ReferenceOutputs out;
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    // Attention.
    std::vector<double> x = h;
    rmsnorm(x, weight(checkpoint, p + "input_layernorm.weight"), H, c.rms_norm_eps);
    std::vector<double> q = linear(x, weight(checkpoint, p + "self_attn.q_proj.weight"), T, H, q_width);
    std::vector<double> k = linear(x, weight(checkpoint, p + "self_attn.k_proj.weight"), T, H, kv_width);
    std::vector<double> v = linear(x, weight(checkpoint, p + "self_attn.v_proj.weight"), T, H, kv_width);
    rmsnorm(q, weight(checkpoint, p + "self_attn.q_norm.weight"), d, c.rms_norm_eps);
    rmsnorm(k, weight(checkpoint, p + "self_attn.k_norm.weight"), d, c.rms_norm_eps);
    rope(q, T, c.heads, d, c.rope_theta);
    rope(k, T, c.kv_heads, d, c.rope_theta);
    std::vector<double> attention(size_t(T * q_width), 0.0);
    const int64_t group = c.heads / c.kv_heads;
    for (int64_t head = 0; head < c.heads; ++head) {
      const int64_t kv = head / group;
      for (int64_t t = 0; t < T; ++t) {
        std::vector<double> scores(size_t(t + 1));
        double top = -INFINITY;
        for (int64_t s = 0; s <= t; ++s) {
          double dot = 0;
          for (int64_t i = 0; i < d; ++i) dot += q[size_t((t * c.heads + head) * d + i)] * k[size_t((s * c.kv_heads + kv) * d + i)];
          scores[size_t(s)] = dot / std::sqrt(double(d));
          top = std::max(top, scores[size_t(s)]);
        }
        double total = 0;
        for (double& e : scores) total += (e = std::exp(e - top));
        for (int64_t s = 0; s <= t; ++s)
          for (int64_t i = 0; i < d; ++i)
            attention[size_t((t * c.heads + head) * d + i)] += scores[size_t(s)] / total * v[size_t((s * c.kv_heads + kv) * d + i)];
      }
    }
    const std::vector<double> o = linear(attention, weight(checkpoint, p + "self_attn.o_proj.weight"), T, q_width, H);
    for (size_t i = 0; i < h.size(); ++i) h[i] += o[i];
    // MLP.
    x = h;
    rmsnorm(x, weight(checkpoint, p + "post_attention_layernorm.weight"), H, c.rms_norm_eps);
    std::vector<double> gate = linear(x, weight(checkpoint, p + "mlp.gate_proj.weight"), T, H, c.intermediate);
    const std::vector<double> up = linear(x, weight(checkpoint, p + "mlp.up_proj.weight"), T, H, c.intermediate);
    for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
    const std::vector<double> m = linear(gate, weight(checkpoint, p + "mlp.down_proj.weight"), T, c.intermediate, H);
    for (size_t i = 0; i < h.size(); ++i) h[i] += m[i];
    out.layers.push_back(h);
  }
  rmsnorm(h, weight(checkpoint, "model.norm.weight"), H, c.rms_norm_eps);
  out.logits = linear(h, c.tie_word_embeddings ? embedding : weight(checkpoint, "lm_head.weight"), T, H, c.vocab);
  return out;
}

}  // namespace qwen3
