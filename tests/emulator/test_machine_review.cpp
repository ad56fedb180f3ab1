// A review of the emulated device's core against the PTX ISA: each case is a rule of the ISA
// the first version of the core broke, with the expected value worked out by hand from it.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "emulator/machine.hpp"
#include "ptx_kernel.hpp"

using namespace cutejit::emulator;
using test::kernel;
using test::Run;

namespace {

/// out[0] after one thread runs `compute`, which leaves its result in %r9.
uint32_t one(const std::string& compute, const std::string& decls = "") {
  Run r(kernel(decls, compute + "  st.global.u32 [%rd1], %r9;\n"), 1);
  INFO(r.fault);
  REQUIRE(r.fault.empty());
  return r.out[0];
}

/// Runs `body` on one block of `threads` threads under each of the seeded schedules 1-400: none
/// may fault, and out[t] must be `expect(t)` under every one.
void check_under_seeds(const std::string& body, uint32_t threads, const std::function<uint32_t(uint32_t)>& expect) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    RunOptions options;
    options.seed = seed;
    Run r(kernel("", body), threads, threads, 1, options);
    INFO("seed " << seed << ": " << r.fault);
    REQUIRE(r.fault.empty());
    for (uint32_t t = 0; t < threads; ++t) CHECK(r.out[t] == expect(t));
  }
}

}  // namespace

TEST_CASE("review: bfe.s32 fills the bits past the register's msb with the field's sign", "[emulator]") {
  // ISA bfe: d[i] = (i < len && pos + i <= msb) ? a[pos + i] : sbit, sbit = a[min(pos + len - 1, msb)].
  // a = 0x80000000, pos 28, len 8: d[0..3] = a[28..31] = 0b1000, d[4..31] = a[31] = 1.
  CHECK(one("  mov.b32 %r8, 0x80000000;\n  bfe.s32 %r9, %r8, 28, 8;\n") == 0xfffffff8u);
  // pos 40 is past the msb: every bit is sbit = a[31] = 1.
  CHECK(one("  mov.b32 %r8, 0x80000000;\n  bfe.s32 %r9, %r8, 40, 4;\n") == 0xffffffffu);
  // .u32 has sbit 0: the same field is 0b1000.
  CHECK(one("  mov.b32 %r8, 0x80000000;\n  bfe.u32 %r9, %r8, 28, 8;\n") == 0x8u);
}

TEST_CASE("review: mul24.lo.u32 and mad24.lo.u32 multiply unsigned 24-bit values", "[emulator]") {
  // ISA mul24: t = a * b of the 24-bit values, d = t<31..0>; for .u32 they are unsigned:
  // 0xffffff * 2 = 0x1fffffe.
  CHECK(one("  mov.b32 %r8, 0xffffff;\n  mul24.lo.u32 %r9, %r8, 2;\n") == 0x1fffffeu);
  CHECK(one("  mov.b32 %r8, 0xffffff;\n  mad24.lo.u32 %r9, %r8, 2, 1;\n") == 0x1ffffffu);
  // .s32 keeps the signed reading: 0xffffff is -1, times 2 is -2.
  CHECK(one("  mov.b32 %r8, 0xffffff;\n  mul24.lo.s32 %r9, %r8, 2;\n") == 0xfffffffeu);
}

TEST_CASE("review: setp.ftz.f32 compares with subnormal inputs flushed and no boolean operator", "[emulator]") {
  // ISA setp: .ftz flushes subnormal f32 inputs to sign-preserving zero; without .and/.or/.xor
  // p = t. 1.0 < 2.0 is true; 2^-149 (0x00000001) flushed equals 0.
  CHECK(one("  mov.f32 %f1, 0f3F800000;\n  setp.lt.ftz.f32 %p1, %f1, 0f40000000;\n  selp.u32 %r9, 1, 0, %p1;\n") == 1u);
  CHECK(one("  mov.f32 %f1, 0f00000001;\n  setp.eq.ftz.f32 %p1, %f1, 0f00000000;\n  selp.u32 %r9, 1, 0, %p1;\n") == 1u);
  // Without .ftz, 2^-149 is not 0.
  CHECK(one("  mov.f32 %f1, 0f00000001;\n  setp.eq.f32 %p1, %f1, 0f00000000;\n  selp.u32 %r9, 1, 0, %p1;\n") == 0u);
}

TEST_CASE("review: setp.f16x2 compares each half, p from the low one and q from the high one", "[emulator]") {
  // ISA setp (half precision): p = (a.lo CmpOp b.lo), q = (a.hi CmpOp b.hi).
  // a = {lo 1.0 = 0x3c00, hi 3.0 = 0x4200}, b = {2.0, 2.0}: lt gives p = 1, q = 0.
  std::string body = "  mov.b32 %r7, 0x42003c00;\n  mov.b32 %r8, 0x40004000;\n  setp.lt.f16x2 %p1|%p2, %r7, %r8;\n"
                     "  selp.u32 %r5, 1, 0, %p1;\n  selp.u32 %r6, 2, 0, %p2;\n  or.b32 %r9, %r5, %r6;\n";
  CHECK(one(body) == 1u);
  // bf16x2: a = {lo 1.0 = 0x3f80, hi 3.0 = 0x4040}, b = {2.0 = 0x4000, 2.0}: gt gives p = 0, q = 1.
  std::string bf = "  mov.b32 %r7, 0x40403f80;\n  mov.b32 %r8, 0x40004000;\n  setp.gt.bf16x2 %p1|%p2, %r7, %r8;\n"
                   "  selp.u32 %r5, 1, 0, %p1;\n  selp.u32 %r6, 2, 0, %p2;\n  or.b32 %r9, %r5, %r6;\n";
  CHECK(one(bf) == 2u);
}

TEST_CASE("review: setp accepts the sink as its first destination", "[emulator]") {
  // ISA setp: '_' may replace either destination; q = !t. 1 >= 2 is false, so q is true.
  CHECK(one("  mov.b32 %r8, 1;\n  setp.ge.s32 _|%p2, %r8, 2;\n  selp.u32 %r9, 1, 0, %p2;\n") == 1u);
}

TEST_CASE("review: testp.f64 classifies in the f64 format", "[emulator]") {
  // ISA testp: normal / subnormal of the instruction's type. 2^-1022 (0x0010000000000000) is the
  // smallest normal f64; 2^-127 (0x3800000000000000) is normal in f64; 0x1 is a subnormal f64.
  auto test = [](const char* what, const char* bits) {
    return one(std::string("  mov.b64 %fd1, ") + bits + ";\n  testp." + what + ".f64 %p1, %fd1;\n  selp.u32 %r9, 1, 0, %p1;\n");
  };
  CHECK(test("normal", "0x0010000000000000") == 1u);
  CHECK(test("normal", "0x3800000000000000") == 1u);
  CHECK(test("subnormal", "0x0000000000000001") == 1u);
  CHECK(test("subnormal", "0x3800000000000000") == 0u);
}

TEST_CASE("review: cvt from f32 to s64 saturates at the s64 maximum", "[emulator]") {
  // ISA cvt: float-to-integer conversions saturate to the destination's range; 1e30 > 2^63 - 1.
  Run r(kernel("", "  cvt.rzi.s64.f32 %rd4, 0f7149F2CA;\n  st.global.u64 [%rd1], %rd4;\n"
                   "  cvt.rzi.s64.f32 %rd5, 0fF149F2CA;\n  st.global.u64 [%rd1+8], %rd5;\n"),
        1);
  REQUIRE(r.fault.empty());
  CHECK(r.out[0] == 0xffffffffu);
  CHECK(r.out[1] == 0x7fffffffu);
  CHECK(r.out[2] == 0u);  // -1e30 -> -2^63 = 0x8000000000000000
  CHECK(r.out[3] == 0x80000000u);
}

TEST_CASE("review: cvt to an 8-bit integer chops, then extends by the destination's type", "[emulator]") {
  // ISA cvt and the relaxed type-checking rules for destinations: the value is chopped to the
  // destination format, then zero- (unsigned) or sign-extended (signed) to the register's width.
  // 0x1ff chopped to 8 bits is 0xff: .u8 gives 0x00ff in a 16-bit register, .s8 gives 0xffff.
  CHECK(one("  mov.b32 %r8, 0x1ff;\n  cvt.u8.u32 %rs1, %r8;\n  cvt.u32.u16 %r9, %rs1;\n") == 0xffu);
  CHECK(one("  mov.b32 %r8, 0x1ff;\n  cvt.s8.s32 %rs1, %r8;\n  cvt.u32.u16 %r9, %rs1;\n") == 0xffffu);
}

TEST_CASE("review: mbarrier.arrive_drop lowers the expected count by its count", "[emulator]") {
  // ISA mbarrier.arrive_drop: the expected arrival count drops by `count` for this and later
  // phases, then an arrive-on of `count`. init 4; drop 2 (pending 2, expected 2); arrive 2
  // completes phase 0; arrive 2 completes phase 1, so the wait on parity 1 succeeds at once.
  std::string decls = "  .shared .align 8 .b64 bar;\n";
  std::string body = R"(
  mov.b64 %rd4, bar;
  mbarrier.init.shared::cta.b64 [%rd4], 4;
  mbarrier.arrive_drop.shared::cta.b64 %rd5, [%rd4], 2;
  mbarrier.arrive.shared::cta.b64 %rd6, [%rd4], 2;
  mbarrier.arrive.shared::cta.b64 %rd7, [%rd4], 2;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rd4], 1;
  selp.u32 %r9, 1, 0, %p1;
)";
  CHECK(one(body, decls) == 1u);
}

TEST_CASE("review: cvt .satfinite gives the largest finite value instead of infinity", "[emulator]") {
  // ISA cvt .satfinite: a result beyond MAX_NORM is MAX_NORM of its sign.
  // tf32: FLT_MAX (0x7f7fffff) rounds (rna) past the largest tf32, 0x7f7fe000.
  CHECK(one("  cvt.rna.satfinite.tf32.f32 %r9, 0f7F7FFFFF;\n") == 0x7f7fe000u);
  // f16: 100000.0 (0x47c35000) is past 65504 = 0x7bff; -100000 gives 0xfbff.
  CHECK(one("  cvt.rn.satfinite.f16.f32 %rs1, 0f47C35000;\n  cvt.u32.u16 %r9, %rs1;\n") == 0x7bffu);
  CHECK(one("  cvt.rn.satfinite.f16.f32 %rs1, 0fC7C35000;\n  cvt.u32.u16 %r9, %rs1;\n") == 0xfbffu);
  // Without .satfinite the f16 result is +infinity (0x7c00).
  CHECK(one("  cvt.rn.f16.f32 %rs1, 0f47C35000;\n  cvt.u32.u16 %r9, %rs1;\n") == 0x7c00u);
}

TEST_CASE("review: .ftz on f16 arithmetic flushes f16 subnormals", "[emulator]") {
  // ISA half-precision add/fma: .ftz flushes subnormal inputs and results to sign-preserving
  // zero. 0x0001 is the smallest f16 subnormal (2^-24): flushed, 0x0001 + 0 is +0.
  CHECK(one("  mov.b16 %rs1, 0x0001;\n  mov.b16 %rs2, 0x0000;\n  add.ftz.f16 %rs3, %rs1, %rs2;\n  cvt.u32.u16 %r9, %rs3;\n") == 0u);
  // Without .ftz the subnormal survives.
  CHECK(one("  mov.b16 %rs1, 0x0001;\n  mov.b16 %rs2, 0x0000;\n  add.f16 %rs3, %rs1, %rs2;\n  cvt.u32.u16 %r9, %rs3;\n") == 1u);
  // f16x2: each half flushed. {0x0001, 0x3c00} + {0, 0} = {0, 0x3c00}.
  CHECK(one("  mov.b32 %r7, 0x3c000001;\n  mov.b32 %r6, 0;\n  add.ftz.f16x2 %r9, %r7, %r6;\n") == 0x3c000000u);
}

TEST_CASE("review: atom.add.f32 flushes subnormal inputs and results", "[emulator]") {
  // ISA atom: "atom.add.f32 rounds to nearest even and flushes subnormal inputs and results to
  // sign-preserving zero". 2^-149 + 2^-149: both flushed, the sum is +0; atom returns the old value.
  Run r(kernel("", "  st.global.u32 [%rd1], 1;\n  atom.global.add.f32 %f1, [%rd1], 0f00000001;\n"
                   "  mov.b32 %r9, %f1;\n  st.global.u32 [%rd1+4], %r9;\n"
                   "  st.global.u32 [%rd1+8], 1;\n  red.global.add.f32 [%rd1+8], 0f00000001;\n"),
        1);
  REQUIRE(r.fault.empty());
  CHECK(r.out[0] == 0u);
  CHECK(r.out[1] == 1u);
  CHECK(r.out[2] == 0u);
}

TEST_CASE("review: integer arithmetic on a packed type is refused, not run on a 0-bit integer", "[emulator]") {
  // ISA add.u16x2 adds each 16-bit half: {1, 2} + {3, 4} = {4, 6}, 0x00060004. The emulated device
  // must give that value or refuse the instruction by name; it must not write 0.
  Run r(kernel("", "  mov.b32 %r7, 0x00020001;\n  mov.b32 %r8, 0x00040003;\n  add.u16x2 %r9, %r7, %r8;\n"
                   "  st.global.u32 [%rd1], %r9;\n"),
        1);
  if (r.fault.empty()) CHECK(r.out[0] == 0x00060004u);
  else CHECK(r.fault.find("add.u16x2") != std::string::npos);
}

TEST_CASE("review: the explicit rounding modes of f32 arithmetic and conversions are honoured", "[emulator]") {
  // ISA add/cvt .rnd: IEEE 754 rounding in the named mode, a guard on the host's rounding-mode
  // switch. 1 + (2^-24 + 2^-47) is more than half an ulp of 1 (2^-23) above 1: .rn gives 1 + 2^-23
  // (0x3f800001), .rz gives 1.0 (0x3f800000), .rp gives 0x3f800001, .rm 0x3f800000.
  CHECK(one("  add.rn.f32 %f1, 0f3F800000, 0f33800001;\n  mov.b32 %r9, %f1;\n") == 0x3f800001u);
  CHECK(one("  add.rz.f32 %f1, 0f3F800000, 0f33800001;\n  mov.b32 %r9, %f1;\n") == 0x3f800000u);
  CHECK(one("  add.rm.f32 %f1, 0f3F800000, 0f33800001;\n  mov.b32 %r9, %f1;\n") == 0x3f800000u);
  // cvt.rz.f32.s32 of 2^24 + 1 (not representable): toward zero is 2^24 = 0x4b800000; .rp 0x4b800001.
  CHECK(one("  mov.b32 %r8, 16777217;\n  cvt.rz.f32.s32 %f1, %r8;\n  mov.b32 %r9, %f1;\n") == 0x4b800000u);
  CHECK(one("  mov.b32 %r8, 16777217;\n  cvt.rp.f32.s32 %f1, %r8;\n  mov.b32 %r9, %f1;\n") == 0x4b800001u);
}

TEST_CASE("review: a lane spinning on a flag another lane of its warp sets does not starve it", "[emulator]") {
  // Independent thread scheduling (sm_70 and later): diverged lanes of a warp each make
  // progress, so lane 0's wait for lane 1's store ends. out[1] = 7 from lane 1, out[0] = 1 after.
  std::string body = R"(
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 1;
  @%p1 bra SET;
  setp.ne.u32 %p3, %r1, 0;
  @%p3 bra DONE;
SPIN:
  ld.volatile.global.u32 %r2, [%rd1+4];
  setp.ne.u32 %p2, %r2, 7;
  @%p2 bra SPIN;
  st.global.u32 [%rd1], 1;
  bra.uni DONE;
SET:
  st.volatile.global.u32 [%rd1+4], 7;
DONE:
)";
  Run r(kernel("", body), 32);
  INFO(r.fault);
  CHECK(r.fault.empty());
  CHECK(r.out[0] == 1u);
  CHECK(r.out[1] == 7u);
}

TEST_CASE("review: a register declared without % (inline assembly's `.reg .pred P1;`) is a register", "[emulator]") {
  // ISA identifiers: a register name need not start with %. The wait loop CuTe's barriers use:
  // P1 is the try_wait result, so the phase completed by the arrive ends the loop and out[0] = 1.
  std::string decls = "  .shared .align 8 .b64 bar;\n";
  std::string body = R"(
  mov.b64 %rd4, bar;
  mbarrier.init.shared::cta.b64 [%rd4], 1;
  mbarrier.arrive.shared::cta.b64 %rd5, [%rd4];
  {
  .reg .pred P1;
  .reg .b64 addr;
  mov.b64 addr, %rd4;
  LAB_WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 P1, [addr], 0;
  @P1 bra DONE;
  bra.uni LAB_WAIT;
  DONE:
  }
  mov.u32 %r9, 1;
)";
  CHECK(one(body, decls) == 1u);
}

TEST_CASE("review: a function's .local variable (LLVM's __local_depot) is declared, not read as .loc", "[emulator]") {
  // ISA .local state space: per-thread memory; 5 stored at depot + 4 is read back.
  std::string decls = "  .local .align 8 .b8 __local_depot0[16];\n";
  std::string body = "  mov.u64 %rd4, __local_depot0;\n  st.local.u32 [%rd4+4], 5;\n  ld.local.u32 %r9, [%rd4+4];\n";
  CHECK(one(body, decls) == 5u);
}

TEST_CASE("review: the three-input min and max take their third operand", "[emulator]") {
  // ISA min/max (three inputs): d is the smallest / largest of a, b and c.
  CHECK(one("  max.f32 %f1, 0f3F800000, 0f40000000, 0f40400000;\n  mov.b32 %r9, %f1;\n") == 0x40400000u);  // 3.0
  CHECK(one("  min.f32 %f1, 0f40000000, 0f40400000, 0f3F800000;\n  mov.b32 %r9, %f1;\n") == 0x3f800000u);  // 1.0
}

TEST_CASE("review: barrier.cta.sync is the CTA barrier (barrier{.cta}.sync{.aligned})", "[emulator]") {
  // ISA barrier{.cta}: .cta is optional. Thread 0 writes shared memory, thread 32 reads it after
  // the barrier: ordered, no race, and out[0] = 0 (thread 0's %tid.x).
  std::string decls = "  .shared .align 4 .b8 buf[64];\n";
  std::string body = R"(
  mov.u32 %r1, %tid.x;
  mov.b64 %rd4, buf;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra READ;
  st.shared.u32 [%rd4], %r1;
READ:
  barrier.cta.sync.aligned 0;
  setp.ne.u32 %p2, %r1, 32;
  @%p2 bra DONE;
  ld.shared.u32 %r9, [%rd4];
  st.global.u32 [%rd1], %r9;
DONE:
)";
  Run r(kernel(decls, body), 64);
  INFO(r.fault);
  CHECK(r.fault.empty());
  CHECK(r.out[0] == 0u);
}

TEST_CASE("review: cp.async's cache-policy operand is not read as its source size", "[emulator]") {
  // ISA cp.async ... {.level::cache_hint} [dst], [src], cp-size{, src-size}{, cache-policy}: with
  // .L2::cache_hint and four operands the fourth is the policy, so all 16 bytes are copied:
  // out[4] (0xdeadbeef) comes back in out[0].
  std::string decls = "  .shared .align 16 .b8 buf[64];\n";
  std::string body = R"(
  mov.b64 %rd4, buf;
  add.s64 %rd5, %rd1, 16;
  createpolicy.fractional.L2::evict_last.b64 %rd6, 1.0;
  cp.async.cg.shared.global.L2::cache_hint [%rd4], [%rd5], 16, %rd6;
  cp.async.commit_group;
  cp.async.wait_group 0;
  ld.shared.u32 %r9, [%rd4];
  st.global.u32 [%rd1], %r9;
)";
  Run r(kernel(decls, body), 1);
  INFO(r.fault);
  REQUIRE(r.fault.empty());
  CHECK(r.out[0] == 0xdeadbeefu);
}

TEST_CASE("review: a decimal floating-point constant is read as its value", "[emulator]") {
  // ISA constants: `1.5` is an f64 value, converted for an f32 instruction: 1.5 + 0.25 = 1.75 (0x3fe00000).
  CHECK(one("  mov.f32 %f2, 0f3E800000;\n  add.rn.f32 %f1, %f2, 1.5;\n  mov.b32 %r9, %f1;\n") == 0x3fe00000u);
}

TEST_CASE("review: mov.b128 packs and unpacks both 64-bit halves", "[emulator]") {
  // ISA mov: {a, b} packs with a the least significant. 0x1111111122222222 low, 0x3333333344444444
  // high, unpacked again and stored: words 0x22222222, 0x11111111, 0x44444444, 0x33333333.
  std::string body = R"(
  mov.b64 %rd4, 0x1111111122222222;
  mov.b64 %rd5, 0x3333333344444444;
  mov.b128 %rq1, {%rd4, %rd5};
  mov.b128 %rq2, %rq1;
  mov.b128 {%rd6, %rd7}, %rq2;
  st.global.u64 [%rd1], %rd6;
  st.global.u64 [%rd1+8], %rd7;
)";
  Run r(kernel("  .reg .b128 %rq<4>;\n", body), 1);
  INFO(r.fault);
  REQUIRE(r.fault.empty());
  CHECK(r.out[0] == 0x22222222u);
  CHECK(r.out[1] == 0x11111111u);
  CHECK(r.out[2] == 0x44444444u);
  CHECK(r.out[3] == 0x33333333u);
}

TEST_CASE("review: a collective waits only for the non-exited lanes of its member mask", "[emulator]") {
  // ISA shfl.sync / vote.sync: the thread waits until all non-exited threads of membermask have
  // executed it. A CTA of 48 threads: warp 1 has lanes 0..15 only, yet a full mask is valid.
  // bfly 1 swaps neighbours: out[t] = t ^ 1; the ballot of warp 1 is 0xffff, of warp 0 all ones.
  std::string body = R"(
  mov.u32 %r1, %tid.x;
  shfl.sync.bfly.b32 %r9, %r1, 1, 31, -1;
  setp.eq.u32 %p1, %r1, %r1;
  vote.sync.ballot.b32 %r8, %p1, -1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
  st.global.u32 [%rd3+256], %r8;
)";
  Run r(kernel("", body), 48, 128);
  INFO(r.fault);
  REQUIRE(r.fault.empty());
  for (uint32_t t = 0; t < 48; ++t) {
    CHECK(r.out[t] == (t ^ 1u));
    CHECK(r.out[64 + t] == (t < 32 ? 0xffffffffu : 0xffffu));
  }
}

TEST_CASE("review: lanes held at a collective do not stop the rest of their warp (no false deadlock)", "[emulator]") {
  // Lanes 16..31 reach the shuffle first and wait there for lanes 0..15, which take a longer path
  // and then join: a valid program (ISA shfl.sync waits for the mask's lanes), under any schedule.
  // idx 0 reads lane 0's %tid.x: out[t] = 0 for every thread.
  std::string body = R"(
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra LONG;
JOIN:
  shfl.sync.idx.b32 %r9, %r1, 0, 31, -1;
  bra.uni DONE;
LONG:
  add.u32 %r2, %r1, 1;
  add.u32 %r2, %r2, 1;
  add.u32 %r2, %r2, 1;
  bra.uni JOIN;
DONE:
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
)";
  check_under_seeds(body, 32, [](uint32_t) { return 0u; });
}

TEST_CASE("review: a warp whose only pick in a turn is held at a collective is not a deadlock while its other lanes can run",
          "[emulator]") {
  // Warps 1..3 wait at the barrier at once; in warp 0, 64 times over, lanes 1..31 reach a shuffle
  // first and wait there for lane 0, which takes a longer path. A seeded turn that starts with
  // lanes 1..31 ready at the shuffle and picks only them advances no lane, yet lane 0 can run:
  // that is no deadlock, and the next turn must run it. out[t] = the sum of lane 0's %tid.x
  // (0) for warp 0, its own %tid.x for the others.
  std::string body = R"(
  mov.u32 %r1, %tid.x;
  mov.u32 %r9, %r1;
  setp.ge.u32 %p2, %r1, 32;
  @%p2 bra DONE;
  mov.u32 %r9, 0;
  mov.u32 %r5, 0;
  setp.eq.u32 %p1, %r1, 0;
LOOP:
  @%p1 bra LONG;
JOIN:
  shfl.sync.idx.b32 %r6, %r1, 0, 31, -1;
  add.u32 %r9, %r9, %r6;
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p3, %r5, 64;
  @%p3 bra LOOP;
  bra.uni DONE;
LONG:
  add.u32 %r2, %r1, 1;
  add.u32 %r2, %r2, 1;
  bra.uni JOIN;
DONE:
  bar.sync 0;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
)";
  check_under_seeds(body, 128, [](uint32_t t) { return t < 32 ? 0u : t; });
}

TEST_CASE("review: a release store and an acquire load of a shared flag are no data race and order the data", "[emulator]") {
  // ISA memory consistency model: strong (relaxed, acquire, release, volatile) accesses to the
  // same location do not form a data race, and an acquire that observes a release orders the
  // releasing thread's earlier writes before the acquiring thread's later reads. Thread 0 writes
  // 42 then releases the flag; thread 32 acquires it and reads 42 into out[0].
  std::string decls = "  .shared .align 4 .b8 buf[8];\n";
  std::string body = R"(
  mov.u32 %r1, %tid.x;
  mov.b64 %rd4, buf;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra READY;
  st.shared.u32 [%rd4+4], 0;
READY:
  bar.sync 0;
  setp.eq.u32 %p2, %r1, 0;
  @%p2 bra PRODUCE;
  setp.ne.u32 %p3, %r1, 32;
  @%p3 bra DONE;
SPIN:
  ld.acquire.cta.shared.u32 %r2, [%rd4+4];
  setp.ne.u32 %p4, %r2, 1;
  @%p4 bra SPIN;
  ld.shared.u32 %r9, [%rd4];
  st.global.u32 [%rd1], %r9;
  bra.uni DONE;
PRODUCE:
  st.shared.u32 [%rd4], 42;
  st.release.cta.shared.u32 [%rd4+4], 1;
DONE:
)";
  Run r(kernel(decls, body), 64);
  INFO(r.fault);
  CHECK(r.fault.empty());
  CHECK(r.out[0] == 42u);
}
