// cvt and cvt.pack decoded from their opcodes and applied: operand placement (which source goes
// to the upper half), widths, and the results' bit patterns worked out by hand from the formats.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <vector>

#include "emulator/cvt_instruction.hpp"
#include "emulator/fault.hpp"

using namespace cutejit::emulator;

namespace {

uint64_t f32(float f) { return std::bit_cast<uint32_t>(f); }
uint64_t f64(double d) { return std::bit_cast<uint64_t>(d); }

/// Decodes `opcode` and applies it to `sources`.
uint64_t run(const char* opcode, std::vector<uint64_t> sources) {
  const std::optional<Conversion> c = parse_cvt(opcode);
  REQUIRE(c);
  REQUIRE(sources.size() == c->sources);
  return (*c)(sources);
}

}  // namespace

TEST_CASE("cvt: FP8 pairs from two f32, a in the upper byte", "[cvt]") {
  // e4m3: 1.0 = 0.0111.000, -2.0 = 1.1000.000.
  CHECK(run("cvt.rn.satfinite.e4m3x2.f32", {f32(1.0f), f32(-2.0f)}) == 0x38c0);
  // e5m2: 1.5 = 0.01111.10; 114688 saturates to 57344 = 0.11110.11.
  CHECK(run("cvt.rn.satfinite.e5m2x2.f32", {f32(1.5f), f32(114688.0f)}) == 0x3e7b);
  CHECK(run("cvt.rn.satfinite.relu.e4m3x2.f32", {f32(-1.0f), f32(NAN)}) == 0x007f);
  // From an f16x2 register: its upper half to the upper byte.
  CHECK(run("cvt.rn.satfinite.e4m3x2.f16x2", {0x3c00c000}) == 0x38c0);
  CHECK(run("cvt.rn.satfinite.e5m2x2.bf16x2", {0x3f800000}) == 0x3c00);
  const Conversion c = *parse_cvt("cvt.rn.satfinite.e4m3x2.f32");
  CHECK(c.destination_bits == 16);
  CHECK(c.source_bits == 32);
  CHECK(c.sources == 2);
}

TEST_CASE("cvt: FP6 and FP4 pairs", "[cvt]") {
  CHECK(run("cvt.rn.satfinite.e2m3x2.f32", {f32(7.5f), f32(1.0f)}) == 0x1f08);
  CHECK(run("cvt.rn.satfinite.e3m2x2.f32", {f32(28.0f), f32(-0.0625f)}) == 0x1f21);
  CHECK(run("cvt.rn.satfinite.e3m2x2.f32", {f32(NAN), f32(-1e9f)}) == 0x1f3f);  // NaN -> +MAX_NORM
  // e2m1: 6.0 = 0.11.1 in the upper nibble, -0.5 = 1.00.1 in the lower.
  CHECK(run("cvt.rn.satfinite.e2m1x2.f32", {f32(6.0f), f32(-0.5f)}) == 0x79);
  CHECK(run("cvt.rn.satfinite.e2m1x2.f32", {f32(5.0f), f32(0.25f)}) == 0x60);  // ties: 4 (even) and 0
  CHECK(parse_cvt("cvt.rn.satfinite.e2m1x2.f32")->destination_bits == 8);
}

TEST_CASE("cvt: ue8m0 pairs round the magnitude toward zero or up", "[cvt]") {
  CHECK(run("cvt.rz.satfinite.ue8m0x2.f32", {f32(3.0f), f32(0.75f)}) == 0x807e);
  CHECK(run("cvt.rp.satfinite.ue8m0x2.f32", {f32(3.0f), f32(0.75f)}) == 0x817f);
  CHECK(run("cvt.rp.satfinite.ue8m0x2.f32", {f32(INFINITY), f32(NAN)}) == 0xfeff);
  CHECK(run("cvt.rp.ue8m0x2.f32", {f32(INFINITY), f32(1.0f)}) == 0xff7f);
  CHECK(run("cvt.rz.satfinite.ue8m0x2.bf16x2", {0xc0403f80}) == 0x807f);  // -3.0 -> 2^1, 1.0 -> 2^0
  CHECK(run("cvt.rz.satfinite.relu.ue8m0x2.bf16x2", {0xc0403f80}) == 0x007f);
}

TEST_CASE("cvt: f16x2 and bf16x2 from two f32", "[cvt]") {
  CHECK(run("cvt.rn.f16x2.f32", {f32(1.0f), f32(-2.0f)}) == 0x3c00c000);
  // 1 + 2^-11 + 2^-20 is above the f16 midpoint: .rn rounds up, .rz down.
  const float just_above = 1.0f + 0x1p-11f + 0x1p-20f;
  CHECK(run("cvt.rn.f16x2.f32", {f32(just_above), f32(0.0f)}) == 0x3c010000);
  CHECK(run("cvt.rz.f16x2.f32", {f32(just_above), f32(0.0f)}) == 0x3c000000);
  // bf16 ties: 1 + 2^-8 to 1.0 (even), 1 + 3 * 2^-8 to 1 + 2^-6 (even).
  CHECK(run("cvt.rn.bf16x2.f32", {f32(1.00390625f), f32(1.01171875f)}) == 0x3f803f82);
  CHECK(run("cvt.rn.relu.satfinite.f16x2.f32", {f32(-5.0f), f32(1e6f)}) == 0x00007bff);
  CHECK(parse_cvt("cvt.rn.bf16x2.f32")->destination_bits == 32);
}

TEST_CASE("cvt: unpacking narrow pairs is exact, upper element to the upper half", "[cvt]") {
  CHECK(run("cvt.rn.f16x2.e4m3x2", {0x38c0}) == 0x3c00c000);
  CHECK(run("cvt.rn.f16x2.e4m3x2", {0x7f01}) == 0x7fff1800);  // NaN; 2^-9 = f16 0.00110.0000000000
  CHECK(run("cvt.rn.f16x2.e5m2x2", {0x7c01}) == 0x7c000100);  // inf; 2^-16 is an f16 subnormal
  CHECK(run("cvt.rn.f16x2.e2m1x2", {0x79}) == 0x4600b800);
  CHECK(run("cvt.rn.relu.f16x2.e2m1x2", {0x79}) == 0x46000000);
  CHECK(run("cvt.rn.f16x2.e2m3x2", {0x1f01}) == 0x47803000);  // 7.5; 0.125
  CHECK(run("cvt.rn.f16x2.e3m2x2", {0x3f0c}) == 0xcf003c00);  // -28; 1.0
  CHECK(run("cvt.rn.bf16x2.ue8m0x2", {0x00ff}) == 0x00407fff);  // 2^-127 is bf16's 0x0040
  CHECK(run("cvt.rn.bf16x2.ue8m0x2", {0xfe7f}) == 0x7f003f80);
  CHECK(parse_cvt("cvt.rn.f16x2.e2m1x2")->source_bits == 8);
  CHECK_THROWS_AS(run("cvt.rn.f16x2.e2m3x2", {0x4001}), Fault);  // the top 2 bits must be zero
}

TEST_CASE("cvt: scalar float conversions", "[cvt]") {
  CHECK(run("cvt.rn.f16.f32", {f32(65520.0f)}) == 0x7c00);
  CHECK(run("cvt.rz.f16.f32", {f32(1e6f)}) == 0x7bff);
  CHECK(run("cvt.rz.f16.f32", {f32(INFINITY)}) == 0x7c00);
  CHECK(run("cvt.rn.satfinite.f16.f32", {f32(INFINITY)}) == 0x7bff);
  CHECK(run("cvt.rn.relu.bf16.f32", {f32(-3.0f)}) == 0);
  CHECK(run("cvt.rn.relu.bf16.f32", {f32(NAN)}) == 0x7fff);
  CHECK(run("cvt.rm.f16.f64", {f64(-1.0 - 0x1p-40)}) == 0xbc01);
  CHECK(run("cvt.rna.tf32.f32", {0x3f801000}) == 0x3f802000);
  CHECK(run("cvt.rn.tf32.f32", {0x3f801000}) == 0x3f800000);
  CHECK(run("cvt.rn.satfinite.tf32.f32", {0x7f7fffff}) == 0x7f7fe000);
  CHECK(run("cvt.rna.tf32.f32", {0x7f7fffff}) == 0x7f800000);
  CHECK(run("cvt.f32.f16", {0x0001}) == 0x33800000);
  CHECK(run("cvt.f32.bf16", {0xc0a0}) == f32(-5.0f));
  CHECK(run("cvt.f32.bf16", {0x8001}) == 0x80010000);      // a bf16 subnormal is an f32 subnormal
  CHECK(run("cvt.ftz.f32.bf16", {0x8001}) == 0x80000000);  // ... which .ftz flushes
  CHECK(run("cvt.f64.f32", {f32(0.1f)}) == f64(double(0.1f)));
  CHECK(run("cvt.rn.f32.f64", {f64(0x1p-140)}) == 0x00000200);
  CHECK(run("cvt.rn.ftz.f32.f64", {f64(-0x1p-140)}) == 0x80000000);
  CHECK(run("cvt.rp.f16.f32", {0x00000001}) == 0x0001);      // 2^-149 rounds up to f16's least subnormal
  CHECK(run("cvt.rp.ftz.f16.f32", {0x00000001}) == 0x0000);  // ... unless the f32 subnormal is flushed
  CHECK(run("cvt.rz.f32.f64", {f64(1.0 + 0x1p-30)}) == 0x3f800000);
  CHECK(run("cvt.rp.f32.f64", {f64(1.0 + 0x1p-30)}) == 0x3f800001);
  CHECK(run("cvt.rz.f16.bf16", {0x3f81}) == 0x3c08);  // bf16 1 + 2^-7 is exact in f16
  CHECK(run("cvt.rn.bf16.f16", {0x3c01}) == 0x3f80);  // f16 1 + 2^-10 rounds to bf16 1.0
}

TEST_CASE("cvt: rounding to integral and saturation in the same float type", "[cvt]") {
  CHECK(run("cvt.rni.f32.f32", {f32(2.5f)}) == f32(2.0f));
  CHECK(run("cvt.rmi.f32.f32", {f32(-0.5f)}) == f32(-1.0f));
  CHECK(run("cvt.rzi.f32.f32", {f32(-0.5f)}) == f32(-0.0f));
  CHECK(run("cvt.rzi.ftz.f32.f32", {0x00000005}) == 0);
  CHECK(run("cvt.rpi.f32.f32", {0x00000005}) == f32(1.0f));
  CHECK(run("cvt.rni.f16.f16", {0x3e00}) == 0x4000);  // 1.5 -> 2
  CHECK(run("cvt.rpi.bf16.bf16", {0xbfc0}) == 0xbf80);  // -1.5 -> -1
  CHECK(run("cvt.sat.f32.f32", {f32(1.5f)}) == f32(1.0f));
  CHECK(run("cvt.sat.f32.f32", {f32(NAN)}) == 0);
  CHECK(run("cvt.sat.f32.f32", {f32(-3.0f)}) == 0);
  CHECK(run("cvt.ftz.f32.f32", {0x80000007}) == 0x80000000);
  CHECK(run("cvt.f32.f32", {0x80000007}) == 0x80000007);
  CHECK(run("cvt.rn.sat.f16.f32", {f32(0.75f)}) == 0x3a00);
}

TEST_CASE("cvt: float to integer", "[cvt]") {
  const Conversion c = *parse_cvt("cvt.rzi.s32.f32");
  CHECK(c.destination_signed);
  CHECK(c.destination_bits == 32);
  CHECK(run("cvt.rzi.s32.f32", {f32(-2.7f)}) == 0xfffffffe);
  CHECK(run("cvt.rni.s32.f32", {f32(3e9f)}) == 0x7fffffff);
  CHECK(run("cvt.rni.u8.f32", {f32(-3.0f)}) == 0);
  CHECK(run("cvt.rni.s8.f64", {f64(-300.0)}) == 0x80);
  CHECK(run("cvt.rni.s32.f32", {f32(NAN)}) == 0);
  CHECK(run("cvt.rni.s32.f64", {f64(NAN)}) == 0x80000000);        // f64 source
  CHECK(run("cvt.rzi.u64.f32", {f32(NAN)}) == 0x8000000000000000);  // 64-bit destination
  CHECK(run("cvt.rzi.s16.f16", {0x7e00}) == 0);
  CHECK(run("cvt.rpi.s32.f32", {0x00000001}) == 1);
  CHECK(run("cvt.rpi.ftz.s32.f32", {0x00000001}) == 0);  // the subnormal is flushed first
  CHECK(run("cvt.rmi.s64.bf16", {0xc020}) == uint64_t(-3));
}

TEST_CASE("cvt: integer to float and integer to integer", "[cvt]") {
  CHECK(run("cvt.rn.f32.s32", {16777217}) == 0x4b800000);
  CHECK(run("cvt.rp.f32.s32", {16777217}) == 0x4b800001);
  CHECK(run("cvt.rn.f32.u32", {0xffffffff}) == 0x4f800000);
  CHECK(run("cvt.rz.f16.s16", {0xfc18}) == 0xe3d0);  // -1000
  CHECK(run("cvt.rn.f64.s64", {0x8000000000000000}) == 0xc3e0000000000000);
  CHECK(run("cvt.rn.sat.f32.s32", {5}) == f32(1.0f));
  CHECK(run("cvt.u32.u8", {0x1ff}) == 0xff);
  CHECK(run("cvt.s32.s8", {0x80}) == 0xffffff80);
  CHECK(run("cvt.u8.s32", {0xffffffff}) == 0xff);
  CHECK(run("cvt.s16.u32", {0x18000}) == 0x8000);
  CHECK(run("cvt.sat.u8.s32", {0xffffffff}) == 0);
  CHECK(run("cvt.sat.s8.s32", {200}) == 0x7f);
  CHECK(run("cvt.sat.u16.u32", {0x12345}) == 0xffff);
  CHECK(run("cvt.sat.s32.u64", {0xffffffffffffffff}) == 0x7fffffff);
  CHECK(run("cvt.sat.u32.s64", {0xfffffffffffffff0}) == 0);
  CHECK(parse_cvt("cvt.s32.s8")->destination_signed);
  CHECK(!parse_cvt("cvt.u32.u8")->destination_signed);
}

TEST_CASE("cvt.pack: saturate two s32 and pack, a above b, c's bits above both", "[cvt]") {
  CHECK(run("cvt.pack.sat.s16.s32", {40000, uint64_t(-5)}) == 0x7ffffffb);
  CHECK(run("cvt.pack.sat.u16.s32", {uint64_t(-1), 70000}) == 0x0000ffff);
  CHECK(run("cvt.pack.sat.u8.s32.b32", {300, uint64_t(-7), 0x1234}) == 0x1234ff00);
  CHECK(run("cvt.pack.sat.s4.s32.b32", {uint64_t(-9), 5, 0xabcdef}) == 0xabcdef85);
  CHECK(run("cvt.pack.sat.u2.s32.b32", {3, 9, 0}) == 0xf);
  CHECK(run("cvt.pack.sat.s2.s32.b32", {uint64_t(-1), 1, 0x3fffffff}) == 0xfffffffd);
}

TEST_CASE("cvt: opcodes the ISA does not define are refused", "[cvt]") {
  CHECK(!parse_cvt("add.f32"));
  CHECK(!parse_cvt("cvta.to.global.u64"));
  for (const char* bad : {"cvt.rn.e4m3x2.f32",            // .satfinite is mandatory
                          "cvt.rz.satfinite.e4m3x2.f32",  // FP8 rounds .rn
                          "cvt.s32.f32",                  // float to integer needs .rni/.rzi/...
                          "cvt.rn.s32.f32",               // ... not a float rounding
                          "cvt.f32.s32",                  // integer to float needs a rounding
                          "cvt.f16.f32",                  // narrowing needs a rounding
                          "cvt.rni.f16.f32",              // integer rounding needs the same type
                          "cvt.rm.relu.f16.f32",          // .relu goes with .rn/.rz
                          "cvt.rn.relu.f32.f64",          // .relu is for f16/bf16 from f32
                          "cvt.rna.f16.f32",              // .rna is tf32's
                          "cvt.rn.tf32.f16",
                          "cvt.ftz.s32.s16",              // .ftz needs f32
                          "cvt.rn.ue8m0x2.f32",           // ue8m0 rounds .rz/.rp
                          "cvt.rz.relu.ue8m0x2.f32",
                          "cvt.rs.satfinite.e4m3x4.f32",  // .rs is not covered
                          "cvt.rn.satfinite.e2m1x2.f16x2",
                          "cvt.rn.f32.s32.foo",
                          "cvt.pack.s16.s32",             // cvt.pack needs .sat
                          "cvt.pack.sat.u8.s32"})         // ... and .b32 for c below 16 bits
    CHECK_THROWS_AS(parse_cvt(bad), Fault);
}
