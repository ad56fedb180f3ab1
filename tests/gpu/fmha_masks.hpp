// The attention masks the Hopper kernels' [gpu] tests run: none; causal, aligned bottom-right and
// top-left; sliding windows. Causal with more queries than keys leaves rows with no key
// (bottom-right); top-left leaves none but cuts keys instead. The windows cross the 128-key
// blocks on both sides, and the one-sided ones leave whole blocks unvisited. And the lengths and
// heads a test runs each mask with.
#pragma once

#include <utility>
#include <vector>

#include "fmha_sm80.hpp"

namespace test {

struct MaskCase {
  const char* name;
  bool causal, top_left;
  int64_t window_left, window_right;

  bool windowed() const { return window_left >= 0 || window_right >= 0; }
  /// The problem with this mask (its causal flag, alignment and window bounds).
  void apply(fixtures::FmhaProblem& p) const {
    p.causal = causal;
    p.top_left = top_left;
    p.window_left = window_left;
    p.window_right = window_right;
  }
};

/// Every mask, the simplest first: a test takes a leading or trailing run of them.
inline const std::vector<MaskCase> fmha_masks = {{"no mask", false, false, -1, -1},
                                                 {"causal", true, false, -1, -1},
                                                 {"causal top-left", true, true, -1, -1},
                                                 {"window 50 / 20", false, false, 50, 20},
                                                 {"window 100 / none, top-left", false, true, 100, -1},
                                                 {"causal, window 70", true, false, 70, -1},
                                                 {"window none / 0", false, false, -1, 0}};

/// A batch's sequence lengths: queries and keys of each sequence.
struct Lengths {
  const char* name;
  std::vector<int32_t> q, k;
};

/// What a test runs for each mask: its length mixes x its (query heads, key-value heads).
struct Sweep {
  std::vector<Lengths> lengths;
  std::vector<std::pair<int, int>> heads;
};

/// The GPU's sweep: `lengths` x (MHA, GQA). The emulator interprets every thread, so it runs the
/// one mix `emulated` (a residue tile, one token, more queries than keys) on `emulated_heads`
/// query heads sharing one key-value head: 2 (GQA), or 1 in a test that sweeps many kernels.
inline Sweep sweep(const cutejit::Device& gpu, std::vector<Lengths> lengths, Lengths emulated, int emulated_heads) {
  if (gpu.is_emulated()) return {{std::move(emulated)}, {{emulated_heads, 1}}};
  return {std::move(lengths), {{2, 2}, {4, 1}}};
}

}  // namespace test
