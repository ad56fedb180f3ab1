// The Hopper attention forward (tests/fixtures/fmha_sm90.hpp) compiled for sm_90a, read in SASS: the
// products on HGMMA (Q K^T from shared memory, P V with P from registers), the tiles on TMA,
// exp2 on MUFU, registers rebalanced, nothing in local memory. The counts follow from the tiles
// and the schedule: per key block of B keys (128; 80 at hd 256, 64 with a window), head_dim / 16
// k16 steps of m64nB for S and B / 16 of m64n{head_dim} for P V, each product issued in two
// places (S: before the loop and in it; P V: in the loop and after it).
#include <catch2/catch.hpp>

#include <array>
#include <regex>
#include <string>

#include "fmha_backward_sm90.hpp"
#include "fmha_sm90.hpp"
#include "sass.hpp"
#include "sequence_assert.hpp"
#include "support.hpp"

using namespace cutejit;

namespace {
int count_matches(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return int(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}
}  // namespace

TEST_CASE("the Hopper attention forward is HGMMA (shared and register A), UTMALDG and MUFU.EX2, in registers", "[unit]") {
  const Target sm90a = Target::parse("sm_90a");
  using namespace fixtures::fmha90;
  for (int variant = 0; variant < 5; ++variant) {
    CompiledKernel k = variant == 0   ? fixtures::fmha_sm90_compile<bf16, hd64>(sm90a)
                       : variant == 1 ? fixtures::fmha_sm90_compile<f16, hd128_causal>(sm90a)
                       : variant == 2 ? fixtures::fmha_sm90_compile<bf16, config_for(256, Mask::window)>(sm90a)
                       : variant == 3 ? fixtures::fmha_sm90_compile<bf16, with_pingpong(hd128)>(sm90a)
                                      : fixtures::fmha_sm90_compile<bf16, config_for(256, Mask::causal)>(sm90a);
    const int d = variant == 0 ? 64 : variant == 2 || variant == 4 ? 256 : 128, keys = variant == 2 ? 64 : variant == 4 ? 80 : 128;
    const std::string type = variant == 1 ? "" : "\\.BF16";  // SASS names bf16 operands, not f16 ones
    INFO(k.name);
    std::string code = test::disassemble(k.cubin, "-sass");
    // S: the A operand is a descriptor (gdesc); P V: A is registers (R...), B a descriptor.
    CHECK(count_matches(code, "HGMMA\\.64x" + std::to_string(keys) + "x16\\.F32" + type + " R[0-9]+, gdesc") == 2 * d / 16);
    CHECK(count_matches(code, "HGMMA\\.64x" + std::to_string(d) + "x16\\.F32" + type + " R[0-9]+, R[0-9]+, gdesc") == 2 * keys / 16);
    CHECK(test::contains(code, "UTMALDG.3D"));
    CHECK(test::contains(code, "MUFU.EX2"));
    CHECK(test::contains(code, "SHFL.BFLY"));
    CHECK(test::contains(code, "USETMAXREG"));
    CHECK_FALSE(test::contains(code, "LDL"));
    CHECK_FALSE(test::contains(code, "STL"));
    test::check_sequence_assert(k, test::AssertFailure::traps);
    test::check_wgmma_not_serialized(k.ptx, k.cubin);
    // Ping-pong: each of the three groups of MMAs waits for its turn on a named barrier and
    // hands it over (bar.arrive), besides the warpgroup 1's first hand-over; none without it.
    CHECK(count_matches(k.ptx, "bar\\.arrive") == (variant == 3 ? 4 : 0));
    CHECK(count_matches(k.ptx, "barrier\\.sync|bar\\.sync") == (variant == 3 ? 4 : 1));
  }
}

TEST_CASE("the Hopper attention forward on dense tensors loads its tiles with rank-4 TMA and keeps the packed kernel's products", "[unit]") {
  // BHSD O (batch, seqlen, heads, head_dim strides): the store's strides are dynamic, the loads'
  // live in the tensor maps.
  const std::array<int64_t, 4> bhsd{16 * 2048 * 128, 128, 2048 * 128, 1};
  CompiledKernel k = fixtures::fmha_sm90_dense_compile<bf16, fixtures::fmha90::hd128_causal>(Target::parse("sm_90a"), bhsd);
  INFO(k.name);
  CHECK(k.name.find("_dense") != std::string::npos);
  std::string code = test::disassemble(k.cubin, "-sass");
  CHECK(count_matches(code, "HGMMA\\.64x128x16\\.F32\\.BF16 R[0-9]+, gdesc") == 2 * 128 / 16);
  CHECK(count_matches(code, "HGMMA\\.64x128x16\\.F32\\.BF16 R[0-9]+, R[0-9]+, gdesc") == 2 * 128 / 16);
  CHECK(test::contains(code, "UTMALDG.4D"));
  CHECK_FALSE(test::contains(code, "UTMALDG.3D"));
  CHECK_FALSE(test::contains(code, "LDL"));
  CHECK_FALSE(test::contains(code, "STL"));
  test::check_wgmma_not_serialized(k.ptx, k.cubin);
}

TEST_CASE("a kernel that rebalances registers is assembled by ptxas, whole-program, so its consumers get them", "[unit]") {
  // nvJitLink would ignore setmaxnreg (a separate compilation unit) and cap every thread at the
  // entry's 168 registers; the hd128 consumers then spill. Through ptxas they do not.
  CompiledKernel k = fixtures::fmha_sm90_compile<bf16, fixtures::fmha90::hd128>(Target::parse("sm_90a"));
  CHECK(k.assembler == "ptxas");
  std::string code = test::disassemble(k.cubin, "-sass");
  CHECK(test::contains(code, "USETMAXREG.DEALLOC.CTAPOOL 0x18"));      // the producer: 24
  CHECK(test::contains(code, "USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xf0"));  // the consumers: 240
  CHECK_FALSE(test::contains(code, "STL"));
}

TEST_CASE("the Hopper attention backward is HGMMA (shared and register A), UTMALDG and MUFU.EX2, in registers", "[unit]") {
  // Per block, each kernel issues its two shared-memory products once (head_dim / 16 k16 steps
  // each: S^T and dP^T of 128 keys x `step` queries, or S and dP of 128 queries x `step` keys)
  // and its register-A products once (`step` / 16 k16 steps of m64n{head_dim} each: dV and dK;
  // or dQ). The steps: 64 queries a dK/dV block; 128 keys a dQ block at hd 64, 64 at hd 128.
  const Target sm90a = Target::parse("sm_90a");
  using namespace fixtures::fmha_bwd90;
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<CompiledKernel> kernels = variant == 0   ? fixtures::backward_sm90_compile<bf16, hd64>(sm90a)
                                          : variant == 1 ? fixtures::backward_sm90_compile<f16, hd128_causal>(sm90a)
                                                         : fixtures::backward_sm90_compile<bf16, fixtures::fmha_bwd90::config_for(128, fixtures::fmha90::Mask::window)>(sm90a);
    const int d = variant == 0 ? 64 : 128, dkdv_step = 64, dq_step = d == 64 ? 128 : 64;
    const std::string type = variant == 1 ? "" : "\\.BF16";
    for (const CompiledKernel& k : kernels) {
      INFO(k.name);
      const bool dkdv = k.name.find("_dkdv_") != std::string::npos;
      const int n_ss = dkdv ? dkdv_step : dq_step, k_rs = n_ss;
      std::string code = test::disassemble(k.cubin, "-sass");
      CHECK(count_matches(code, "HGMMA\\.64x" + std::to_string(n_ss) + "x16\\.F32" + type + " R[0-9]+, gdesc") == 2 * d / 16);
      CHECK(count_matches(code, "HGMMA\\.64x" + std::to_string(d) + "x16\\.F32" + type + " R[0-9]+, R[0-9]+, gdesc") ==
            (dkdv ? 2 : 1) * k_rs / 16);
      CHECK(test::contains(code, "UTMALDG.3D"));
      CHECK(test::contains(code, "MUFU.EX2"));
      CHECK(test::contains(code, "USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xf0"));
      // The dK/dV kernel at head dim 128 spills: 64 queries a block leave it 8 to 12 registers
      // short of the consumers' 240 (32 bytes unmasked, 48 masked), and measured 13-27% faster
      // than 32 queries without spills (docs/benchmarks.md, 2026-12-04). The others spill nothing.
      const int spilled = dkdv && d == 128 ? 48 : 0;
      if (spilled == 0) {
        CHECK_FALSE(test::contains(code, "LDL"));
        CHECK_FALSE(test::contains(code, "STL"));
      }
      // The dK/dV kernel publishes each block's query statistics (L, D) to its warpgroup with
      // one named barrier of 128 threads; the dQ kernel has none.
      CHECK(count_matches(k.ptx, "bar\\.sync\\s+%r[0-9]+, 128;") == (dkdv ? 1 : 0));
      test::check_sequence_assert(k, test::AssertFailure::traps, spilled);
      test::check_wgmma_not_serialized(k.ptx, k.cubin);
    }
  }
}
