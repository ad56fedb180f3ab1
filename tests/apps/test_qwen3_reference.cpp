// The host reference of Qwen3's forward pass, on properties any correct implementation has
// (its agreement with transformers itself is checked on the GPU machine, which has it:
// tests/apps/qwen3_reference_vs_transformers.py): a position's outputs do not depend on later
// tokens; grouped-query attention equals multi-head attention with each KV head's weights
// repeated for its group of query heads; a tied LM head is the embedding.
#include <catch2/catch.hpp>

#include "qwen3/reference.hpp"
#include "qwen3_test_weights.hpp"

using qwen3::Config;
using qwen3::TensorToWrite;
using qwen3_test::TempDir;
using qwen3_test::weights;

namespace {

TensorToWrite& find(std::vector<TensorToWrite>& ts, const std::string& name) {
  for (auto& t : ts)
    if (t.name == name) return t;
  throw std::logic_error(name);
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b, size_t count) {
  double m = 0;
  for (size_t i = 0; i < count; ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

const Config gqa{64, 2, 4, 2, 16, 96, 50, 1e4, 1e-6, false};

}  // namespace

TEST_CASE("the Qwen3 reference: a position's outputs do not depend on the tokens after it", "[unit][qwen3]") {
  TempDir dir;
  qwen3::write_checkpoint(dir.path, gqa, weights(gqa));
  const qwen3::Checkpoint ckpt(dir.path);
  const auto full = qwen3::reference_forward(ckpt, {3, 14, 15, 9, 26, 5});
  const auto prefix = qwen3::reference_forward(ckpt, {3, 14, 15});
  CHECK(max_difference(full.logits, prefix.logits, prefix.logits.size()) == 0.0);
  const auto other = qwen3::reference_forward(ckpt, {3, 14, 15, 49, 0, 1});
  CHECK(max_difference(full.logits, other.logits, prefix.logits.size()) == 0.0);
  CHECK(max_difference(full.logits, other.logits, full.logits.size()) > 1e-3);  // and do depend on their own
}

TEST_CASE("the Qwen3 reference: grouped-query attention is multi-head attention with each KV head repeated for its group",
          "[unit][qwen3]") {
  Config mha = gqa;
  mha.kv_heads = mha.heads;
  std::vector<TensorToWrite> grouped = weights(gqa), repeated = weights(mha);
  const int64_t d = gqa.head_dim, group = gqa.heads / gqa.kv_heads, row_bytes = 2 * gqa.hidden;
  for (int64_t l = 0; l < gqa.layers; ++l)
    for (const char* proj : {"k_proj", "v_proj"}) {
      const std::string name = "model.layers." + std::to_string(l) + ".self_attn." + proj + ".weight";
      const TensorToWrite& from = find(grouped, name);
      TensorToWrite& to = find(repeated, name);
      for (int64_t head = 0; head < mha.heads; ++head)  // query head h reads KV head h / group
        std::memcpy(to.bytes.data() + head * d * row_bytes, from.bytes.data() + (head / group) * d * row_bytes, size_t(d * row_bytes));
    }
  TempDir a, b;
  qwen3::write_checkpoint(a.path, gqa, grouped);
  qwen3::write_checkpoint(b.path, mha, repeated);
  const std::vector<int32_t> tokens{1, 2, 3, 40, 41, 42, 7};
  const auto x = qwen3::reference_forward(qwen3::Checkpoint(a.path), tokens);
  const auto y = qwen3::reference_forward(qwen3::Checkpoint(b.path), tokens);
  CHECK(max_difference(x.logits, y.logits, x.logits.size()) < 1e-12);
}

TEST_CASE("the Qwen3 reference: a tied LM head is the embedding", "[unit][qwen3]") {
  Config tied = gqa;
  tied.tie_word_embeddings = true;
  std::vector<TensorToWrite> untied_weights = weights(gqa), tied_weights = weights(tied);
  find(untied_weights, "lm_head.weight").bytes = find(untied_weights, "model.embed_tokens.weight").bytes;
  TempDir a, b;
  qwen3::write_checkpoint(a.path, gqa, untied_weights);
  qwen3::write_checkpoint(b.path, tied, tied_weights);
  const auto x = qwen3::reference_forward(qwen3::Checkpoint(a.path), {5, 6, 7});
  const auto y = qwen3::reference_forward(qwen3::Checkpoint(b.path), {5, 6, 7});
  CHECK(max_difference(x.logits, y.logits, x.logits.size()) == 0.0);
  CHECK_THROWS_WITH(qwen3::reference_forward(qwen3::Checkpoint(b.path), {5, 50}), Catch::Contains("token 50 at position 1 is outside"));
}
