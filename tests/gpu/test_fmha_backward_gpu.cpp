// The attention backwards (tests/fixtures/fmha_backward.hpp on mma.sync, fmha_backward_sm90.hpp on
// wgmma) on the GPU, against float64 gradients
// computed on the host, on fresh random inputs with poisoned outputs: every element type x head
// dim x mask x (fixed, variable) lengths x (MHA, GQA), dQ, dK and dV each bounded element by
// element, and a second run giving the same bits; for the Hopper one also the forward's other
// masks (top-left, sliding windows).
#include <catch2/catch.hpp>

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fmha_backward_sm90.hpp"
#include "fmha_masks.hpp"

using namespace cutejit;

namespace {

// Variable: a sequence shorter than a block, one with residues in both, one token, and one with
// more queries than keys (causal: its first 110 queries see no key, and its keys get only the
// last 40 queries' gradients). The emulator runs the variable lengths alone.
test::Sweep lengths_and_heads(const Device& gpu, test::Lengths fixed, int emulated_heads) {
  const test::Lengths variable = {"variable", {77, 200, 1, 150}, {77, 260, 33, 40}};
  return test::sweep(gpu, {std::move(fixed), variable}, variable, emulated_heads);
}

// The bound is the rounding of P, dS and O to T (8 bits of mantissa in bf16, 11 in f16): dQ's
// errors measured on the H200 are 0.006-0.027 in bf16 and about 8 times smaller in f16, the
// largest in causal problems, whose rows that see few keys have rowsum(dO * O) from the rounded
// O as the largest share of dS.
template <Element T, class Check>
void check_all(const Device& gpu, const char* type, double bound, Check&& check) {
  // Fixed: two sequences of 192 (three key blocks, a query block and a half).
  const test::Sweep sweep = lengths_and_heads(gpu, {"fixed", {192, 192}, {192, 192}}, 2);
  unsigned seed = 500;
  for (int64_t head_dim : {64, 128})
    for (bool causal : {false, true})
      for (const test::Lengths& l : sweep.lengths)
        for (auto [heads, kv_heads] : sweep.heads) {
          auto in = fixtures::backward_inputs(fixtures::fmha_inputs<T>(l.q, l.k, heads, kv_heads, head_dim, causal, seed += 5), seed + 4);
          fixtures::BackwardErrors e = check(gpu, in);
          INFO(type << " hd " << head_dim << (causal ? " causal" : "") << ", " << l.name << " lengths, " << heads << " query / "
                    << kv_heads << " key-value heads: dQ " << e.dq << ", dK " << e.dk << ", dV " << e.dv);
          CHECK(e.dq < bound);
          CHECK(e.dk < bound);
          CHECK(e.dv < bound);
          CHECK(e.deterministic);
        }
}

// The Hopper forward's masks beyond bottom-right causal: windows crossing the 128-key and
// 32/64-query blocks on both sides, one-sided ones that leave whole blocks unvisited by both
// kernels, and (variable lengths) rows and keys that see nothing.
template <Element T>
void check_windows(const Device& gpu, const char* type, double bound) {
  // One head on the emulator: the test runs 20 kernels (element type x head dim x mask).
  const test::Sweep sweep = lengths_and_heads(gpu, {"fixed", {320, 320}, {320, 320}}, 1);
  unsigned seed = 900;
  for (int64_t head_dim : {64, 128})
    for (const test::MaskCase& m : std::span(test::fmha_masks).subspan(2))  // check_all has none and causal
      for (const test::Lengths& l : sweep.lengths)
        for (auto [heads, kv_heads] : sweep.heads) {
          auto forward = fixtures::fmha_inputs<T>(l.q, l.k, heads, kv_heads, head_dim, m.causal, seed += 5);
          m.apply(forward.problem);
          auto in = fixtures::backward_inputs(std::move(forward), seed + 4);
          fixtures::BackwardErrors e = fixtures::backward_sm90_check(gpu, in);
          INFO(type << " hd " << head_dim << ", " << m.name << ", " << l.name << " lengths, " << heads << " query / " << kv_heads
                    << " key-value heads: dQ " << e.dq << ", dK " << e.dk << ", dV " << e.dv);
          CHECK(e.dq < bound);
          CHECK(e.dk < bound);
          CHECK(e.dv < bound);
          CHECK(e.deterministic);
        }
}

}  // namespace

TEST_CASE("the attention backward matches float64 gradients for every mask, head dim and length mix, bit for bit on a rerun",
          "[gpu]") {
  Device gpu;
  check_all<bf16>(gpu, "bf16", 4e-2, fixtures::backward_check<bf16>);
  check_all<f16>(gpu, "f16", 8e-3, fixtures::backward_check<f16>);
}

TEST_CASE("the Hopper attention backward matches float64 gradients for every mask, head dim and length mix, bit for bit on a rerun",
          "[gpu]") {
  Device gpu;
  check_all<bf16>(gpu, "bf16", 4e-2, fixtures::backward_sm90_check<bf16>);
  check_all<f16>(gpu, "f16", 8e-3, fixtures::backward_sm90_check<f16>);
}

TEST_CASE("the Hopper attention backward matches float64 gradients for top-left and sliding-window masks", "[gpu]") {
  Device gpu;
  // bf16's bound is f16's times 8, its three fewer mantissa bits: these masks leave more rows
  // that see a few keys, where dS is mostly the rounding of O in D (measured on the H200: dQ
  // 0.041-0.046 in three bf16 cases of the variable lengths under MQA, f16 below 8e-3 in all).
  check_windows<bf16>(gpu, "bf16", 6.4e-2);
  check_windows<f16>(gpu, "f16", 8e-3);
}
