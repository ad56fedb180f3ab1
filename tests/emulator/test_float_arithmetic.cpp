// Floating-point and half-precision instructions decoded from their opcodes: rounding modes
// checked against the exact result (exact in double for sums and products, or bracketed by the
// sign of an exactly computed residual for quotients and square roots), and the ISA's rules for
// .ftz, .sat, .relu, NaN, min/max and the sign operations on hand-derived bit patterns.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "emulator/fault.hpp"
#include "emulator/float_arithmetic.hpp"

using namespace cutejit::emulator;

namespace {

uint64_t f32(float f) { return std::bit_cast<uint32_t>(f); }
uint64_t f64(double d) { return std::bit_cast<uint64_t>(d); }
float as_f32(uint64_t b) { return std::bit_cast<float>(uint32_t(b)); }

uint64_t run(const std::string& opcode, std::vector<uint64_t> sources) {
  const std::optional<FloatInstruction> in = parse_float_instruction(opcode);
  REQUIRE(in);
  REQUIRE(sources.size() >= in->min_sources);
  REQUIRE(sources.size() <= in->max_sources);
  return (*in)(sources);
}

const char* mode_name(Rounding r) { return r == Rounding::rn ? "rn" : r == Rounding::rz ? "rz" : r == Rounding::rm ? "rm" : "rp"; }

/// `exact` (a double holding the exact result) rounded to f32 by `r`, from its two f32
/// neighbours; the host's own double-to-float conversion finds one of them.
float reference_round(double exact, Rounding r) {
  const float near = float(exact);
  if (double(near) == exact) return near;
  const float lo = double(near) < exact ? near : std::nextafter(near, -INFINITY);
  const float hi = double(near) > exact ? near : std::nextafter(near, INFINITY);
  switch (r) {
    case Rounding::rz: return exact > 0 ? lo : hi;
    case Rounding::rm: return lo;
    case Rounding::rp: return hi;
    default: return near;
  }
}

/// An f32 with a random 24-bit significand and an exponent in [-10, 10], either sign.
float random_f32(std::mt19937& g) {
  std::uniform_int_distribution<uint32_t> mantissa(0, (1u << 23) - 1), exponent(117, 137), sign(0, 1);
  return std::bit_cast<float>(sign(g) << 31 | exponent(g) << 23 | mantissa(g));
}

/// True when `r` is `exact` rounded by `mode`, where `compare(x)` is the sign of exact - x.
template <class Compare>
bool brackets(float r, Rounding mode, Compare compare) {
  const float up = std::nextafter(r, INFINITY), down = std::nextafter(r, -INFINITY);
  switch (mode) {
    case Rounding::rm: return compare(r) >= 0 && compare(up) < 0;
    case Rounding::rp: return compare(r) <= 0 && compare(down) > 0;
    case Rounding::rz: return r >= 0 ? brackets(r, Rounding::rm, compare) : brackets(r, Rounding::rp, compare);
    default: {
      const double lo = (double(down) + r) / 2, hi = (double(r) + up) / 2;  // the midpoints, exact
      const bool even = (std::bit_cast<uint32_t>(r) & 1) == 0;
      const int above_lo = compare(lo), below_hi = -compare(hi);
      return above_lo >= 0 && below_hi >= 0 && ((above_lo > 0 && below_hi > 0) || even);
    }
  }
}

int sign_of(double x) { return (x > 0) - (x < 0); }

}  // namespace

TEST_CASE("float arithmetic: f32 add, mul and fma round as the exact result does", "[float]") {
  std::mt19937 g(20261204);
  int fma_checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const float a = random_f32(g), b = random_f32(g), c = random_f32(g);
    const double sum = double(a) + double(b), product = double(a) * double(b);  // exact: exponents are close
    const double fused = product + double(c), v = fused - product;
    const bool fused_exact = (product - (fused - v)) + (double(c) - v) == 0;
    for (Rounding r : {Rounding::rn, Rounding::rz, Rounding::rm, Rounding::rp}) {
      const std::string m = mode_name(r);
      INFO(a << " " << b << " " << c << " " << m);
      CHECK(as_f32(run("add." + m + ".f32", {f32(a), f32(b)})) == reference_round(sum, r));
      CHECK(as_f32(run("sub." + m + ".f32", {f32(a), f32(-b)})) == reference_round(sum, r));
      CHECK(as_f32(run("mul." + m + ".f32", {f32(a), f32(b)})) == reference_round(product, r));
      if (!fused_exact) continue;
      CHECK(as_f32(run("fma." + m + ".f32", {f32(a), f32(b), f32(c)})) == reference_round(fused, r));
      ++fma_checked;
    }
  }
  CHECK(fma_checked > 4 * 10000);
}

TEST_CASE("float arithmetic: f32 div, rcp and sqrt bracket the exact result", "[float]") {
  std::mt19937 g(7);
  for (int i = 0; i < 20000; ++i) {
    const float a = random_f32(g), b = random_f32(g), s = std::fabs(a);
    for (Rounding r : {Rounding::rn, Rounding::rz, Rounding::rm, Rounding::rp}) {
      const std::string m = mode_name(r);
      INFO(a << " / " << b << " " << m);
      // a - x * b = b * (a / b - x): its sign, computed exactly by one fma, compares x with a / b.
      const float q = as_f32(run("div." + m + ".f32", {f32(a), f32(b)}));
      CHECK(brackets(q, r, [&](double x) { return sign_of(std::fma(-x, double(b), double(a))) * sign_of(b); }));
      const float inv = as_f32(run("rcp." + m + ".f32", {f32(b)}));
      CHECK(brackets(inv, r, [&](double x) { return sign_of(std::fma(-x, double(b), 1.0)) * sign_of(b); }));
      const float root = as_f32(run("sqrt." + m + ".f32", {f32(s)}));
      CHECK(brackets(root, r, [&](double x) { return sign_of(std::fma(-x, x, double(s))); }));
    }
  }
  // 1/3 = 1.0101...b * 2^-2: the 24th bit is followed by 1010..., so .rn and .rp round up.
  CHECK(run("div.rn.f32", {f32(1.0f), f32(3.0f)}) == 0x3eaaaaab);
  CHECK(run("div.rz.f32", {f32(1.0f), f32(3.0f)}) == 0x3eaaaaaa);
  CHECK(run("div.rm.f32", {f32(-1.0f), f32(3.0f)}) == 0xbeaaaaab);
  CHECK(run("div.rp.f32", {f32(-1.0f), f32(3.0f)}) == 0xbeaaaaaa);
  CHECK(run("div.full.f32", {f32(1.0f), f32(3.0f)}) == 0x3eaaaaab);
}

TEST_CASE("float arithmetic: f64 in the directed modes", "[float]") {
  CHECK(run("add.rz.f64", {f64(1.0), f64(0x1p-60)}) == f64(1.0));
  CHECK(run("add.rp.f64", {f64(1.0), f64(0x1p-60)}) == f64(1.0 + 0x1p-52));
  CHECK(run("add.rm.f64", {f64(-1.0), f64(-0x1p-60)}) == f64(-1.0 - 0x1p-52));
  CHECK(run("add.rz.f64", {f64(-1.0), f64(-0x1p-60)}) == f64(-1.0));
  // (1 + 2^-52)^2 = 1 + 2^-51 + 2^-104.
  CHECK(run("mul.rz.f64", {f64(1.0 + 0x1p-52), f64(1.0 + 0x1p-52)}) == f64(1.0 + 0x1p-51));
  CHECK(run("mul.rp.f64", {f64(1.0 + 0x1p-52), f64(1.0 + 0x1p-52)}) == f64(1.0 + 0x1p-51 + 0x1p-52));
  // (1 + 2^-52)^2 - 1 = 2^-51 + 2^-104, half an ulp above 2^-51.
  CHECK(run("fma.rm.f64", {f64(1.0 + 0x1p-52), f64(1.0 + 0x1p-52), f64(-1.0)}) == f64(0x1p-51));
  CHECK(run("fma.rp.f64", {f64(1.0 + 0x1p-52), f64(1.0 + 0x1p-52), f64(-1.0)}) == f64(0x1p-51 + 0x1p-103));
  CHECK(run("fma.rn.f64", {f64(1.0 + 0x1p-52), f64(1.0 + 0x1p-52), f64(-1.0)}) == f64(0x1p-51));
  CHECK(run("div.rz.f64", {f64(1.0), f64(3.0)}) == 0x3fd5555555555555);
  CHECK(run("div.rp.f64", {f64(1.0), f64(3.0)}) == 0x3fd5555555555556);
  CHECK(run("sqrt.rm.f64", {f64(2.0)}) == 0x3ff6a09e667f3bcc);
  CHECK(run("sqrt.rp.f64", {f64(2.0)}) == 0x3ff6a09e667f3bcd);
  CHECK(run("add.f64", {f64(1.0), f64(0x1p-53)}) == f64(1.0));  // .rn by default
  // The mode is restored: an .rn instruction after a directed one rounds to nearest.
  CHECK(run("add.f32", {f32(1.0f), f32(0x1p-24f + 0x1p-30f)}) == f32(1.0f + 0x1p-23f));
}

TEST_CASE("float arithmetic: .ftz, .sat and NaN on f32", "[float]") {
  CHECK(run("add.ftz.f32", {0x00000100, f32(0.0f)}) == 0);
  CHECK(run("add.f32", {0x00000100, f32(0.0f)}) == 0x00000100);
  CHECK(run("mul.ftz.f32", {f32(-0x1p-70f), f32(0x1p-70f)}) == 0x80000000);  // the subnormal result is flushed
  CHECK(run("mul.rn.f32", {f32(-0x1p-70f), f32(0x1p-70f)}) == 0x80000200);   // -2^-140 = -2^9 * 2^-149
  CHECK(run("add.sat.f32", {f32(0.75f), f32(0.5f)}) == f32(1.0f));
  CHECK(run("add.sat.f32", {f32(-2.0f), f32(1.0f)}) == 0);
  CHECK(run("add.sat.f32", {f32(INFINITY), f32(-INFINITY)}) == 0);
  CHECK(run("fma.rn.sat.f32", {f32(0.5f), f32(0.5f), f32(0.25f)}) == f32(0.5f));
  CHECK(run("add.f32", {f32(INFINITY), f32(-INFINITY)}) == 0x7fffffff);
  CHECK(run("add.rz.ftz.f32x2", {f32(1.0f) << 32 | f32(2.0f), f32(0x1p-24f) << 32 | 0x00000001}) == (f32(1.0f) << 32 | f32(2.0f)));
}

TEST_CASE("float arithmetic: f16 and bf16, exact results rounded once", "[float]") {
  // f16 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even is 1. 1 + 3 * 2^-11 goes to 1 + 2^-9.
  CHECK(run("add.f16", {0x3c00, 0x1000}) == 0x3c00);
  CHECK(run("add.rn.f16", {0x3c00, 0x1600}) == 0x3c02);
  CHECK(run("sub.f16", {0x3c00, 0x9000}) == 0x3c00);
  CHECK(run("add.f16x2", {0x3c004000, 0x3c003c00}) == 0x40004200);  // lanes (1 + 1, 2 + 1)
  CHECK(run("mul.f16", {0x5c00, 0x5c00}) == 0x7c00);                // 256^2 overflows
  CHECK(run("mul.sat.f16", {0x3800, 0x4400}) == 0x3c00);            // 0.5 * 4 clamped to 1
  CHECK(run("add.ftz.f16", {0x0001, 0x0000}) == 0x0000);
  CHECK(run("add.f16", {0x0001, 0x0000}) == 0x0001);
  // fma.bf16: 1.75 * (37/64) = 1 + 2^-7 + 2^-8 exactly, plus -2^-70: just below the tie between
  // 1 + 2^-7 (odd) and 1 + 2^-6, so it rounds down; rounding through a double would see the tie.
  CHECK(run("fma.rn.bf16", {0x3fe0, 0x3f14, 0x9c80}) == 0x3f81);
  CHECK(run("fma.rn.bf16", {0x3fe0, 0x3f14, 0x1c80}) == 0x3f82);
  CHECK(run("fma.rn.relu.bf16", {0x3f80, 0xbf80, 0x0000}) == 0x0000);  // -1 -> +0
  CHECK(run("fma.rn.relu.bf16x2", {0x7fc03f80, 0x3f803f80, 0x00000000}) == 0x7fff3f80);
  CHECK(run("fma.rn.f16", {0x3c00, 0x3c00, 0xbc00}) == 0x0000);
  CHECK(run("mul.bf16", {0x4040, 0x3fc0}) == 0x4090);  // 3 * 1.5 = 4.5
}

TEST_CASE("float arithmetic: the mixed-precision add, sub and fma of sm_100 widen the 16-bit sources exactly", "[float]") {
  // add.f32.bf16 d, a, c: d = f32(a) + c, one f32 rounding. bf16 1.5 (0x3fc0) + 2^-24 is 1.5
  // (the tie rounds to even); + 3 * 2^-24 rounds up to 1.5 + 2^-22.
  CHECK(as_f32(run("add.rn.f32.bf16", {0x3fc0, f32(std::ldexp(1.0f, -24))})) == 1.5f);
  CHECK(as_f32(run("add.rn.f32.bf16", {0x3fc0, f32(3 * std::ldexp(1.0f, -24))})) == 1.5f + std::ldexp(1.0f, -22));
  CHECK(as_f32(run("add.rz.f32.bf16", {0x3fc0, f32(3 * std::ldexp(1.0f, -24))})) == 1.5f + std::ldexp(1.0f, -23));
  CHECK(as_f32(run("add.f32.f16", {0x3c00, f32(0.25f)})) == 1.25f);              // f16 1
  CHECK(as_f32(run("sub.rn.f32.bf16", {0x4040, f32(0.5f)})) == 2.5f);            // bf16 3 - 0.5
  CHECK(as_f32(run("add.sat.f32.bf16", {0x4040, f32(0.5f)})) == 1.0f);           // clamped to [0, 1]
  // fma.rn.f32.bf16 d, a, b, c: f32(a) * f32(b) + c rounded once: bf16 (1 + 2^-7)^2 = 1 + 2^-6 +
  // 2^-14, exact in f32, minus 1.
  CHECK(as_f32(run("fma.rn.f32.bf16", {0x3f81, 0x3f81, f32(-1.0f)})) == std::ldexp(1.0f, -6) + std::ldexp(1.0f, -14));
  // The high half of a source register is not part of a 16-bit operand.
  CHECK(as_f32(run("add.rn.f32.bf16", {0xffff3fc0, f32(0.0f)})) == 1.5f);
  CHECK(parse_float_instruction("fma.rn.f32.f16")->max_sources == 3);
  for (const char* bad : {"mul.rn.f32.bf16", "fma.f32.bf16", "add.ftz.f32.f16", "mad.rn.f32.f16"})
    CHECK_THROWS_AS(parse_float_instruction(bad), Fault);
}

TEST_CASE("float arithmetic: min and max", "[float]") {
  CHECK(run("min.f32", {f32(-0.0f), f32(0.0f)}) == 0x80000000);
  CHECK(run("max.f32", {f32(-0.0f), f32(0.0f)}) == 0);
  CHECK(run("min.f32", {f32(NAN), f32(1.0f)}) == f32(1.0f));
  CHECK(run("max.f32", {f32(2.0f), f32(NAN)}) == f32(2.0f));
  CHECK(run("min.NaN.f32", {f32(NAN), f32(1.0f)}) == 0x7fffffff);
  CHECK(run("min.f32", {f32(NAN), f32(NAN)}) == 0x7fffffff);
  CHECK(run("min.xorsign.abs.f32", {f32(-3.0f), f32(2.0f)}) == f32(-2.0f));
  CHECK(run("max.xorsign.abs.f32", {f32(-3.0f), f32(-2.0f)}) == f32(3.0f));
  CHECK(run("min.f32", {f32(3.0f), f32(1.0f), f32(2.0f)}) == f32(1.0f));
  CHECK(run("max.abs.f32", {f32(-3.0f), f32(2.0f), f32(-1.0f)}) == f32(3.0f));
  CHECK(run("min.ftz.f32", {0x80000001, f32(0.0f)}) == 0x80000000);  // flushed to -0, then -0 < +0
  CHECK(run("min.f64", {f64(1.0), f64(-2.0)}) == f64(-2.0));
  CHECK(run("max.xorsign.abs.f16", {0xc200, 0xc000}) == 0x4200);
  CHECK(run("max.bf16x2", {0x3f80c000, 0x4000ffc0}) == 0x4000c000);  // lanes (1 | 2, -2 | NaN)
  CHECK(run("min.NaN.bf16x2", {0x3f80c000, 0x4000ffc0}) == 0x3f807fff);
}

TEST_CASE("float arithmetic: abs, neg, copysign and testp", "[float]") {
  CHECK(run("neg.f32", {f32(1.0f)}) == 0xbf800000);
  CHECK(run("abs.f32", {0xbf800000}) == 0x3f800000);
  CHECK(run("abs.f64", {0xfff8000000000001}) == 0xfff8000000000001);  // an f64 NaN passes unchanged
  CHECK(run("neg.ftz.f32", {0x00000001}) == 0x80000000);
  CHECK(run("abs.bf16x2", {0xbf80c000}) == 0x3f804000);
  CHECK(run("neg.f16x2", {0x3c000000}) == 0xbc008000);
  CHECK(run("copysign.f32", {f32(-1.0f), f32(2.0f)}) == f32(-2.0f));
  CHECK(run("copysign.f64", {f64(1.0), f64(-2.0)}) == f64(2.0));
  CHECK(run("testp.subnormal.f32", {0x00000001}) == 1);
  CHECK(run("testp.normal.f32", {0x00000001}) == 0);
  CHECK(run("testp.normal.f32", {f32(0.0f)}) == 1);  // zero counts as normal
  CHECK(run("testp.finite.f64", {f64(INFINITY)}) == 0);
  CHECK(run("testp.notanumber.f32", {0x7fc00000}) == 1);
}

TEST_CASE("float arithmetic: decoded widths and refused opcodes", "[float]") {
  CHECK(!parse_float_instruction("add.s32"));
  CHECK(!parse_float_instruction("mad.lo.s32"));
  CHECK(!parse_float_instruction("cvt.rn.f32.f16"));
  CHECK(parse_float_instruction("add.f32x2")->register_bits == 64);
  CHECK(parse_float_instruction("fma.rn.bf16x2")->max_sources == 3);
  CHECK(parse_float_instruction("fma.rn.bf16x2")->register_bits == 32);
  CHECK(parse_float_instruction("min.f32")->max_sources == 3);
  CHECK(parse_float_instruction("min.xorsign.abs.f32")->max_sources == 2);
  CHECK(parse_float_instruction("mad.rn.f32")->op == FloatOp::fma);
  for (const char* bad : {"fma.f32", "mad.f32", "add.rz.f16", "add.sat.f64", "add.ftz.bf16", "div.f32", "sin.f32", "ex2.approx.bf16",
                          "ex2.approx.ftz.f16", "min.xorsign.f32", "min.abs.f16", "fma.rn.oob.f16", "fma.rn.sat.relu.f16",
                          "rcp.approx.f64", "tanh.approx.ftz.f32", "testp.f32", "add.rn.rz.f32", "add.foo.f32", "abs.f32x2"})
    CHECK_THROWS_AS(parse_float_instruction(bad), Fault);
}
