// The Hopper attention forward (tests/fixtures/fmha_sm90.hpp) on the GPU, against a float64 host
// reference on fresh random inputs with poisoned outputs: for each head dim, every mask
// (none; causal, aligned bottom-right and top-left; sliding windows) x (fixed, variable)
// lengths x (MHA, GQA), in bf16 (f16 for the unwindowed masks), the error bounded element by
// element for O and for the log-sum-exp.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fmha_masks.hpp"
#include "fmha_sm90.hpp"

using namespace cutejit;

namespace {

// Fixed: two sequences of 320 (two and a half tiles of queries and of key blocks). Variable: a
// sequence shorter than a tile, one with residues in both and several key blocks, one token,
// and one with more queries than keys. The emulator's: the variable one with 300 keys for 520.
test::Sweep lengths_and_heads(const Device& gpu, int emulated_heads) {
  return test::sweep(gpu, {{"fixed", {320, 320}, {320, 320}}, {"variable", {77, 300, 1, 150}, {77, 520, 33, 40}}},
                     {"variable, 300 keys for 520", {77, 300, 1, 150}, {77, 300, 33, 40}}, emulated_heads);
}

template <Element T>
void check_head_dim(const Device& gpu, int64_t head_dim, const char* type, bool windows) {
  const test::Sweep sweep = lengths_and_heads(gpu, 2);
  unsigned seed = 400 + unsigned(head_dim);
  for (const test::MaskCase& m : test::fmha_masks) {
    if (!windows && m.windowed()) continue;
    for (const test::Lengths& l : sweep.lengths)
      for (auto [heads, kv_heads] : sweep.heads) {
        auto in = fixtures::fmha_inputs<T>(l.q, l.k, heads, kv_heads, head_dim, m.causal, seed += 3);
        m.apply(in.problem);
        double error = fixtures::fmha_sm90_check(gpu, in);
        INFO(type << " hd " << head_dim << ", " << m.name << ", " << l.name << " lengths, " << heads << " query / " << kv_heads
                  << " key-value heads");
        CHECK(error < 1e-2);
      }
  }
}

/// The same cases, bf16, with ping-pong between the consumer warpgroups forced on or off (the
/// launch takes it by the sequences' length, which the cases above keep short).
void check_pingpong(const Device& gpu, int64_t head_dim, bool on) {
  // One head on the emulator: the test runs six kernels (on and off x head dim) per mask.
  const test::Sweep sweep = lengths_and_heads(gpu, 1);
  unsigned seed = 700 + unsigned(head_dim);
  for (const test::MaskCase& m : test::fmha_masks)
    for (const test::Lengths& l : sweep.lengths)
      for (auto [heads, kv_heads] : sweep.heads) {
        auto in = fixtures::fmha_inputs<bf16>(l.q, l.k, heads, kv_heads, head_dim, m.causal, seed += 3);
        m.apply(in.problem);
        double error = fixtures::fmha_check_with(gpu, in, [&](auto&&... buffers) {
          return fixtures::fmha90::with_config(in.problem, [&]<fixtures::fmha90::Config C>() {
            return on ? fixtures::fmha90::prepare<bf16, fixtures::fmha90::with_pingpong(C, true)>(gpu, in.problem, buffers...)
                      : fixtures::fmha90::prepare<bf16, fixtures::fmha90::with_pingpong(C, false)>(gpu, in.problem, buffers...);
          });
        });
        INFO("ping-pong " << (on ? "on" : "off") << ", hd " << head_dim << ", " << m.name << ", " << l.name << " lengths, " << heads << " query / " << kv_heads
                              << " key-value heads");
        CHECK(error < 1e-2);
      }
}

}  // namespace

TEST_CASE("the Hopper attention forward with and without ping-pong matches float64 attention at every head dim and mask", "[gpu]") {
  Device gpu;
  for (bool on : {true, false})
    for (int64_t head_dim : {64, 128, 256}) check_pingpong(gpu, head_dim, on);
}

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
