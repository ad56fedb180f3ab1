// The GPU model (apps/qwen3/model.hpp) against the float64 host reference on a tiny random
// configuration (2 layers, hidden 256, GQA 4:2, head dim 64): every layer's output and the
// logits. The model keeps BF16 between its kernels (about 2^-9 relative per rounding, a dozen
// roundings a layer), so each output may differ from the exact answer by a few per cent of its
// largest value; a wrong step (a missing RoPE, a misplaced head, a lost residual) moves it by
// tens of per cent. On sm_90a, sm_100a and sm_120a it runs each target's kernels.
#include <catch2/catch.hpp>

#include <cmath>

#include "qwen3/model.hpp"
#include "qwen3/reference.hpp"
#include "qwen3_test_weights.hpp"

using namespace cutejit;

namespace {

/// max |got - want| / max |want|.
double relative_error(const std::vector<bf16>& got, const std::vector<double>& want) {
  double worst = 0, largest = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = double(float(got[i]));
    worst = std::max(worst, std::isnan(g) ? INFINITY : std::abs(g - want[i]));
    largest = std::max(largest, std::abs(want[i]));
  }
  return worst / largest;
}

}  // namespace

TEST_CASE("the Qwen3 model on the GPU matches the float64 reference layer by layer on a tiny configuration",
          "[gpu][qwen3][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  const qwen3::Config tiny{256, 2, 4, 2, 64, 512, 320, 1e6, 1e-6, false};
  qwen3_test::TempDir dir;
  qwen3::write_checkpoint(dir.path, tiny, qwen3_test::weights(tiny));
  const qwen3::Checkpoint checkpoint(dir.path);
  std::vector<int32_t> tokens;
  for (int i = 0; i < 37; ++i) tokens.push_back(int32_t((i * 131 + 7) % tiny.vocab));
  const qwen3::ReferenceOutputs want = qwen3::reference_forward(checkpoint, tokens);
  const qwen3::Model model(gpu, checkpoint);
  const qwen3::PrefillOutputs got = model.prefill(tokens);
  REQUIRE(got.layers.size() == want.layers.size());
  for (size_t l = 0; l < want.layers.size(); ++l) {
    INFO("layer " << l);
    CHECK(relative_error(got.layers[l], want.layers[l]) < 3e-2);
  }
  CHECK(relative_error(got.logits, want.logits) < 3e-2);
  CHECK_THROWS_WITH(model.prefill({1, 2, tiny.vocab}), Catch::Contains("token 320 at position 2 is outside the vocabulary of 320"));
}
