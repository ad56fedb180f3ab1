// The Hopper attention forward (examples/fmha_sm90.hpp) on the GPU, against a float64 host
// reference on fresh random inputs with poisoned outputs: for each head dim, every mask
// (none; causal, aligned bottom-right and top-left; sliding windows) x (fixed, variable)
// lengths x (MHA, GQA), in bf16 (f16 for the unwindowed masks), the error bounded element by
// element for O and for the log-sum-exp.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fmha_sm90.hpp"

using namespace cutejit;

namespace {

struct Lengths {
  const char* name;
  std::vector<int32_t> q, k;
};

struct MaskCase {
  const char* name;
  bool causal, top_left;
  int64_t window_left, window_right;
};

// Causal with more queries than keys leaves rows with no key (bottom-right: the first 110 rows
// of the 150 / 40 sequence); top-left leaves none but cuts keys instead. The windows cross the
// 128-key blocks on both sides, and the one-sided ones leave whole blocks unvisited.
const std::vector<MaskCase> masks = {{"no mask", false, false, -1, -1},
                                     {"causal", true, false, -1, -1},
                                     {"causal top-left", true, true, -1, -1},
                                     {"window 50 / 20", false, false, 50, 20},
                                     {"window 100 / none, top-left", false, true, 100, -1},
                                     {"causal, window 70", true, false, 70, -1},
                                     {"window none / 0", false, false, -1, 0}};

template <Element T>
void check_head_dim(const Device& gpu, int64_t head_dim, const char* type, bool windows) {
  // Fixed: two sequences of 320 (two and a half tiles of queries and of key blocks). Variable:
  // a sequence shorter than a tile, one with residues in both and several key blocks, one
  // token, and one with more queries than keys.
  const std::vector<Lengths> lengths = {{"fixed", {320, 320}, {320, 320}},
                                        {"variable", {77, 300, 1, 150}, {77, 520, 33, 40}}};
  unsigned seed = 400 + unsigned(head_dim);
  for (const MaskCase& m : masks) {
    if (!windows && (m.window_left >= 0 || m.window_right >= 0)) continue;
    for (const Lengths& l : lengths)
      for (auto [heads, kv_heads] : {std::pair{2, 2}, std::pair{4, 1}}) {
        auto in = examples::fmha_inputs<T>(l.q, l.k, heads, kv_heads, head_dim, m.causal, seed += 3);
        in.problem.top_left = m.top_left;
        in.problem.window_left = m.window_left;
        in.problem.window_right = m.window_right;
        double error = examples::fmha_sm90_check(gpu, in);
        INFO(type << " hd " << head_dim << ", " << m.name << ", " << l.name << " lengths, " << heads << " query / " << kv_heads
                  << " key-value heads");
        CHECK(error < 1e-2);
      }
  }
}

}  // namespace

TEST_CASE("the Hopper attention forward matches float64 attention at head dim 64, for every mask and length mix", "[gpu]") {
  Device gpu;
  check_head_dim<bf16>(gpu, 64, "bf16", true);
  check_head_dim<f16>(gpu, 64, "f16", false);
}

TEST_CASE("the Hopper attention forward matches float64 attention at head dim 128, for every mask and length mix", "[gpu]") {
  Device gpu;
  check_head_dim<bf16>(gpu, 128, "bf16", true);
  check_head_dim<f16>(gpu, 128, "f16", false);
}

TEST_CASE("the Hopper attention forward matches float64 attention at head dim 256, for every mask and length mix", "[gpu]") {
  Device gpu;
  check_head_dim<bf16>(gpu, 256, "bf16", true);
  check_head_dim<f16>(gpu, 256, "f16", false);
}
