// qwen3::compile_model against the model itself: a cache warmed with it for the device's target
// serves a fresh process's prefill and decode steps (logits, greedy and sampled) on the tiny
// configuration without one compile, counted as the cache's entries before and after. A fresh
// process, because a process that has launched a kernel keeps it in memory and would not ask the
// cache. On sm_100a and sm_120a the warm is the Blackwell one, with no GPU; the cross-compile
// test builds the 8B model's kernels for both.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <sys/wait.h>

#include <cutejit/cache/kernel_cache.hpp>

#include "qwen3/compile.hpp"
#include "qwen3/kv_cache.hpp"
#include "qwen3/model.hpp"
#include "support.hpp"

using namespace cutejit;

namespace {

const qwen3::Config tiny{256, 2, 4, 2, 64, 512, 320, 1e6, 1e-6, false};

/// The passes the child runs: prompts of 37, 23 and 5 tokens, then decode steps of three and of
/// two sequences, logits, greedy and sampled, on a cache of three sequences of up to 48 tokens.
const qwen3::Workload workload{.prefills = {{65, 3}}, .decode_batches = {3, 2}, .sequences = 3, .max_tokens = 48};

std::string run_child(const std::string& cache_dir) {
  const std::string command = "CUTEJIT_CACHE_DIR='" + cache_dir + "' " + std::filesystem::read_symlink("/proc/self/exe").string() +
                              " '[.qwen3_warmed_child]' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  INFO(output);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return output;
}

}  // namespace

TEST_CASE("qwen3 child: the tiny model's workload passes", "[.qwen3_warmed_child]") {
  Device gpu;
  const qwen3::Model model(gpu, tiny, [](const qwen3::ExpectedTensor& t) {
    const int64_t n = std::accumulate(t.shape.begin(), t.shape.end(), int64_t(1), std::multiplies<>());
    std::vector<bf16> values(static_cast<size_t>(n));
    for (size_t i = 0; i < values.size(); ++i) values[i] = bf16(float(int(i % 7) - 3) * 0.01f);
    return values;
  });
  qwen3::KvCache cache(gpu, tiny, workload.sequences, workload.max_tokens);
  std::vector<std::vector<int32_t>> prompts;
  for (int64_t n : {37, 23, 5}) prompts.emplace_back(size_t(n), 11);
  model.prefill(prompts, cache);
  model.decode({1, 2, 3}, cache);
  model.decode_greedy({1, 2, 3}, cache);
  model.decode_sampled({1, 2, 3}, cache, 0.7f, 9u);
  model.decode({4, 5}, cache);
  model.decode_greedy({4, 5}, cache);
  model.decode_sampled({4, 5}, cache, 0.7f, 10u);
}

TEST_CASE("qwen3::compile_model warms a cache from which a fresh process's prefill and decode steps compile nothing",
          "[gpu][qwen3][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  const test::TempDir dir;
  const test::ScopedEnv cache_dir("CUTEJIT_CACHE_DIR", dir.path.string());
  const std::vector<CompiledKernel> kernels = qwen3::compile_model(tiny, gpu.target(), workload);
  const size_t warmed = KernelCache::from_environment().stats().entries;
  CHECK(warmed > 10);
  run_child(dir.path.string());
  CHECK(KernelCache::from_environment().stats().entries == warmed);
}

TEST_CASE("qwen3::compile_model builds the 8B model's kernels for sm_100a and sm_120a with no GPU, and names a pass it cannot build",
          "[unit][qwen3]") {
  const qwen3::Workload small{.prefills = {{100, 2}}, .decode_batches = {2}, .sequences = 2, .max_tokens = 1024};
  for (const char* t : {"sm_100a", "sm_120a"}) {
    INFO(t);
    const std::vector<CompiledKernel> kernels = qwen3::compile_model(qwen3::Config::qwen3_8b(), Target::parse(t), small);
    CHECK(kernels.size() > 20);
    for (const CompiledKernel& k : kernels) CHECK(k.target.name() == t);
  }
  CHECK_THROWS_WITH(qwen3::compile_model(tiny, Target::parse("sm_100a"), {.prefills = {{2, 3}}}),
                    Catch::Contains("compiling a prefill of 2 tokens in 3 prompts for sm_100a") && Catch::Contains("each prompt has at least one token"));
  CHECK_THROWS_WITH(qwen3::compile_model(tiny, Target::parse("sm_100a"), {.decode_batches = {2}}),
                    Catch::Contains("compiling a decode step of 2 sequences for sm_100a: the KV cache holds 1 sequences"));
  CHECK_THROWS_WITH(qwen3::compile_model(tiny, Target::parse("sm_100a"), {.decode_batches = {1}, .page_size = 8}),
                    Catch::Contains("multiple of 16 tokens"));
}
