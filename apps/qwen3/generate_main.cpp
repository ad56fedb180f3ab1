// cutejit_qwen3_generate CHECKPOINT_DIR PROMPTS [--new N] [--temperature T] [--top-k K]
//                        [--top-p P] [--seed S] [--eos ID]
// Generates from a Hugging Face Qwen3 checkpoint on the GPU. PROMPTS holds token ids, comma-
// separated, and several prompts separated by ';' run as one batch (no tokenizer: the ids are
// what the checkpoint's tokenizer would give). Each prompt is prefilled into a paged KV cache,
// then every sequence gets up to N new tokens (64 unless given), greedy unless a temperature is
// given (drawn on the device when there is no top-k or top-p cut, else on the host over the
// logits), and stops early at the token --eos names. Prints each prompt's new ids on a line, and
// the times on stderr.
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <cutejit/cutejit.hpp>

#include "qwen3/command_line.hpp"
#include "qwen3/model.hpp"
#include "qwen3/sampling.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "usage: cutejit_qwen3_generate CHECKPOINT_DIR PROMPTS [--new N] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--eos ID]\n"
      "  PROMPTS: token ids, comma-separated; prompts separated by ';' run as one batch\n";
  if (argc < 3) {
    std::fputs(usage, stderr);
    return 2;
  }
  try {
    int64_t new_tokens = 64, eos = -1;
    uint64_t seed = 0;
    qwen3::SamplingOptions sampling{.temperature = 0.0f};
    for (int i = 3; i < argc; i += 2) {
      const std::string flag = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument("error: " + flag + " needs a value\n" + usage);
      const std::string value = argv[i + 1];
      if (flag == "--new") new_tokens = qwen3::parse_number<int64_t>(flag, value);
      else if (flag == "--temperature") sampling.temperature = qwen3::parse_number<float>(flag, value);
      else if (flag == "--top-k") sampling.top_k = qwen3::parse_number<int64_t>(flag, value);
      else if (flag == "--top-p") sampling.top_p = qwen3::parse_number<float>(flag, value);
      else if (flag == "--seed") seed = qwen3::parse_number<uint64_t>(flag, value);
      else if (flag == "--eos") eos = qwen3::parse_number<int64_t>(flag, value);
      else throw std::invalid_argument("error: unknown option " + flag + "\n" + usage);
    }
    if (new_tokens < 1) throw std::invalid_argument("error: --new takes 1 or more tokens");
    std::vector<std::vector<int32_t>> prompts;
    std::stringstream list(argv[2]);
    for (std::string prompt; std::getline(list, prompt, ';');) prompts.push_back(qwen3::parse_token_list(prompt));
    if (prompts.empty()) throw std::invalid_argument("error: no prompt given");

    const auto t0 = std::chrono::steady_clock::now();
    const qwen3::Checkpoint checkpoint(argv[1]);
    cutejit::Device gpu;
    const qwen3::Model model(gpu, checkpoint);
    const double load_s = seconds_since(t0);
    size_t longest = 0;
    for (const auto& p : prompts) longest = std::max(longest, p.size());
    const auto B = int64_t(prompts.size()), V = checkpoint.config().vocab;
    qwen3::KvCache cache(gpu, checkpoint.config(), B, int64_t(longest) + new_tokens);

    std::mt19937_64 rng(seed);
    auto choose = [&](const std::vector<cutejit::bf16>& logits, int64_t b) {
      const std::span<const cutejit::bf16> row(logits.data() + b * V, size_t(V));
      return sampling.temperature == 0.0f ? qwen3::greedy(row) : qwen3::sample(row, sampling, rng);
    };
    auto t1 = std::chrono::steady_clock::now();
    std::vector<cutejit::bf16> logits = model.prefill(prompts, cache);
    const double prefill_s = seconds_since(t1);
    std::vector<std::vector<int32_t>> out(prompts.size());
    std::vector<int32_t> next(prompts.size());
    std::vector<bool> done(prompts.size(), false);
    t1 = std::chrono::steady_clock::now();
    int64_t steps = 0;
    const bool greedy = sampling.temperature == 0.0f;
    for (int64_t b = 0; b < B; ++b) next[size_t(b)] = choose(logits, b);
    for (;;) {
      bool any = false;
      for (int64_t b = 0; b < B; ++b) {
        if (done[size_t(b)]) continue;
        out[size_t(b)].push_back(next[size_t(b)]);
        done[size_t(b)] = next[size_t(b)] == eos || int64_t(out[size_t(b)].size()) == new_tokens;
        any = any || !done[size_t(b)];
      }
      if (!any) break;
      // Every sequence steps together (one graph for the batch); a finished one's tokens are
      // dropped. Decode steps choose on the device (greedy, or drawn after the cuts) and bring
      // back only the tokens.
      next = greedy ? model.decode_greedy(next, cache)
                    : model.decode_sampled(next, cache, sampling.temperature, uint32_t(rng()), sampling.top_k, sampling.top_p);
      ++steps;
    }
    const double decode_s = seconds_since(t1);
    for (const auto& tokens : out) {
      for (size_t i = 0; i < tokens.size(); ++i) std::printf("%s%d", i ? "," : "", tokens[i]);
      std::printf("\n");
    }
    std::fprintf(stderr, "%s: loaded in %.2f s; prefill of %zu prompts (%zu tokens at most) %.1f ms; %lld decode steps, %.2f ms each\n",
                 gpu.name().c_str(), load_s, prompts.size(), longest, prefill_s * 1e3, (long long)steps,
                 steps ? decode_s * 1e3 / double(steps) : 0.0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
