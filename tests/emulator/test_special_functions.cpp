// The approximate instructions: the ISA's special-value tables as bit patterns, .ftz, and the
// accuracy the emulator promises (within 1 ulp of a long double reference) over sampled inputs.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "emulator/float_arithmetic.hpp"
#include "emulator/special_functions.hpp"

using namespace cutejit::emulator;

namespace {

uint64_t f32(float f) { return std::bit_cast<uint32_t>(f); }
uint64_t f64(double d) { return std::bit_cast<uint64_t>(d); }
float as_f32(uint64_t b) { return std::bit_cast<float>(uint32_t(b)); }

uint64_t run(const std::string& opcode, uint64_t a) {
  const std::optional<FloatInstruction> in = parse_float_instruction(opcode);
  REQUIRE(in);
  const uint64_t s[] = {a};
  return (*in)(s);
}

const uint64_t pos_inf = 0x7f800000, neg_inf = 0xff800000, pos_zero = 0, neg_zero = 0x80000000, one = 0x3f800000;
bool is_nan32(uint64_t b) { return (b & 0x7f800000) == 0x7f800000 && (b & 0x7fffff); }

/// Within one f32 ulp (of the reference's binade) of the long double reference.
bool within_ulp(float r, long double ref) {
  const float near = float(ref);
  const long double ulp = std::fabs((long double)std::nextafter(near, INFINITY) - near);
  return std::fabs((long double)r - ref) <= ulp;
}

}  // namespace

TEST_CASE("special functions: the ISA's special values", "[special]") {
  const uint64_t nan = 0x7fc00000;
  // ex2: -inf -> +0, +-0 -> 1, +inf -> +inf, NaN -> NaN.
  CHECK(run("ex2.approx.f32", neg_inf) == pos_zero);
  CHECK(run("ex2.approx.f32", neg_zero) == one);
  CHECK(run("ex2.approx.ftz.f32", pos_zero) == one);
  CHECK(run("ex2.approx.f32", pos_inf) == pos_inf);
  CHECK(is_nan32(run("ex2.approx.f32", nan)));
  // lg2: -inf, negative -> NaN; +-0 -> -inf; +inf -> +inf.
  CHECK(is_nan32(run("lg2.approx.f32", neg_inf)));
  CHECK(is_nan32(run("lg2.approx.f32", f32(-2.0f))));
  CHECK(run("lg2.approx.f32", neg_zero) == neg_inf);
  CHECK(run("lg2.approx.f32", pos_zero) == neg_inf);
  CHECK(run("lg2.approx.f32", pos_inf) == pos_inf);
  // rcp: +-inf -> +-0, +-0 -> +-inf.
  CHECK(run("rcp.approx.f32", neg_inf) == neg_zero);
  CHECK(run("rcp.approx.f32", neg_zero) == neg_inf);
  CHECK(run("rcp.approx.ftz.f32", pos_zero) == pos_inf);
  CHECK(run("rcp.approx.f32", pos_inf) == pos_zero);
  // sqrt: negatives -> NaN, -0 -> -0.
  CHECK(is_nan32(run("sqrt.approx.f32", neg_inf)));
  CHECK(is_nan32(run("sqrt.approx.f32", f32(-1.0f))));
  CHECK(run("sqrt.approx.f32", neg_zero) == neg_zero);
  CHECK(run("sqrt.approx.f32", pos_inf) == pos_inf);
  // rsqrt: negatives -> NaN, -0 -> -inf, +0 -> +inf, +inf -> +0.
  CHECK(is_nan32(run("rsqrt.approx.f32", f32(-4.0f))));
  CHECK(run("rsqrt.approx.f32", neg_zero) == neg_inf);
  CHECK(run("rsqrt.approx.f32", pos_zero) == pos_inf);
  CHECK(run("rsqrt.approx.f32", pos_inf) == pos_zero);
  // sin, cos: +-inf -> NaN; sin(+-0) = +-0, cos(+-0) = 1.
  CHECK(is_nan32(run("sin.approx.f32", pos_inf)));
  CHECK(is_nan32(run("cos.approx.f32", neg_inf)));
  CHECK(run("sin.approx.f32", neg_zero) == neg_zero);
  CHECK(run("cos.approx.f32", neg_zero) == one);
  // tanh: +-inf -> +-1, +-0 -> +-0; subnormals pass through.
  CHECK(run("tanh.approx.f32", neg_inf) == 0xbf800000);
  CHECK(run("tanh.approx.f32", pos_inf) == one);
  CHECK(run("tanh.approx.f32", neg_zero) == neg_zero);
  CHECK(run("tanh.approx.f32", 0x00000010) == 0x00000010);
  CHECK(run("tanh.approx.f32", 0x80000010) == 0x80000010);
}

TEST_CASE("special functions: .ftz flushes subnormal arguments and results", "[special]") {
  CHECK(run("ex2.approx.f32", f32(-130.0f)) == 0x00080000);  // 2^-130 = 2^19 * 2^-149
  CHECK(run("ex2.approx.ftz.f32", f32(-130.0f)) == 0);
  CHECK(run("lg2.approx.f32", 0x00000001) == f32(-149.0f));
  CHECK(run("lg2.approx.ftz.f32", 0x00000001) == neg_inf);  // a flushed +0
  CHECK(run("rcp.approx.ftz.f32", 0x80000001) == neg_inf);
  CHECK(run("rcp.approx.f32", f32(0x1p127f)) == 0x00400000);  // 2^-127 = 2^22 * 2^-149, a subnormal
  CHECK(run("rcp.approx.ftz.f32", f32(0x1p127f)) == 0);
  CHECK(run("sin.approx.ftz.f32", 0x80000003) == neg_zero);
  CHECK(run("sin.approx.f32", 0x80000003) == 0x80000003);
}

TEST_CASE("special functions: within 1 ulp of a long double reference", "[special]") {
  std::mt19937 g(99);
  std::uniform_real_distribution<float> wide(-100.0f, 100.0f), positive(1e-30f, 1e30f);
  for (int i = 0; i < 20000; ++i) {
    const float x = wide(g), p = std::fabs(wide(g)) + 1e-3f, q = positive(g);
    INFO(x << " " << p << " " << q);
    CHECK(within_ulp(as_f32(run("ex2.approx.f32", f32(x))), std::exp2((long double)x)));
    CHECK(within_ulp(as_f32(run("lg2.approx.f32", f32(q))), std::log2((long double)q)));
    CHECK(within_ulp(as_f32(run("rcp.approx.f32", f32(x))), 1.0L / x));
    CHECK(within_ulp(as_f32(run("sqrt.approx.f32", f32(q))), std::sqrt((long double)q)));
    CHECK(within_ulp(as_f32(run("rsqrt.approx.f32", f32(p))), 1.0L / std::sqrt((long double)p)));
    CHECK(within_ulp(as_f32(run("sin.approx.f32", f32(x))), std::sin((long double)x)));
    CHECK(within_ulp(as_f32(run("cos.approx.f32", f32(x))), std::cos((long double)x)));
    const float t = x / 20;
    CHECK(within_ulp(as_f32(run("tanh.approx.f32", f32(t))), std::tanh((long double)t)));
  }
  // rcp is the correctly rounded reciprocal.
  CHECK(run("rcp.approx.f32", f32(3.0f)) == 0x3eaaaaab);
}

TEST_CASE("special functions: half-precision ex2 and tanh", "[special]") {
  CHECK(run("ex2.approx.f16", 0x3c00) == 0x4000);         // 2^1
  CHECK(run("ex2.approx.f16", 0xfc00) == 0x0000);         // -inf -> +0
  CHECK(run("ex2.approx.f16", 0x8000) == 0x3c00);         // -0 -> 1
  CHECK(run("ex2.approx.f16", 0xcc00) == 0x0100);         // 2^-16, an f16 subnormal
  CHECK(run("ex2.approx.f16x2", 0xbc004400) == 0x38004c00);  // lanes (2^4, 2^-1)
  CHECK(run("ex2.approx.ftz.bf16", 0x8001) == 0x3f80);    // -subnormal -> 1
  CHECK(run("ex2.approx.ftz.bf16", 0xc300) == 0);         // 2^-128 is a bf16 subnormal: flushed
  CHECK(run("ex2.approx.ftz.bf16x2", 0x7f803f80) == 0x7f804000);
  CHECK(run("tanh.approx.f16", 0xfc00) == 0xbc00);
  CHECK(run("tanh.approx.bf16", 0x8000) == 0x8000);
  CHECK(run("tanh.approx.f16", 0x3c00) == 0x3a18);  // tanh(1) = 0.76159... = 0.11000011000...b
  CHECK(run("tanh.approx.bf16x2", 0x00013f80) == 0x00013f43);  // a subnormal passes; tanh(1) in bf16
}

TEST_CASE("special functions: divides", "[special]") {
  CHECK(divide_approx(1.0, 3.0, false) == double(1.0f / 3.0f));
  CHECK(divide_approx(1.0, 0x1p127, false) == 0.0);                     // |b| > 2^126: a * (1/b) with 1/b flushed
  CHECK(std::signbit(divide_approx(-1.0, 0x1p127, false)));
  CHECK(std::signbit(divide_approx(1.0, -0x1p127, false)));
  CHECK(std::isnan(divide_approx(INFINITY, 0x1p127, false)));
  CHECK(divide_approx(3.0, 0x1p126, false) == 3.0 * 0x1p-126);         // the range's edge divides
  CHECK(divide_full(1.0, 0x1p127, false) == 0x1p-127);
  CHECK(divide_full(1.0, 0x1p127, true) == 0.0);
  const std::optional<FloatInstruction> in = parse_float_instruction("div.approx.ftz.f32");
  REQUIRE(in);
  const uint64_t s[] = {f32(6.0f), f32(3.0f)};
  CHECK((*in)(s) == f32(2.0f));
}

TEST_CASE("special functions: f64 approximations from the upper word", "[special]") {
  // 1/3 = 0x3fd5555555555555: the dropped low word 0x55555555 rounds down.
  CHECK(run("rcp.approx.ftz.f64", f64(3.0)) == 0x3fd5555500000000);
  CHECK(run("rcp.approx.ftz.f64", 0x4008000012345678) == 0x3fd5555500000000);  // a's low word is ignored
  // 1/5 = 0x3fc999999999999a: the dropped 0x9999999a rounds the upper word up.
  CHECK(run("rcp.approx.ftz.f64", f64(5.0)) == 0x3fc9999a00000000);
  CHECK(run("rcp.approx.ftz.f64", 0x0000000100000000) == 0x7ff0000000000000);  // a subnormal is +0
  CHECK(run("rcp.approx.ftz.f64", 0x8000000000000000) == 0xfff0000000000000);
  CHECK(run("rcp.approx.ftz.f64", 0xfff0000000000000) == 0x8000000000000000);
  CHECK(run("rcp.approx.ftz.f64", 0x7ff8000000000001) == 0x7fffffff00000000);  // canonical NaN
  CHECK(run("rsqrt.approx.ftz.f64", f64(4.0)) == f64(0.5));
  CHECK(run("rsqrt.approx.ftz.f64", 0x8000000100000000) == 0xfff0000000000000);  // -subnormal -> -inf
  CHECK(run("rsqrt.approx.ftz.f64", f64(-4.0)) == 0x7fffffff00000000);
  CHECK(run("rsqrt.approx.f64", f64(4.0)) == f64(0.5));
  CHECK(run("rsqrt.approx.f64", f64(2.0)) == f64(1.0 / std::sqrt(2.0)));
}
