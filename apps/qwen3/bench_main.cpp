// Qwen3 on random weights (the published configurations, nothing downloaded): the device-to-
// device copy bandwidth, the prefill of a batch of prompts, and decode steps at that batch,
// each decode step as the caller sees it (tokens in, the next tokens back, chosen greedily on
// the device: Model::decode_greedy; with --temperature T drawn there at T: decode_sampled, with
// --top-k K and --top-p P after those cuts, found on the device as well). The
// decode's bandwidth counts the bytes a step must read
// once: every weight but the embedding's unused rows, and each sequence's cached keys and values.
//
// With --breakdown, one more prefill and eight more steps run kernel by kernel with an event
// after each stage. A decode stage's time is set against its own memory roofline: the bytes it
// must move (weights, KV, activations read and written) at the same call's copy bandwidth; a
// prefill stage's against the larger of that and its arithmetic at the tensor cores' dense rate.
// Start-up: the disk cache's entries before and after the first prefill and decode step say how
// many kernels this process compiled (none, when a cache warmed by an earlier run serves them).
//
//   cutejit_qwen3_bench [--model 8b|1.7b|0.6b|tiny] [--batch N[,N...]] [--context N] [--steps N] [--temperature T]
//                       [--top-k K] [--top-p P] [--breakdown] [--fusion on|off|both] [--dependent-launch on|off|both]
//                       [--decode-splits N[,N...]]
// --fusion off runs the norms and SiLU·mul of a decode step, and a prefill's SiLU·mul on sm_90a,
// as kernels of their own (Model::use_fusions); both runs each batch fused, then not, on the
// same weights. --dependent-launch off launches a decode step's kernels one after another
// (Model::use_dependent_launches); both runs each batch with them, then without.
// --decode-splits N[,N...] runs each batch with the decode attention's keys cut into each count
// of ranges per sequence (Model::decode_splits; 0, the default, lets it choose).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <cutejit/cache/kernel_cache.hpp>
#include <cutejit/cutejit.hpp>

#include "qwen3/command_line.hpp"
#include "qwen3/model.hpp"
#include "qwen3/sampling.hpp"

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

/// The bytes a decode stage must move at a batch of `B` sequences with `kv_tokens` cached keys
/// each: the weights it reads, the keys and values it reads or writes, the activations in and out.
double stage_bytes(const std::string& stage, const qwen3::Config& c, double B, double kv_tokens) {
  const double H = double(c.hidden), d = double(c.head_dim), nq = double(c.heads) * d, nkv = double(c.kv_heads) * d;
  const double I = double(c.intermediate), V = double(c.vocab), e = sizeof(bf16);
  if (stage == "embedding") return 2 * B * H * e;
  if (stage == "rmsnorm") return (2 * B * H + H) * e;
  if (stage == "qkv projection") return ((nq + 2 * nkv) * (H + B) + B * H) * e;
  if (stage == "rmsnorm + qkv projection") return ((nq + 2 * nkv) * (H + B) + B * H + H) * e;
  if (stage == "split_qkv (q/k norm, rope, kv store)") return (2 * B * (nq + 2 * nkv) + 2 * B * nkv) * e;
  if (stage == "attention") return (2 * B * kv_tokens * nkv + 2 * B * nq) * e;
  if (stage == "output projection + residual") return (H * nq + B * nq + 2 * B * H) * e;
  if (stage == "gate/up projection") return (2 * I * H + B * H + 2 * B * I) * e;
  if (stage == "silu_mul") return 3 * B * I * e;
  if (stage == "rmsnorm + gate/up projection + silu_mul") return (2 * I * H + H + B * H + B * I) * e;
  if (stage == "gate/up projection + silu_mul") return (2 * I * H + B * H + B * I) * e;
  if (stage == "down projection + residual") return (H * I + B * I + 2 * B * H) * e;
  if (stage == "lm head") return (V * H + B * H + B * V) * e;
  if (stage == "rmsnorm + lm head") return (V * H + H + B * H + B * V) * e;
  if (stage == "greedy choice" || stage == "sampled choice") return B * V * e;
  return 0;
}

/// The arithmetic of a prefill stage over `batch` prompts of `context` tokens each (a multiply-add
/// counted as two): the projections' products over every token, the LM head's over the `rows`
/// whose logits are wanted, and the causal attention's two products over half of each prompt's
/// score matrix. Zero for the stages that only move memory.
double stage_flops(const std::string& stage, const qwen3::Config& c, double batch, double context, double rows) {
  const double T = batch * context, H = double(c.hidden), d = double(c.head_dim), nq = double(c.heads) * d,
               nkv = double(c.kv_heads) * d, I = double(c.intermediate), V = double(c.vocab);
  if (stage == "qkv projection" || stage == "rmsnorm + qkv projection") return 2 * T * H * (nq + 2 * nkv);
  if (stage == "attention") return 2 * batch * context * context * d * double(c.heads);
  if (stage == "output projection + residual") return 2 * T * nq * H;
  if (stage == "gate/up projection" || stage == "gate/up projection + silu_mul" || stage == "rmsnorm + gate/up projection + silu_mul")
    return 2 * T * H * 2 * I;
  if (stage == "down projection + residual") return 2 * T * I * H;
  if (stage == "lm head" || stage == "rmsnorm + lm head") return 2 * rows * H * V;
  return 0;
}

/// The dense BF16 tensor-core rate the prefill breakdown sets its products against: the H100
/// SXM's and the H200's datasheet figure (both 989 TFLOP/s). Large GEMMs reach about 80% of it.
constexpr double dense_bf16_flops = 989e12;

/// One prefill of `batch` prompts of `context` tokens (in passes of at most `per_pass` prompts),
/// kernel by kernel with an event after each stage: each stage's GPU time (its layers and passes
/// together) against its own roofline, the larger of its products at the datasheet's
/// tensor-core rate and its bytes at the same call's copy bandwidth.
void print_prefill_breakdown(const qwen3::Model& model, const std::function<void()>& prefill, int64_t batch, int64_t context,
                             int64_t per_pass, double bandwidth) {
  std::vector<std::pair<std::string, float>> marks;
  model.profile(&marks);
  prefill();
  model.profile(nullptr);
  const qwen3::Config& c = model.config();
  std::vector<std::string> order;
  std::map<std::string, std::array<double, 3>> stages;  // ms, FLOPs, bytes
  int64_t done = 0, prompts = 0;  // prompts in the passes before this one, and in this one
  double rows = 0, total = 0;      // the rows a stage works on: the pass's tokens until its logit rows are taken
  for (const auto& [stage, ms] : marks) {
    if (stage == "embedding") {  // a pass begins
      done += prompts;
      prompts = std::min(per_pass, batch - done);
      rows = double(prompts * context);
    }
    auto [it, first] = stages.try_emplace(stage, std::array<double, 3>{});
    if (first) order.push_back(stage);
    it->second[0] += ms;
    it->second[1] += stage_flops(stage, c, double(prompts), double(context), rows);
    // A prefill's attention reads each prompt's queries, keys and values once and writes its
    // outputs (not the decode's every key for every query, which stage_bytes counts).
    const double attention_bytes = rows * double(2 * c.heads + 2 * c.kv_heads) * double(c.head_dim) * double(sizeof(bf16));
    it->second[2] += stage == "attention" ? attention_bytes : stage_bytes(stage, c, rows, double(context));
    total += ms;
    if (stage == "logit rows") rows = double(prompts);
  }
  std::printf("breakdown of a prefill of %lld x %lld tokens (kernel by kernel, an event after each stage; %.2f ms in all):\n", (long long)batch,
              (long long)context, total);
  std::printf("  %-42s %9s %6s %9s %9s %12s\n", "stage (all layers)", "ms", "share", "TFLOP/s", "GB/s", "of roofline");
  for (const std::string& stage : order) {
    const auto [ms, flops, bytes] = stages[stage];
    const double roofline_s = std::max(flops / dense_bf16_flops, bytes / bandwidth);
    std::printf("  %-42s %9.3f %5.1f%% %9.0f %9.0f %11.0f%%\n", stage.c_str(), ms, 100 * ms / total, flops / (ms * 1e-3) / 1e12,
                bytes / (ms * 1e-3) / 1e9, 100 * roofline_s / (ms * 1e-3));
  }
}

/// A decode step as the benchmark takes it: tokens in, the next tokens out.
using Step = std::function<std::vector<int32_t>(const std::vector<int32_t>&, qwen3::KvCache&)>;

/// `steps` decode steps of `tokens`, kernel by kernel with an event after each stage: each
/// stage's GPU time per step (its layers together) against its memory roofline.
void print_breakdown(const qwen3::Model& model, qwen3::KvCache& cache, const std::vector<int32_t>& tokens, int64_t steps,
                     const Step& step, double bandwidth) {
  std::vector<std::pair<std::string, float>> marks;
  const double kv_tokens = double(cache.length(0)) + double(steps) / 2;  // the steps' mean
  model.profile(&marks);
  for (int64_t s = 0; s < steps; ++s) step(tokens, cache);
  model.profile(nullptr);
  std::vector<std::string> order;  // stages as they first ran
  std::map<std::string, std::pair<double, int64_t>> ms_and_count;
  for (const auto& [stage, ms] : marks) {
    auto [it, first] = ms_and_count.try_emplace(stage, 0.0, 0);
    if (first) order.push_back(stage);
    it->second.first += ms, ++it->second.second;
  }
  double total = 0;
  for (const auto& [stage, v] : ms_and_count) total += v.first / double(steps);
  const qwen3::Config& c = model.config();
  std::printf("breakdown of a decode step (%lld steps kernel by kernel, an event after each stage; %.3f ms a step in all):\n", (long long)steps,
              total);
  std::printf("  %-42s %9s %6s %9s %7s %12s\n", "stage (all layers)", "ms/step", "share", "MB/step", "GB/s", "of roofline");
  for (const std::string& stage : order) {
    const auto [ms_sum, count] = ms_and_count[stage];
    const double ms = ms_sum / double(steps), runs = double(count) / double(steps);
    const double bytes = runs * stage_bytes(stage, c, double(tokens.size()), kv_tokens);
    std::printf("  %-42s %9.3f %5.1f%% %9.1f %7.0f %11.0f%%\n", stage.c_str(), ms, 100 * ms / total, bytes / 1e6, bytes / (ms * 1e-3) / 1e9,
                100 * bytes / bandwidth / (ms * 1e-3));
  }
}


/// How decode steps choose their tokens: greedily (temperature 0), or drawn at the temperature
/// after the top-k (0: none) and top-p (1: none) cuts.
struct Sampling {
  float temperature = 0;
  int64_t top_k = 0;
  float top_p = 1;
};

/// A prefill of `batch` prompts of `context` tokens into a new cache, then `steps` decode steps
/// (and with `breakdown`, eight more, profiled). The decode's figure also goes on a line
/// "csv,STACK,MODEL,BATCH,CONTEXT,STEP_MS,TOKENS_PER_S" for scripts/plot_qwen3.py, the stack
/// "cutejit" (followed by " unfused" with the model's fusions off, " serial" without its
/// dependent launches and " N-splits" with a decode split count given: no commas, for the CSV).
void run_batch(const Device& gpu, const qwen3::Model& model, const std::string& stack, const std::string& model_name, int64_t batch,
               int64_t context, int64_t steps,
               const Sampling& sampling, bool breakdown, bool first_batch, double bandwidth) {
  const qwen3::Config& c = model.config();
  // A step as the caller sees it: greedy, or (a temperature given) drawn after the cuts, each
  // step with a seed of its own.
  uint32_t seed = 1;
  const Step step_of = [&](const std::vector<int32_t>& tokens, qwen3::KvCache& kv) {
    return sampling.temperature > 0 ? model.decode_sampled(tokens, kv, sampling.temperature, seed++, sampling.top_k, sampling.top_p)
                                    : model.decode_greedy(tokens, kv);
  };
  const int64_t profiled_steps = breakdown ? 8 : 0;
  qwen3::KvCache cache(gpu, c, batch, context + 1 + steps + profiled_steps);
  std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < context; ++t) prompts[size_t(b)].push_back(int32_t((t * 7919 + b * 104729) % c.vocab));
  // Whole prompts, at most pass_tokens a pass (one pass unless the batch's prompts are long):
  // a pass's activations grow with its tokens, and 64 x 8k would not fit beside the cache.
  const int64_t pass_tokens = 65536, per_pass = std::max<int64_t>(1, pass_tokens / context);
  auto prefill_all = [&] {
    std::vector<bf16> logits;
    for (int64_t b0 = 0; b0 < batch; b0 += per_pass) {
      const std::vector<std::vector<int32_t>> group(prompts.begin() + b0, prompts.begin() + std::min(batch, b0 + per_pass));
      const std::vector<bf16> part = model.prefill(group, cache, b0);
      logits.insert(logits.end(), part.begin(), part.end());
    }
    return logits;
  };
  // The first prefill and decode step compile their kernels (or find them in the disk cache).
  const size_t cached_before = KernelCache::from_environment().stats().entries;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<bf16> logits = prefill_all();
  const double first_prefill = seconds_since(t0);
  for (int64_t b = 0; b < batch; ++b) cache.reset(b);
  t0 = std::chrono::steady_clock::now();
  logits = prefill_all();
  const double prefill = seconds_since(t0);
  if (breakdown) {
    for (int64_t b = 0; b < batch; ++b) cache.reset(b);
    print_prefill_breakdown(model, [&] { prefill_all(); }, batch, context, per_pass, bandwidth);
  }
  const int64_t passes = (batch + per_pass - 1) / per_pass;
  char in_passes[64] = "";
  if (passes > 1) std::snprintf(in_passes, sizeof in_passes, " in %lld passes of %lld prompts", (long long)passes, (long long)per_pass);
  std::printf("-- batch %lld, context %lld\n", (long long)batch, (long long)context);
  std::printf("prefill of %lld x %lld tokens%s: %.2f ms, %.0f tokens/s (the first, kernels compiled or loaded: %.2f s)\n", (long long)batch,
              (long long)context, in_passes, prefill * 1e3, double(batch * context) / prefill, first_prefill);

  std::vector<int32_t> next;
  for (int64_t b = 0; b < batch; ++b)
    next.push_back(qwen3::greedy(std::span<const bf16>(logits).subspan(size_t(b * c.vocab), size_t(c.vocab))));
  t0 = std::chrono::steady_clock::now();
  next = step_of(next, cache);
  const double first_step = seconds_since(t0);
  const size_t cached_after = KernelCache::from_environment().stats().entries;
  std::printf("%s: the first prefill and decode step took %.2f s and added %zu kernels to the disk cache (%zu before)\n",
              first_batch ? "start-up" : "this batch's first passes", first_prefill + first_step,
              cached_after - std::min(cached_after, cached_before), cached_before);
  std::vector<double> step_s;
  for (int64_t s = 0; s < steps; ++s) {
    t0 = std::chrono::steady_clock::now();
    next = step_of(next, cache);
    step_s.push_back(seconds_since(t0));
  }
  std::sort(step_s.begin(), step_s.end());
  const double step = step_s[step_s.size() / 2];
  const double kv_bytes = double(batch) * double(context + 1 + int64_t(step_s.size()) / 2) * double(c.layers * 2 * c.kv_heads * c.head_dim * 2);
  const double weight_bytes = double(c.weight_bytes()) - (c.tie_word_embeddings ? 0.0 : double(c.vocab * c.hidden * 2));
  char choice[128] = "greedy on the device";
  if (sampling.temperature > 0)
    std::snprintf(choice, sizeof choice, "sampled at %g, top-k %lld, top-p %g, on the device", double(sampling.temperature),
                  (long long)sampling.top_k, double(sampling.top_p));
  std::printf("decode step (median of %zu, %s): %.3f ms, %.1f tokens/s; reads %.2f GB of weights and %.2f GB of KV: %.0f GB/s, "
              "%.0f%% of the copy bandwidth (the first step: %.2f s)\n",
              step_s.size(), choice, step * 1e3, double(batch) / step, weight_bytes / 1e9, kv_bytes / 1e9, (weight_bytes + kv_bytes) / step / 1e9,
              100.0 * (weight_bytes + kv_bytes) / step / bandwidth, first_step);
  std::printf("csv,%s,%s,%lld,%lld,%.3f,%.1f\n", stack.c_str(), model_name.c_str(), (long long)batch, (long long)context, step * 1e3, double(batch) / step);
  if (breakdown) print_breakdown(model, cache, next, profiled_steps, step_of, bandwidth);
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = "8b";
  std::vector<int64_t> batches{1};
  int64_t context = 1024, steps = 64;
  Sampling sampling;
  bool breakdown = false;
  std::vector<bool> fusions{true}, dependents{true};
  std::vector<int64_t> split_counts{0};
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      const bool valued = flag == "--model" || flag == "--batch" || flag == "--context" || flag == "--steps" || flag == "--temperature" ||
                          flag == "--top-k" || flag == "--top-p" || flag == "--fusion" || flag == "--dependent-launch" ||
                          flag == "--decode-splits";
      if (flag == "--breakdown") {
        breakdown = true;
      } else if (valued && i + 1 < argc) {
        const std::string value = argv[++i];
        if (flag == "--model") name = value;
        else if (flag == "--batch") batches = qwen3::parse_count_list(flag, value);
        else if (flag == "--context") context = qwen3::parse_count(flag, value);
        else if (flag == "--temperature") {
          sampling.temperature = qwen3::parse_number<float>(flag, value);
          if (!(sampling.temperature >= 0 && sampling.temperature <= 3.4028235e38f))
            throw std::invalid_argument("error: --temperature takes a number from 0 up (0: greedy), not '" + value + "'");
        } else if (flag == "--fusion" || flag == "--dependent-launch") {
          std::vector<bool>& which = flag == "--fusion" ? fusions : dependents;
          if (value == "on") which = {true};
          else if (value == "off") which = {false};
          else if (value == "both") which = {true, false};
          else throw std::invalid_argument("error: " + flag + " takes on, off or both, not '" + value + "'");
        } else if (flag == "--decode-splits") {
          split_counts = qwen3::parse_count_list(flag, value, 0);  // 0: the kernel's choice
        } else if (flag == "--top-k") {
          sampling.top_k = qwen3::parse_count(flag, value);
        } else if (flag == "--top-p") {
          sampling.top_p = qwen3::parse_number<float>(flag, value);
          if (!(sampling.top_p > 0 && sampling.top_p <= 1))
            throw std::invalid_argument("error: --top-p takes a number above 0 and up to 1, not '" + value + "'");
        } else {
          steps = qwen3::parse_count(flag, value);
        }
      } else {
        std::fprintf(stderr, "usage: cutejit_qwen3_bench [--model 8b|1.7b|0.6b|tiny] [--batch N[,N...]] [--context N] [--steps N] "
                             "[--temperature T] [--top-k K] [--top-p P] [--breakdown] [--fusion on|off|both] "
                             "[--dependent-launch on|off|both] [--decode-splits N[,N...]]\n");
        return 2;
      }
    }
    if (sampling.temperature == 0 && (sampling.top_k != 0 || sampling.top_p != 1))
      throw std::invalid_argument("error: --top-k and --top-p cut the logits a token is drawn from; give --temperature above 0 with them");
    const qwen3::Config c = qwen3::Config::named(name);
    Device gpu;
    const double bandwidth = copy_bandwidth(gpu);
    std::printf("Qwen3-%s, context %lld, %s; copy bandwidth %.0f GB/s\n", name.c_str(), (long long)context, gpu.name().c_str(),
                bandwidth / 1e9);
    auto t0 = std::chrono::steady_clock::now();
    qwen3::Model model(gpu, c, [&](const qwen3::ExpectedTensor& t) {
      int64_t n = 1;
      for (int64_t d : t.shape) n *= d;
      const bool norm = t.shape.size() == 1;
      return random_values(size_t(n), std::hash<std::string>{}(t.name), norm ? 1.0f : 0.0f, norm ? 0.1f : 0.02f);
    });
    std::printf("weights: %.2f GB, made and uploaded in %.1f s\n", double(c.weight_bytes()) / 1e9, seconds_since(t0));

    bool first = true;
    for (int64_t batch : batches)
      for (bool fused : fusions)
        for (bool dependent : dependents)
          for (int64_t splits : split_counts) {
            model.use_fusions(fused);
            model.use_dependent_launches(dependent);
            model.decode_splits(splits);
            if (!fused) std::printf("(the next batch with the norms and SiLU·mul as kernels of their own)\n");
            if (!dependent) std::printf("(the next batch with its decode steps' kernels launched one after another)\n");
            if (splits) std::printf("(the next batch with the decode attention in %lld splits)\n", (long long)splits);
            const std::string stack = std::string("cutejit") + (fused ? "" : " unfused") + (dependent ? "" : " serial") +
                                      (splits ? " " + std::to_string(splits) + "-splits" : "");
            run_batch(gpu, model, stack, name, batch, context, steps, sampling, breakdown, first, bandwidth);
            first = false;
          }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
