// cutejit_qwen3_warm: fills the disk cache, with no GPU, with every kernel the Qwen3 model
// launches for a workload on each target named (compile.hpp): a build machine's job before the
// model is shipped to GPUs it does not have, sm_100a and sm_120a included. (cutejit-cache warm
// replays a recorded manifest, but a manifest recorded on one GPU names that architecture's
// kernels; the model's operators pick others on another.)
//
//   cutejit_qwen3_warm --targets sm_100a,sm_120a [--model 8b|1.7b|0.6b|tiny | --config config.json]
//                      [--sequences N] [--max-tokens N] [--page-size N] [--prefill TOKENSxPROMPTS[,...]] [--decode B[,B...]]
//
// The KV cache is the one the serving program makes (KvCache(device, config, sequences,
// max-tokens, page-size)); --decode defaults to every batch size from 1 to --sequences. The
// cache directory is CUTEJIT_CACHE_DIR's (or the default).
#include <chrono>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <string>

#include <cutejit/cache/kernel_cache.hpp>
#include <cutejit/core/error.hpp>

#include "qwen3/command_line.hpp"
#include "qwen3/compile.hpp"

using namespace cutejit;

namespace {

constexpr const char* usage =
    "usage: cutejit_qwen3_warm --targets T[,T...] [--model 8b|1.7b|0.6b|tiny | --config config.json] [--sequences N] [--max-tokens N]\n"
    "                          [--page-size N] [--prefill TOKENSxPROMPTS[,...]] [--decode B[,B...]]\n";

/// "4096x1,8192x8": prefills of (tokens, prompts).
std::vector<std::pair<int64_t, int64_t>> prefill_list(const std::string& text) {
  std::vector<std::pair<int64_t, int64_t>> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const size_t x = item.find('x');
    if (x == std::string::npos)
      throw std::invalid_argument("error: --prefill takes TOKENSxPROMPTS items (4096x1, 8192x8), not '" + item + "'");
    out.emplace_back(qwen3::parse_count("--prefill's tokens", item.substr(0, x)), qwen3::parse_count("--prefill's prompts", item.substr(x + 1)));
  }
  return out;
}

std::vector<std::string> target_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    qwen3::Config config = qwen3::Config::qwen3_8b();
    std::string model = "8b";
    std::vector<std::string> targets;
    qwen3::Workload workload{.max_tokens = 4096};
    bool decode_given = false;
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (i + 1 >= argc || flag.rfind("--", 0) != 0) {
        std::fputs(usage, stderr);
        return 2;
      }
      const std::string value = argv[++i];
      if (flag == "--targets") targets = target_list(value);
      else if (flag == "--model") config = qwen3::Config::named(value), model = value;
      else if (flag == "--config") config = qwen3::Config::from_json_file(value), model = value;
      else if (flag == "--sequences") workload.sequences = qwen3::parse_count(flag, value);
      else if (flag == "--max-tokens") workload.max_tokens = qwen3::parse_count(flag, value);
      else if (flag == "--page-size") workload.page_size = qwen3::parse_count(flag, value);
      else if (flag == "--prefill") workload.prefills = prefill_list(value);
      else if (flag == "--decode") workload.decode_batches = qwen3::parse_count_list(flag, value), decode_given = true;
      else {
        std::fputs(usage, stderr);
        return 2;
      }
    }
    if (targets.empty()) {
      std::fputs(usage, stderr);
      return 2;
    }
    if (!decode_given) {
      workload.decode_batches.resize(size_t(workload.sequences));
      std::iota(workload.decode_batches.begin(), workload.decode_batches.end(), int64_t(1));
    }
    for (const std::string& name : targets) {
      const Target target = Target::parse(name);
      const size_t before = KernelCache::from_environment().stats().entries;
      const auto t0 = std::chrono::steady_clock::now();
      const size_t launches = qwen3::compile_model(config, target, workload).size();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const size_t added = KernelCache::from_environment().stats().entries - before;
      std::printf("Qwen3 %s for %s: %zu kernels added to the cache in %.1f s (%zu asked for; the rest were there already)\n",
                  model.c_str(), name.c_str(), added, seconds, launches);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
