// cutejit_qwen3_run CHECKPOINT_DIR TOKENS PROMPT OUT: the GPU model on a checkpoint, for comparing
// it with another implementation (tests/apps/qwen3_gpu_vs_transformers.py). Over the comma-
// separated token ids: the prefill of the first PROMPT tokens with every layer's output and
// every position's logits; then the same prompt into a KV cache and one teacher-forced decode
// step for each of the remaining tokens. OUT gets float32 values: the layers (layers x PROMPT x
// hidden), the prefill's logits (PROMPT x vocab), then each decode step's logits (the logits at
// positions PROMPT, PROMPT + 1, ...).
#include <cstdio>
#include <fstream>
#include <string>

#include <cutejit/cutejit.hpp>

#include "qwen3/command_line.hpp"
#include "qwen3/model.hpp"

namespace {

void write(std::ofstream& file, const std::vector<cutejit::bf16>& values) {
  std::vector<float> f(values.size());
  for (size_t i = 0; i < values.size(); ++i) f[i] = float(values[i]);
  file.write(reinterpret_cast<const char*>(f.data()), std::streamsize(f.size() * sizeof(float)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: cutejit_qwen3_run CHECKPOINT_DIR TOKENS PROMPT OUT (tokens comma-separated)\n");
    return 2;
  }
  try {
    const qwen3::Checkpoint checkpoint(argv[1]);
    const std::vector<int32_t> tokens = qwen3::parse_token_list(argv[2]);
    const size_t prompt = qwen3::parse_number<size_t>("PROMPT", argv[3]);
    if (prompt < 1 || prompt > tokens.size()) throw cutejit::Error("error: PROMPT is 1 to the number of tokens, not " + std::string(argv[3]));
    cutejit::Device gpu;
    const qwen3::Model model(gpu, checkpoint);
    const std::vector<int32_t> head(tokens.begin(), tokens.begin() + std::ptrdiff_t(prompt));
    const qwen3::PrefillOutputs out = model.prefill(head);
    std::ofstream file(argv[4], std::ios::binary);
    for (const auto& layer : out.layers) write(file, layer);
    write(file, out.logits);
    qwen3::KvCache cache(gpu, checkpoint.config(), 1, int64_t(tokens.size()));
    model.prefill(std::vector<std::vector<int32_t>>{head}, cache);
    for (size_t p = prompt; p < tokens.size(); ++p) write(file, model.decode({tokens[p]}, cache));
    if (!file) throw cutejit::Error(std::string("error: cannot write ") + argv[4]);
    std::printf("%zu layers over %zu tokens and %zu decode steps written to %s (%s)\n", out.layers.size(), prompt, tokens.size() - prompt,
                argv[4], gpu.name().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
