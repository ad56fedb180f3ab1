// The FlashAttention-2 forward (tests/fixtures/fmha_sm80.hpp) on the GPU, against a float64 host
// reference on fresh random inputs with poisoned outputs: every element type x head dim x
// mask x (fixed, variable) lengths x (MHA, GQA), the error bounded element by element for O
// and for the log-sum-exp.
#include <catch2/catch.hpp>

#include "fmha_masks.hpp"
#include "fmha_sm80.hpp"

using namespace cutejit;

namespace {

template <Element T>
void check_all(const Device& gpu, const char* type) {
  // Fixed: two sequences of 192 (a tile and a half of queries). Variable: a sequence shorter
  // than a tile, one with residues in both, one token, and one with more queries than keys
  // (causal: its first 110 rows see no key). The emulated device runs the variable mix on two
  // query heads sharing one key-value head (test::sweep).
  const test::Lengths variable{"variable", {77, 200, 1, 150}, {77, 260, 33, 40}};
  const test::Sweep sweep = test::sweep(gpu, {{"fixed", {192, 192}, {192, 192}}, variable}, variable, 2);
  unsigned seed = 100;
  for (int64_t head_dim : {64, 128})
    for (bool causal : {false, true})
      for (const test::Lengths& l : sweep.lengths)
        for (auto [heads, kv_heads] : sweep.heads) {
          auto in = fixtures::fmha_inputs<T>(l.q, l.k, heads, kv_heads, head_dim, causal, seed += 3);
          double error = fixtures::fmha_check(gpu, in);
          INFO(type << " hd " << head_dim << (causal ? " causal" : "") << ", " << l.name << " lengths, " << heads << " query / "
                    << kv_heads << " key-value heads");
          CHECK(error < 1e-2);
        }
}

}  // namespace

TEST_CASE("the FA2 forward matches float64 attention for every mask, head dim and length mix", "[gpu]") {
  Device gpu;
  check_all<bf16>(gpu, "bf16");
  check_all<f16>(gpu, "f16");
}
