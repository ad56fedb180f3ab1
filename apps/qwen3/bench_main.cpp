// Qwen3 on random weights (the published configurations, nothing downloaded): the device-to-
// device copy bandwidth, the prefill of a batch of prompts, and decode steps at that batch,
// each decode step as the caller sees it (tokens in, logits back on the host). The decode's
// bandwidth counts the bytes a step must read once: every weight but the embedding's unused
// rows, and each sequence's cached keys and values.
//
//   cutejit_qwen3_bench [--model 8b|1.7b|0.6b|tiny] [--batch N] [--context N] [--steps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <cutejit/cutejit.hpp>

#include "qwen3/model.hpp"

using namespace cutejit;

namespace {

/// Uniform values of standard deviation `spread` around `mean`, as BF16, from a counter-based
/// generator split over the host's threads; the same for a name and seed on every machine.
std::vector<bf16> random_values(size_t n, uint64_t seed, float mean, float spread) {
  std::vector<bf16> out(n);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
        uint64_t z = seed + i * 0x9E3779B97F4A7C15ull;  // splitmix64
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        const float u = float(z >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;  // [-1, 1)
        out[i] = bf16(mean + spread * 1.7320508f * u);
      }
    });
  for (std::thread& t : pool) t.join();
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The median of ten device-to-device copies of 256 MiB (after two), in bytes per second (read + written).
double copy_bandwidth(const Device& gpu) {
  const size_t n = size_t(1) << 27;
  Buffer<bf16> a = gpu.alloc<bf16>(n), b = gpu.alloc<bf16>(n);
  a.zero();
  std::vector<float> ms;
  Event start(gpu), stop(gpu);
  for (int i = 0; i < 12; ++i) {
    start.record();
    b.copy_from(a);
    stop.record();
    ms.push_back(elapsed_ms(start, stop));
  }
  std::sort(ms.begin() + 2, ms.end());
  return 2.0 * double(n * sizeof(bf16)) / (double(ms[2 + (ms.size() - 2) / 2]) * 1e-3);
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = "8b";
  int64_t batch = 1, context = 1024, steps = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--model") name = value;
    else if (flag == "--batch") batch = std::stoll(value);
    else if (flag == "--context") context = std::stoll(value);
    else if (flag == "--steps") steps = std::stoll(value);
    else {
      std::fprintf(stderr, "usage: cutejit_qwen3_bench [--model 8b|1.7b|0.6b|tiny] [--batch N] [--context N] [--steps N]\n");
      return 2;
    }
  }
  const qwen3::Config c = name == "8b" ? qwen3::Config::qwen3_8b() : name == "1.7b" ? qwen3::Config::qwen3_1_7b()
                        : name == "0.6b" ? qwen3::Config::qwen3_0_6b()
                        : name == "tiny" ? qwen3::Config{256, 2, 4, 2, 64, 512, 320, 1e6, 1e-6, false}  // the tests' size, for a quick check
                                         : qwen3::Config{};
  if (c.hidden == 0) {
    std::fprintf(stderr, "error: --model is 8b, 1.7b, 0.6b or tiny, not %s\n", name.c_str());
    return 2;
  }
  try {
    Device gpu;
    const double bandwidth = copy_bandwidth(gpu);
    std::printf("Qwen3-%s, batch %lld, context %lld, %s; copy bandwidth %.0f GB/s\n", name.c_str(), (long long)batch, (long long)context,
                gpu.name().c_str(), bandwidth / 1e9);
    auto t0 = std::chrono::steady_clock::now();
    const qwen3::Model model(gpu, c, [&](const qwen3::ExpectedTensor& t) {
      int64_t n = 1;
      for (int64_t d : t.shape) n *= d;
      const bool norm = t.shape.size() == 1;
      return random_values(size_t(n), std::hash<std::string>{}(t.name), norm ? 1.0f : 0.0f, norm ? 0.1f : 0.02f);
    });
    std::printf("weights: %.2f GB, made and uploaded in %.1f s\n", double(c.weight_bytes()) / 1e9, seconds_since(t0));

    qwen3::KvCache cache(gpu, c, batch, context + steps + 1);
    std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < context; ++t) prompts[size_t(b)].push_back(int32_t((t * 7919 + b * 104729) % c.vocab));
    // The first prefill and decode step compile their kernels (or find them in the disk cache).
    t0 = std::chrono::steady_clock::now();
    std::vector<bf16> logits = model.prefill(prompts, cache);
    const double first_prefill = seconds_since(t0);
    for (int64_t b = 0; b < batch; ++b) cache.reset(b);
    t0 = std::chrono::steady_clock::now();
    logits = model.prefill(prompts, cache);
    const double prefill = seconds_since(t0);
    std::printf("prefill of %lld x %lld tokens: %.2f ms, %.0f tokens/s (the first, kernels compiled or loaded: %.2f s)\n", (long long)batch,
                (long long)context, prefill * 1e3, double(batch * context) / prefill, first_prefill);

    std::vector<int32_t> next(static_cast<size_t>(batch));
    auto pick = [&] {
      for (int64_t b = 0; b < batch; ++b)
        next[size_t(b)] = int32_t(std::max_element(logits.begin() + b * c.vocab, logits.begin() + (b + 1) * c.vocab,
                                                   [](bf16 x, bf16 y) { return float(x) < float(y); }) - (logits.begin() + b * c.vocab));
    };
    pick();
    t0 = std::chrono::steady_clock::now();
    logits = model.decode(next, cache);
    const double first_step = seconds_since(t0);
    std::vector<double> step_s;
    for (int64_t s = 0; s < steps; ++s) {
      pick();
      t0 = std::chrono::steady_clock::now();
      logits = model.decode(next, cache);
      step_s.push_back(seconds_since(t0));
    }
    std::sort(step_s.begin(), step_s.end());
    const double step = step_s[step_s.size() / 2];
    const double kv_bytes = double(batch) * double(context + 1 + int64_t(step_s.size()) / 2) * double(c.layers * 2 * c.kv_heads * c.head_dim * 2);
    const double weight_bytes = double(c.weight_bytes()) - (c.tie_word_embeddings ? 0.0 : double(c.vocab * c.hidden * 2));
    std::printf("decode step (median of %zu, greedy on the host): %.3f ms, %.1f tokens/s; reads %.2f GB of weights and %.2f GB of KV: %.0f GB/s, "
                "%.0f%% of the copy bandwidth (the first step: %.2f s)\n",
                step_s.size(), step * 1e3, double(batch) / step, weight_bytes / 1e9, kv_bytes / 1e9, (weight_bytes + kv_bytes) / step / 1e9,
                100.0 * (weight_bytes + kv_bytes) / step / bandwidth, first_step);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
