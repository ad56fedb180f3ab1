// cutejit_qwen3_reference CHECKPOINT_DIR TOKENS OUT: the host reference's forward pass over the
// comma-separated token ids, written to OUT as float64 values, each layer's output (layers x
// tokens x hidden) and then the logits (tokens x vocab). For comparing the definition with
// another implementation (tests/apps/qwen3_reference_vs_transformers.py).
#include <cstdio>
#include <fstream>
#include <string>

#include <cutejit/core/error.hpp>

#include "qwen3/command_line.hpp"
#include "qwen3/reference.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: cutejit_qwen3_reference CHECKPOINT_DIR TOKENS OUT (tokens comma-separated)\n");
    return 2;
  }
  try {
    const qwen3::Checkpoint checkpoint(argv[1]);
    const std::vector<int32_t> tokens = qwen3::parse_token_list(argv[2]);
    const qwen3::ReferenceOutputs out = qwen3::reference_forward(checkpoint, tokens);
    std::ofstream file(argv[3], std::ios::binary);
    for (const auto& layer : out.layers) file.write(reinterpret_cast<const char*>(layer.data()), std::streamsize(layer.size() * 8));
    file.write(reinterpret_cast<const char*>(out.logits.data()), std::streamsize(out.logits.size() * 8));
    if (!file) throw cutejit::Error(std::string("error: cannot write ") + argv[3]);
    std::printf("%zu layers, %zu tokens, %zu logits written to %s\n", out.layers.size(), tokens.size(), out.logits.size(), argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
