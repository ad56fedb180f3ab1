// The emulated machine on hand-written PTX: results the ISA fixes, thread scheduling, and the
// faults it must report (with the kernel's source line) instead of computing a wrong answer.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "emulator/machine.hpp"
#include "ptx_kernel.hpp"

using namespace cutejit::emulator;
using test::kernel;
using test::Run;

namespace {

// out[tid] = value of %r9
const char* store_r9 =
    "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd2, %r1, 4;\n  add.s64 %rd3, %rd1, %rd2;\n  st.global.u32 [%rd3], %r9;\n";

}  // namespace

TEST_CASE("integer instructions follow the ISA's definitions", "[emulator]") {
  auto one = [](const std::string& compute) {
    Run r(kernel("", compute + store_r9), 1);
    REQUIRE(r.fault.empty());
    return r.out[0];
  };
  // shr.s32 by more than 31 fills with the sign; shl by 32 or more gives 0 (ISA: shift amounts clamp).
  CHECK(one("  mov.b32 %r8, -64;\n  shr.s32 %r9, %r8, 40;\n") == 0xffffffffu);
  CHECK(one("  mov.b32 %r8, 1;\n  shl.b32 %r9, %r8, 32;\n") == 0u);
  // bfe.s32: bits 4..11 of 0x0000_0f80 are 0xf8, sign-extended from bit 11.
  CHECK(one("  mov.b32 %r8, 3968;\n  bfe.s32 %r9, %r8, 4, 8;\n") == 0xfffffff8u);
  // prmt with selector 0x3210 is the identity; 0x0123 reverses the bytes of a.
  CHECK(one("  mov.b32 %r8, 0x11223344;\n  prmt.b32 %r9, %r8, 0, 0x0123;\n") == 0x44332211u);
  // mul.hi.s32 of -2 and 3: the high word of -6.
  CHECK(one("  mov.b32 %r8, -2;\n  mul.hi.s32 %r9, %r8, 3;\n") == 0xffffffffu);
  // add.cc then addc: the carry of 0xffffffff + 1 reaches the high word (ISA: CC.CF).
  CHECK(one("  mov.b32 %r8, -1;\n  add.cc.u32 %r7, %r8, 1;\n  addc.u32 %r9, 5, 0;\n") == 6u);
  // sub.cc then subc: 0 - 1 borrows from the high word.
  CHECK(one("  sub.cc.u32 %r7, 0, 1;\n  subc.u32 %r9, 5, 0;\n") == 4u);
  // lop3 with the table of a ^ b ^ c (0x96).
  CHECK(one("  mov.b32 %r8, 0xf0f0;\n  lop3.b32 %r9, %r8, 0xff00, 0x0ff0, 0x96;\n") == (0xf0f0u ^ 0xff00u ^ 0x0ff0u));
  // cvt.rzi.s32.f32 of -2.75 truncates; cvt.rni rounds ties to even (2.5 -> 2); NaN -> 0.
  CHECK(one("  cvt.rzi.s32.f32 %r9, 0fC0300000;\n") == uint32_t(-2));
  CHECK(one("  cvt.rni.s32.f32 %r9, 0f40200000;\n") == 2u);
  CHECK(one("  cvt.rni.s32.f32 %r9, 0f7FC00000;\n") == 0u);
  // cvt.rn.bf16.f32 of 1 + 2^-8 (a tie) rounds to even: 1.0 = 0x3f80.
  CHECK(one("  cvt.rn.bf16.f32 %rs1, 0f3F808000;\n  cvt.u32.u16 %r9, %rs1;\n") == 0x3f80u);
  CHECK(one("  cvt.rn.bf16.f32 %rs1, 0f3F818000;\n  cvt.u32.u16 %r9, %rs1;\n") == 0x3f82u);
}

TEST_CASE("divergent lanes run their own paths and meet again", "[emulator]") {
  // Odd lanes add 100, even lanes add 200, then every lane adds its lane id from a shuffle.
  std::string body = R"(
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p1, %r2, 1;
  @%p1 bra ODD;
  add.s32 %r9, %r1, 200;
  bra.uni JOIN;
ODD:
  add.s32 %r9, %r1, 100;
JOIN:
  shfl.sync.idx.b32 %r3, %r1, 0, 31, -1;
  add.s32 %r9, %r9, %r3;
)";
  std::string store = "  mul.wide.u32 %rd2, %r1, 4;\n  add.s64 %rd3, %rd1, %rd2;\n  st.global.u32 [%rd3], %r9;\n";
  Run r(kernel("", body + store), 32);
  REQUIRE(r.fault.empty());
  for (uint32_t t = 0; t < 32; ++t) CHECK(r.out[t] == t + (t % 2 ? 100 : 200));
}

TEST_CASE("an out-of-bounds store is reported with the thread and the source line", "[emulator]") {
  std::string body = "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd2, %r1, 4;\n  add.s64 %rd3, %rd1, %rd2;\n  .loc 1 7 3\n"
                     "  st.global.u32 [%rd3], %r1;\n";
  Run r(kernel("", body), 128, 64);  // threads 64.. store past the 64 words
  REQUIRE(!r.fault.empty());
  CHECK(r.fault.find("k.cu:7") != std::string::npos);
  CHECK(r.fault.find("out of bounds") != std::string::npos);
  CHECK(r.fault.find("thread (64, 0, 0)") != std::string::npos);
}

TEST_CASE("a read of shared memory nothing wrote is reported", "[emulator]") {
  std::string decls = "  .shared .align 4 .b8 buf[128];\n";
  std::string body = "  mov.u32 %r1, %tid.x;\n  mov.b64 %rd4, buf;\n  .loc 1 9 1\n  ld.shared.u32 %r9, [%rd4+4];\n" + std::string(store_r9);
  Run r(kernel(decls, body), 32);
  CHECK(r.fault.find("k.cu:9") != std::string::npos);
  CHECK(r.fault.find("nothing has written") != std::string::npos);
}

TEST_CASE("a wait on an mbarrier phase that never completes is a deadlock, with each warp's line", "[emulator]") {
  std::string decls = "  .shared .align 8 .b64 bar;\n";
  auto body = [](int arrivals) {
    return R"(
  mov.b64 %rd4, bar;
  mbarrier.init.shared::cta.b64 [%rd4], 2;
  mbarrier.arrive.shared::cta.b64 %rd5, [%rd4], )" + std::to_string(arrivals) + R"(;
  .loc 1 12 5
LOOP:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%rd4], 0;
  @!%p2 bra LOOP;
)";
  };
  Run ok(kernel(decls, body(2)), 1);
  CHECK(ok.fault.empty());
  Run r(kernel(decls, body(3)), 1);  // three arrivals in a phase that expects two
  CHECK(r.fault.find("more arrivals") != std::string::npos);
  Run d(kernel(decls, body(1)), 1);  // one arrival of two: the phase never completes
  CHECK(d.fault.find("deadlock") != std::string::npos);
  CHECK(d.fault.find("k.cu:12") != std::string::npos);
  CHECK(d.fault.find("try_wait") != std::string::npos);
}

TEST_CASE("an instruction the emulated device does not cover is named with its line", "[emulator]") {
  std::string body = "  .loc 1 5 2\n  bogus.sync.b32 %r9, %r1;\n";
  Run r(kernel("", body), 32);
  CHECK(r.fault.find("k.cu:5") != std::string::npos);
  CHECK(r.fault.find("bogus.sync.b32") != std::string::npos);
}

TEST_CASE("a loop that never ends stops at the instruction budget", "[emulator]") {
  RunOptions options;
  options.instruction_budget = 10000;
  Run r(kernel("", "SPIN:\n  .loc 1 3 1\n  bra.uni SPIN;\n"), 32, 64, 1, options);
  CHECK(r.fault.find("budget") != std::string::npos);
  CHECK(r.fault.find("k.cu:3") != std::string::npos);
}

TEST_CASE("a collective whose member mask names an exited lane is reported", "[emulator]") {
  std::string body = R"(
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 5;
  @%p1 bra DONE;
  .loc 1 4 1
  shfl.sync.bfly.b32 %r9, %r1, 1, 31, -1;
DONE:
)";
  Run r(kernel("", body), 32);
  CHECK(r.fault.find("lane 5") != std::string::npos);
  CHECK(r.fault.find("exited") != std::string::npos);
}

TEST_CASE("cp.async's copy lands only when its group is waited for", "[emulator]") {
  std::string decls = "  .shared .align 16 .b8 buf[64];\n";
  // Thread 0 copies out[1] to shared, reads it after wait_group 0 and stores it to out[0].
  std::string body = R"(
  mov.b64 %rd4, buf;
  add.s64 %rd5, %rd1, 16;
  cp.async.cg.shared.global [%rd4], [%rd5], 16;
  cp.async.commit_group;
  cp.async.wait_group 0;
  ld.shared.u32 %r9, [%rd4];
  st.global.u32 [%rd1], %r9;
)";
  Run r(kernel(decls, body), 1);
  REQUIRE(r.fault.empty());
  CHECK(r.out[0] == 0xdeadbeef);
  // Without the wait, the read finds nothing written.
  std::string racy = body;
  racy.replace(racy.find("  cp.async.wait_group 0;\n"), 25, "");
  Run bad(kernel(decls, racy), 1);
  CHECK(bad.fault.find("nothing has written") != std::string::npos);
}

TEST_CASE("a shared-memory data race between threads with no barrier between them is reported", "[emulator]") {
  std::string decls = "  .shared .align 4 .b8 buf[64];\n";
  auto body = [](bool barrier) {
    return std::string(R"(
  mov.u32 %r1, %tid.x;
  mov.b64 %rd4, buf;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra READ;
  st.shared.u32 [%rd4], %r1;
READ:
)") + (barrier ? "  bar.sync 0;\n" : "") + R"(
  setp.ne.u32 %p2, %r1, 32;
  @%p2 bra DONE;
  .loc 1 21 4
  ld.shared.u32 %r9, [%rd4];
  st.global.u32 [%rd1], %r9;
DONE:
)";
  };
  Run racy(kernel(decls, body(false)), 64);
  CHECK(racy.fault.find("data race") != std::string::npos);
  CHECK(racy.fault.find("k.cu:21") != std::string::npos);
  CHECK(racy.fault.find("thread (0, 0, 0)") != std::string::npos);
  Run ordered(kernel(decls, body(true)), 64);
  CHECK(ordered.fault.empty());
  CHECK(ordered.out[0] == 0u);
}
