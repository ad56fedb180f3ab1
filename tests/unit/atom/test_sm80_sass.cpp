// The warp-level path cross-compiled for every target, its SASS read back with cuobjdump (from
// the toolkit, or the PyPI wheels scripts/setup.sh fetches): each mma.sync kind becomes the
// tensor-core instruction the hardware has (HMMA, IMMA, QMMA, DMMA), ldmatrix LDSM and
// cp.async LDGSTS, with no local memory. These targets are compile-verified, not run here.
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "fmha_backward.hpp"
#include "fmha_decode.hpp"
#include "fmha_sm80.hpp"
#include "mma_sync_kernels.hpp"
#include "sass.hpp"
#include "sequence_assert.hpp"
#include "support.hpp"

using namespace cutejit;

namespace {

template <class T>
DeviceTensor<T> arg() {
  return test::vector_arg<T>(1024, 256);
}

/// The atom's kernel for `target`: its PTX names the kind, its SASS has `sass` and no local memory.
template <class Op>
void check(const char* target, const char* ptx_kind, const char* sass) {
  using A = typename Op::ElementA;
  using B = typename Op::ElementB;
  using C = typename Op::ElementC;
  using D = typename Op::ElementD;
  INFO(Op::name() << " on " << target);
  CompiledKernel k = test::mma_atom_kernel<Op>.compile(Target::parse(target), arg<A>(), arg<B>(), arg<C>(), arg<D>());
  CHECK(test::contains(k.ptx, std::string("mma.sync.aligned.") + ptx_kind));
  std::string code = test::disassemble(k.cubin, "-sass");
  CHECK(test::contains(code, sass));
  CHECK_FALSE(test::contains(code, "LDL"));
  CHECK(test::resource_usage(k.cubin, k.name, "STACK") == 0);
}

const char* const every_target[] = {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120a"};

/// What the attention kernels on mma.sync (the FA2 forward, the paged decode) are made of:
/// `hmma`, ldmatrix for Q (A), K (B stored K-major) and V (B stored N-major), 16-byte cp.async
/// and exp2.
void check_attention_sass(const std::string& code, const char* hmma) {
  CHECK(test::contains(code, hmma));
  CHECK(test::contains(code, "LDSM.16.M88.4"));   // Q, the A operand
  CHECK(test::contains(code, "LDSM.16.M88.2"));   // K, B stored K-major
  CHECK(test::contains(code, "LDSM.16.MT88.2"));  // V, B stored N-major
  CHECK(test::contains(code, "LDGSTS.E.BYPASS.128"));
  CHECK(test::contains(code, "MUFU.EX2"));
}

}  // namespace

TEST_CASE("each mma.sync kind is its tensor-core instruction on every target", "[unit]") {
  for (const char* t : every_target) {
    check<SM80_16x8x16_F32BF16BF16F32_TN>(t, "m16n8k16.row.col.f32.bf16.bf16.f32", "HMMA.16816.F32.BF16");
    check<SM80_16x8x8_F32BF16BF16F32_TN>(t, "m16n8k8.row.col.f32.bf16.bf16.f32", "HMMA.1688.F32.BF16");
    check<SM80_16x8x16_F32F16F16F32_TN>(t, "m16n8k16.row.col.f32.f16.f16.f32", "HMMA.16816.F32");
    check<SM80_16x8x16_F16F16F16F16_TN>(t, "m16n8k16.row.col.f16.f16.f16.f16", "HMMA.16816.F16");
    check<SM80_16x8x8_F16F16F16F16_TN>(t, "m16n8k8.row.col.f16.f16.f16.f16", "HMMA.1688.F16");
    check<SM80_16x8x8_F32TF32TF32F32_TN>(t, "m16n8k8.row.col.f32.tf32.tf32.f32", "HMMA.1688.F32.TF32");
    check<SM80_16x8x4_F32TF32TF32F32_TN>(t, "m16n8k4.row.col.f32.tf32.tf32.f32", "HMMA.1684.F32.TF32");
    check<SM80_16x8x32_S32S8S8S32_TN>(t, "m16n8k32.row.col.s32.s8.s8.s32", "IMMA.16832.S8.S8");
    check<SM80_16x8x32_S32U8S8S32_TN>(t, "m16n8k32.row.col.s32.u8.s8.s32", "IMMA.16832.U8.S8");
    check<SM80_16x8x16_S32S8U8S32_TN>(t, "m16n8k16.row.col.s32.s8.u8.s32", "IMMA.16816.S8.U8");
    // DMMA.884 on sm_8x, DMMA.8x8x4 from sm_90.
    check<SM80_8x8x4_F64F64F64F64_TN>(t, "m8n8k4.row.col.f64.f64.f64.f64", "DMMA.8");
  }
}

TEST_CASE("FP8 mma.sync is QMMA on sm_89 and sm_120a, and two HMMA on sm_90a and sm_100a", "[unit]") {
  for (const char* t : {"sm_89", "sm_120a"}) {
    check<SM89_16x8x32_F32E4M3E4M3F32_TN>(t, "m16n8k32.row.col.f32.e4m3.e4m3.f32", "QMMA.16832.F32.E4M3.E4M3");
    check<SM89_16x8x32_F32E5M2E4M3F32_TN>(t, "m16n8k32.row.col.f32.e5m2.e4m3.f32", "QMMA.16832.F32.E5M2.E4M3");
  }
  // Hopper and datacenter Blackwell have no FP8 mma.sync unit: ptxas unpacks to f16 and uses HMMA.
  for (const char* t : {"sm_90a", "sm_100a"}) {
    check<SM89_16x8x32_F32E4M3E4M3F32_TN>(t, "m16n8k32.row.col.f32.e4m3.e4m3.f32", "F2FP.F16.E4M3.UNPACK_B");
    check<SM89_16x8x32_F32E4M3E4M3F32_TN>(t, "m16n8k32.row.col.f32.e4m3.e4m3.f32", "HMMA.16816.F32");
  }
}

TEST_CASE("TiledMma, ldmatrix and cp.async kernels have their instructions on every target", "[unit]") {
  auto bf = arg<bf16>();
  auto f = arg<float>();
  auto u = arg<uint32_t>();
  auto m = DeviceTensor<float>::make(256, std::array<int64_t, 2>{30, 64}, std::array<int64_t, 2>{64, 1});
  for (const char* t : every_target) {
    INFO(t);
    std::string tiled = test::disassemble(test::tiled_mma_bf16.compile(Target::parse(t), bf, bf, f).cubin, "-sass");
    // Four K steps of 2 x 2 atoms per thread.
    CHECK(test::count(tiled, "HMMA.16816.F32.BF16") == 16);
    std::string ldsm = test::disassemble(test::ldmatrix_x4.compile(Target::parse(t), bf, u, u).cubin, "-sass");
    CHECK(test::contains(ldsm, "LDSM.16.M88.4"));
    CHECK(test::contains(ldsm, "LDSM.16.MT88.4"));
    std::string cp = test::disassemble(test::cp_async_tile.compile(Target::parse(t), m, f).cubin, "-sass");
    // Four 16-byte copies per thread; the source size is 16 or 0, which ptxas turns into the
    // predicated form (a false predicate zero-fills the destination).
    std::regex predicated(R"(LDGSTS\.E\.BYPASS\.128[^;]*, P[0-9] ;)");
    CHECK(std::distance(std::sregex_iterator(cp.begin(), cp.end(), predicated), std::sregex_iterator()) == 4);
    CHECK(test::contains(cp, "LDGDEPBAR"));
    CHECK(test::contains(cp, "DEPBAR.LE"));
  }
}

TEST_CASE("the FA2 forward is HMMA, LDSM (plain and transposed), LDGSTS and MUFU.EX2 on every target, in registers", "[unit]") {
  for (const char* t : every_target) {
    for (int variant = 0; variant < 2; ++variant) {
      CompiledKernel k = variant == 0 ? fixtures::fmha_compile<bf16, fixtures::fmha80::hd64>(Target::parse(t))
                                      : fixtures::fmha_compile<f16, fixtures::fmha80::hd128_causal>(Target::parse(t));
      INFO(k.name << " on " << t);
      std::string code = test::disassemble(k.cubin, "-sass");
      check_attention_sass(code, variant == 0 ? "HMMA.16816.F32.BF16" : "HMMA.16816.F32");
      CHECK(test::contains(code, "SHFL.BFLY"));
      CHECK_FALSE(test::contains(code, "LDL"));
      CHECK_FALSE(test::contains(code, "STL"));
      test::check_sequence_assert(k, test::AssertFailure::prints);
    }
  }
}

TEST_CASE("the paged decode is HMMA, LDSM, LDGSTS and MUFU.EX2 on every target; its combine is plain loads", "[unit]") {
  // Head dims 64 and 128 stay in registers on every target; 256 spills a little (docs/attention.md).
  for (const char* t : every_target)
    for (int head_dim : {64, 128}) {
      const fixtures::decode::Config c{.head_dim = head_dim, .group = 4, .q_len = 1, .kv_heads = 8, .stages = 2};
      auto [split, combine] = fixtures::decode_compile<bf16>(Target::parse(t), c);
      INFO(split.name << " hd " << head_dim << " on " << t);
      std::string code = test::disassemble(split.cubin, "-sass");
      check_attention_sass(code, "HMMA.16816.F32.BF16");
      // The stack holds the 8 bytes of the page check's printf arguments (a path taken only to
      // trap) and nothing else: no spills. At hd 128, ptxas for sm_80, sm_86 and sm_89 spills 16-40
      // bytes (it keeps each ldmatrix's 64-bit address in registers); sm_90a and newer do not.
      CHECK(test::contains(code, "BPT.TRAP"));
      const bool spills =
          test::contains(code, "LDL") || test::contains(code, "STL") || test::resource_usage(split.cubin, split.name, "STACK") != 8;
      const bool sm8x = std::string(t).starts_with("sm_8");
      if (head_dim == 64 || !sm8x) CHECK_FALSE(spills);
      std::string merged = test::disassemble(combine.cubin, "-sass");
      CHECK(test::contains(merged, "MUFU.EX2"));
      CHECK_FALSE(test::contains(merged, "LDL"));
    }
}

TEST_CASE("the attention backward is HMMA, LDSM (plain and transposed), LDGSTS and MUFU.EX2 on every target, in registers", "[unit]") {
  for (const char* t : every_target)
    for (int head_dim : {64, 128}) {
      const bool causal = head_dim == 128;
      std::vector<CompiledKernel> kernels = fixtures::backward_compile<bf16>(Target::parse(t), {.head_dim = head_dim, .causal = causal});
      for (const CompiledKernel& k : kernels) {
        INFO(k.name << " hd " << head_dim << " on " << t);
        std::string code = test::disassemble(k.cubin, "-sass");
        // dot is loads, FMAs and shuffles; dK/dV and dQ are the attention kernels' instructions.
        if (k.name.starts_with("fmha_bwd_dot"))
          CHECK(test::contains(code, "SHFL.BFLY"));
        else
          check_attention_sass(code, "HMMA.16816.F32.BF16");
        CHECK_FALSE(test::contains(code, "LDL"));
        CHECK_FALSE(test::contains(code, "STL"));
        if (k.name.starts_with("fmha_bwd_dot"))
          CHECK(test::resource_usage(k.cubin, k.name, "STACK") == 0);
        else
          test::check_sequence_assert(k, test::AssertFailure::prints);
      }
    }
}
