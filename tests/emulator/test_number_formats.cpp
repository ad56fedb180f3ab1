// The number formats against their definitions in the PTX ISA (5.2.3): literal bit patterns
// worked out by hand from each format's fields, a reference decoder written from the same
// definitions, and every rounding mode of encode() against a brute-force search of the format's
// values for the nearest one in the mode's direction.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "emulator/number_formats.hpp"

using namespace cutejit::emulator;

namespace {

/// A format as the ISA defines it: exponent and mantissa widths, bias, sign, NaN/infinity.
struct Spec {
  NumberFormat format;
  int e, m, bias;
  bool is_signed;
  enum Nan { ieee, all_ones, none } nan;
};

const Spec specs[] = {
    {NumberFormat::f16, 5, 10, 15, true, Spec::ieee},       {NumberFormat::bf16, 8, 7, 127, true, Spec::ieee},
    {NumberFormat::e4m3, 4, 3, 7, true, Spec::all_ones},    {NumberFormat::e5m2, 5, 2, 15, true, Spec::ieee},
    {NumberFormat::e2m3, 2, 3, 1, true, Spec::none},        {NumberFormat::e3m2, 3, 2, 3, true, Spec::none},
    {NumberFormat::e2m1, 2, 1, 1, true, Spec::none},        {NumberFormat::ue4m3, 4, 3, 7, false, Spec::all_ones},
};

uint32_t magnitude_mask(const Spec& s) { return (1u << (s.e + s.m)) - 1; }
uint32_t sign_bit(const Spec& s) { return s.is_signed ? 1u << (s.e + s.m) : 0; }
uint32_t code_count(const Spec& s) { return 1u << (s.e + s.m + (s.is_signed ? 1 : 0)); }

bool ref_is_nan(const Spec& s, uint32_t c) {
  const uint32_t mag = c & magnitude_mask(s), exp = mag >> s.m, man = mag & ((1u << s.m) - 1);
  if (s.nan == Spec::ieee) return exp == (1u << s.e) - 1 && man != 0;
  return s.nan == Spec::all_ones && mag == magnitude_mask(s);
}

/// (-1)^s * 2^(E - bias) * (1 + M / 2^m), or 2^(1 - bias) * M / 2^m when E is 0.
double ref_value(const Spec& s, uint32_t c) {
  const uint32_t mag = c & magnitude_mask(s), exp = mag >> s.m, man = mag & ((1u << s.m) - 1);
  double v;
  if (s.nan == Spec::ieee && exp == (1u << s.e) - 1) v = HUGE_VAL;
  else if (exp == 0) v = std::pow(2.0, 1 - s.bias) * man / std::pow(2.0, s.m);
  else v = std::pow(2.0, int(exp) - s.bias) * (1 + man / std::pow(2.0, s.m));
  return (c & sign_bit(s)) ? -v : v;
}

uint32_t ref_max_code(const Spec& s) {
  return s.nan == Spec::ieee ? (((1u << s.e) - 1) << s.m) - 1 : s.nan == Spec::all_ones ? magnitude_mask(s) - 1 : magnitude_mask(s);
}

/// The nonnegative finite values, ascending, with their codes (positive codes ascend with value).
std::vector<std::pair<double, uint32_t>> ref_values(const Spec& s) {
  std::vector<std::pair<double, uint32_t>> v;
  for (uint32_t c = 0; c <= ref_max_code(s); ++c) v.push_back({ref_value(s, c), c});
  return v;
}

/// The code the brute-force search picks for x: the representable neighbours below and above
/// (beyond the largest finite value, the next step of the top binade stands for "overflow"),
/// then the mode's choice.
uint32_t ref_encode(const Spec& s, const std::vector<std::pair<double, uint32_t>>& values, double x, Rounding r, bool satfinite) {
  const bool negative = std::signbit(x) && s.is_signed;
  const double a = std::fabs(x);  // an unsigned format takes the magnitude
  const uint32_t sign = negative ? sign_bit(s) : 0, max = ref_max_code(s);
  const double top = values.back().first, top_step = top - values[values.size() - 2].first;
  const uint32_t overflow = max + 1;
  auto result = [&](uint32_t code) -> uint32_t {
    if (code != overflow) return code | sign;
    if (satfinite) return max | sign;
    if (s.nan == Spec::ieee) return overflow | sign;
    if (s.nan == Spec::all_ones) return magnitude_mask(s);
    return max | sign;
  };
  if (std::isinf(a)) return satfinite ? max | sign : result(overflow);
  auto it = std::upper_bound(values.begin(), values.end(), a, [](double v, auto& p) { return v < p.first; });
  const auto& below = *(it - 1);
  if (below.first == a) return result(below.second);
  const double hi_value = it == values.end() ? top + top_step : it->first;
  const uint32_t hi = it == values.end() ? overflow : it->second, lo = below.second;
  const double dlo = a - below.first, dhi = hi_value - a;
  uint32_t pick = lo;
  switch (r) {
    case Rounding::rz: pick = lo; break;
    case Rounding::rm: pick = negative ? hi : lo; break;
    case Rounding::rp: pick = negative ? lo : hi; break;
    case Rounding::rn: pick = dlo < dhi ? lo : dlo > dhi ? hi : (lo % 2 == 0 ? lo : hi); break;
    case Rounding::rna: pick = dlo < dhi ? lo : hi; break;
  }
  return result(pick);
}

/// Points around every gap of the format: the values, midpoints, a double ulp either side of
/// midpoints, quarter points, beyond the largest value and below the smallest.
std::vector<double> probe_points(const std::vector<std::pair<double, uint32_t>>& values) {
  std::vector<double> p;
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    const double lo = values[i].first, hi = values[i + 1].first, mid = lo + (hi - lo) / 2;
    for (double x : {lo, mid, std::nextafter(mid, 0.0), std::nextafter(mid, HUGE_VAL), lo + (hi - lo) / 4, lo + 3 * (hi - lo) / 4}) p.push_back(x);
  }
  const double top = values.back().first, step = top - values[values.size() - 2].first;
  for (int k = 0; k <= 8; ++k) p.push_back(top + k * step / 4);
  for (double x : {std::nextafter(top + step / 2, 0.0), std::nextafter(top + step / 2, HUGE_VAL), top * 1e3, 1e300, HUGE_VAL,
                   values[1].first / 2, values[1].first / 4, 1e-300})
    p.push_back(x);
  return p;
}

}  // namespace

TEST_CASE("number formats: hand-derived bit patterns decode to their values", "[number_formats]") {
  // f16: 1 | 5 | 10, bias 15.
  CHECK(decode(NumberFormat::f16, 0x3c00) == 1.0);
  CHECK(decode(NumberFormat::f16, 0x7bff) == 65504.0);
  CHECK(decode(NumberFormat::f16, 0x0400) == std::ldexp(1.0, -14));
  CHECK(decode(NumberFormat::f16, 0x0001) == std::ldexp(1.0, -24));
  CHECK(decode(NumberFormat::f16, 0xfc00) == -HUGE_VAL);
  CHECK(std::isnan(decode(NumberFormat::f16, 0x7e00)));
  // bf16: 1 | 8 | 7, bias 127.
  CHECK(decode(NumberFormat::bf16, 0x3f80) == 1.0);
  CHECK(decode(NumberFormat::bf16, 0x7f7f) == std::ldexp(255.0, 120));
  CHECK(decode(NumberFormat::bf16, 0x0001) == std::ldexp(1.0, -133));
  // tf32: f32's layout, 10 mantissa bits; the low 13 bits are not part of the value.
  CHECK(decode(NumberFormat::tf32, 0x3f801fff) == 1.0);
  CHECK(decode(NumberFormat::tf32, 0x3f802000) == 1.0 + std::ldexp(1.0, -10));
  // e4m3: bias 7, S.1111.111 is NaN, so the largest is S.1111.110 = 1.75 * 2^8.
  CHECK(decode(NumberFormat::e4m3, 0x7e) == 448.0);
  CHECK(decode(NumberFormat::e4m3, 0xfe) == -448.0);
  CHECK(decode(NumberFormat::e4m3, 0x38) == 1.0);
  CHECK(decode(NumberFormat::e4m3, 0x08) == std::ldexp(1.0, -6));
  CHECK(decode(NumberFormat::e4m3, 0x01) == std::ldexp(1.0, -9));
  CHECK(decode(NumberFormat::e4m3, 0x78) == 256.0);  // exponent 15 holds numbers: no infinity
  CHECK(std::isnan(decode(NumberFormat::e4m3, 0x7f)));
  CHECK(std::isnan(decode(NumberFormat::e4m3, 0xff)));
  CHECK(std::signbit(decode(NumberFormat::e4m3, 0x80)));
  // e5m2: bias 15, IEEE-like.
  CHECK(decode(NumberFormat::e5m2, 0x7b) == 57344.0);
  CHECK(decode(NumberFormat::e5m2, 0x7c) == HUGE_VAL);
  CHECK(decode(NumberFormat::e5m2, 0x3c) == 1.0);
  CHECK(decode(NumberFormat::e5m2, 0x01) == std::ldexp(1.0, -16));
  for (uint32_t c : {0x7d, 0x7e, 0x7f, 0xfd}) CHECK(std::isnan(decode(NumberFormat::e5m2, c)));
  // e2m1: bias 1; the whole positive half of the format.
  const double e2m1[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint32_t c = 0; c < 8; ++c) {
    CHECK(decode(NumberFormat::e2m1, c) == e2m1[c]);
    CHECK(decode(NumberFormat::e2m1, c | 8) == -e2m1[c]);
  }
  // e2m3: bias 1, subnormal step 2^0 / 8; e3m2: bias 3, subnormal step 2^-2 / 4.
  CHECK(decode(NumberFormat::e2m3, 0x1f) == 7.5);
  CHECK(decode(NumberFormat::e2m3, 0x01) == 0.125);
  CHECK(decode(NumberFormat::e2m3, 0x08) == 1.0);
  CHECK(decode(NumberFormat::e2m3, 0x3f) == -7.5);
  CHECK(decode(NumberFormat::e3m2, 0x1f) == 28.0);
  CHECK(decode(NumberFormat::e3m2, 0x01) == 0.0625);
  CHECK(decode(NumberFormat::e3m2, 0x0c) == 1.0);
  // ue8m0: 2^(E - 127), no zero, 0xff NaN.
  for (uint32_t c = 0; c < 255; ++c) CHECK(decode(NumberFormat::ue8m0, c) == std::ldexp(1.0, int(c) - 127));
  CHECK(std::isnan(decode(NumberFormat::ue8m0, 0xff)));
  // ue4m3: unsigned e4m3 in 7 bits.
  CHECK(decode(NumberFormat::ue4m3, 0x38) == 1.0);
  CHECK(decode(NumberFormat::ue4m3, 0x7e) == 448.0);
  CHECK(std::isnan(decode(NumberFormat::ue4m3, 0x7f)));
}

TEST_CASE("number formats: widths, limits and canonical NaNs", "[number_formats]") {
  CHECK(format_bits(NumberFormat::tf32) == 32);
  CHECK(format_bits(NumberFormat::e2m1) == 4);
  CHECK(format_bits(NumberFormat::e2m3) == 6);
  CHECK(format_bits(NumberFormat::ue4m3) == 7);
  CHECK(format_bits(NumberFormat::ue8m0) == 8);
  CHECK(largest_finite(NumberFormat::tf32) == std::ldexp(2047.0, 117));
  CHECK(largest_finite(NumberFormat::ue8m0) == std::ldexp(1.0, 127));
  CHECK(smallest_normal(NumberFormat::f32) == std::ldexp(1.0, -126));
  CHECK(smallest_normal(NumberFormat::f16) == std::ldexp(1.0, -14));
  CHECK(canonical_nan(NumberFormat::f16) == 0x7fffu);
  CHECK(canonical_nan(NumberFormat::e4m3) == 0x7fu);
  CHECK(canonical_nan(NumberFormat::e5m2) == 0x7fu);
  CHECK(canonical_nan(NumberFormat::ue8m0) == 0xffu);
  CHECK(!canonical_nan(NumberFormat::e2m1));
  CHECK(parse_number_format("e3m2") == NumberFormat::e3m2);
  CHECK(!parse_number_format("e3m2x2"));
  CHECK(name(NumberFormat::ue4m3) == "ue4m3");
}

TEST_CASE("number formats: the reference decoder agrees with decode on every code", "[number_formats]") {
  for (const Spec& s : specs) {
    INFO(name(s.format));
    for (uint32_t c = 0; c < code_count(s); ++c) {
      INFO(c);
      if (ref_is_nan(s, c)) CHECK(std::isnan(decode(s.format, c)));
      else CHECK(decode(s.format, c) == ref_value(s, c));
    }
  }
  for (uint32_t c = 0; c < 0x10000; ++c)  // bf16 is f32's upper half
    if (!std::isnan(decode(NumberFormat::bf16, c))) CHECK(decode(NumberFormat::bf16, c) == double(std::bit_cast<float>(c << 16)));
#if defined(__FLT16_MAX__)
  for (uint32_t c = 0; c < 0x10000; ++c)
    if (!std::isnan(decode(NumberFormat::f16, c))) CHECK(decode(NumberFormat::f16, c) == double(std::bit_cast<_Float16>(uint16_t(c))));
#endif
}

TEST_CASE("number formats: every code survives decode then encode", "[number_formats]") {
  for (const Spec& s : specs) {
    for (uint32_t c = 0; c < code_count(s); ++c) {
      const uint64_t back = encode(s.format, decode(s.format, c));
      if (ref_is_nan(s, c)) CHECK(back == *canonical_nan(s.format));
      else CHECK(back == c);
    }
  }
  for (uint32_t c = 0; c < 255; ++c) CHECK(encode(NumberFormat::ue8m0, decode(NumberFormat::ue8m0, c), Rounding::rz) == c);
  CHECK(encode(NumberFormat::ue8m0, decode(NumberFormat::ue8m0, 0xff), Rounding::rz) == 0xff);
}

TEST_CASE("number formats: encode matches the brute-force nearest value in every mode", "[number_formats]") {
  for (const Spec& s : specs) {
    const auto values = ref_values(s);
    const auto points = probe_points(values);
    for (Rounding r : {Rounding::rn, Rounding::rna, Rounding::rz, Rounding::rm, Rounding::rp}) {
      for (bool satfinite : {false, true}) {
        size_t mismatches = 0;
        for (double p : points) {
          for (double x : {p, -p}) {
            const uint64_t got = encode(s.format, x, r, satfinite), want = ref_encode(s, values, x, r, satfinite);
            if (got != want && ++mismatches <= 5) FAIL_CHECK(name(s.format) << " x=" << x << " mode=" << int(r) << " sat=" << satfinite << " got " << got << " want " << want);
          }
        }
        CHECK(mismatches == 0);
      }
    }
  }
}

TEST_CASE("number formats: saturation, NaN and relu per format", "[number_formats]") {
  const double nan = std::nan("");
  CHECK(encode(NumberFormat::e4m3, nan, Rounding::rn, true) == 0x7f);
  CHECK(encode(NumberFormat::e5m2, nan, Rounding::rn, true) == 0x7f);
  CHECK(encode(NumberFormat::e2m1, nan, Rounding::rn, true) == 0x7);   // no NaN: +MAX_NORM
  CHECK(encode(NumberFormat::e2m3, -nan, Rounding::rn, true) == 0x1f);
  CHECK(encode(NumberFormat::e3m2, nan, Rounding::rn, true) == 0x1f);
  CHECK(encode(NumberFormat::f16, nan, Rounding::rn, true) == 0x7fff);
  CHECK(encode(NumberFormat::bf16, nan) == 0x7fff);
  CHECK(encode(NumberFormat::tf32, nan, Rounding::rna) == 0x7fffffff);
  CHECK(encode(NumberFormat::f32, nan) == 0x7fffffff);
  // Infinity is beyond MAX_NORM: .satfinite gives MAX_NORM with the sign.
  CHECK(encode(NumberFormat::e4m3, -HUGE_VAL, Rounding::rn, true) == 0xfe);
  CHECK(encode(NumberFormat::e5m2, HUGE_VAL, Rounding::rn, true) == 0x7b);
  CHECK(encode(NumberFormat::f16, HUGE_VAL, Rounding::rn, true) == 0x7bff);
  CHECK(encode(NumberFormat::e5m2, HUGE_VAL) == 0x7c);
  CHECK(encode(NumberFormat::f16, HUGE_VAL, Rounding::rz) == 0x7c00);   // infinity is exact in any mode
  CHECK(encode(NumberFormat::f16, 1e6, Rounding::rz) == 0x7bff);        // finite overflow toward zero
  CHECK(encode(NumberFormat::f16, -1e6, Rounding::rp) == 0xfbff);
  CHECK(encode(NumberFormat::f16, -1e6, Rounding::rm) == 0xfc00);
  // 65520 is halfway from 65504 (odd mantissa) to 65536: ties to even overflows.
  CHECK(encode(NumberFormat::f16, 65520.0) == 0x7c00);
  CHECK(encode(NumberFormat::f16, std::nextafter(65520.0, 0.0)) == 0x7bff);
  // e4m3: 464 is halfway from 448 (mantissa 110, even) to the NaN slot: stays 448; above it overflows.
  CHECK(encode(NumberFormat::e4m3, 464.0, Rounding::rn, true) == 0x7e);
  CHECK(encode(NumberFormat::e4m3, 465.0, Rounding::rn, false) == 0x7f);
  CHECK(encode(NumberFormat::e4m3, 465.0, Rounding::rn, true) == 0x7e);
  // .relu: negatives and -0 become +0; NaN stays NaN.
  CHECK(encode(NumberFormat::f16, -3.0, Rounding::rn, false, true) == 0x0000);
  CHECK(encode(NumberFormat::f16, -0.0, Rounding::rn, false, true) == 0x0000);
  CHECK(encode(NumberFormat::bf16, nan, Rounding::rn, false, true) == 0x7fff);
  CHECK(encode(NumberFormat::e2m1, -6.0, Rounding::rn, true, true) == 0x0);
  CHECK(encode(NumberFormat::e2m1, 2.5, Rounding::rn, true, true) == 0x4);  // tie 2 | 3: even code 0x4
}

TEST_CASE("number formats: ue8m0 rounds the magnitude to a power of two", "[number_formats]") {
  for (int k = -149; k <= 127; ++k) {  // the f32 range, cvt's sources
    for (double m : {1.0, 1.25, 1.5, 1.999}) {
      const double x = std::ldexp(m, k);
      const int down = std::clamp(k + 127, 0, 255), up = std::clamp(k + 127 + (m != 1.0 ? 1 : 0), 0, 255);
      INFO(x);
      for (double v : {x, -x}) {
        CHECK(encode(NumberFormat::ue8m0, v, Rounding::rz) == uint64_t(down));
        CHECK(encode(NumberFormat::ue8m0, v, Rounding::rp) == uint64_t(up));
        CHECK(encode(NumberFormat::ue8m0, v, Rounding::rp, true) == uint64_t(std::min(up, 254)));
      }
    }
  }
  CHECK(encode(NumberFormat::ue8m0, 0.0, Rounding::rz) == 0x00);  // no zero: the least value, 2^-127
  CHECK(encode(NumberFormat::ue8m0, HUGE_VAL, Rounding::rz) == 0xff);
  CHECK(encode(NumberFormat::ue8m0, HUGE_VAL, Rounding::rz, true) == 0xfe);
  CHECK(encode(NumberFormat::ue8m0, std::nan(""), Rounding::rp, true) == 0xff);
}

TEST_CASE("number formats: tf32 from every 4099th f32 against integer rounding of the bits", "[number_formats]") {
  for (uint64_t i = 0; i < (uint64_t(1) << 32); i += 4099) {
    const uint32_t b = uint32_t(i);
    const float f = std::bit_cast<float>(b);
    if (std::isnan(f) || std::isinf(f)) continue;
    const uint32_t rz = b & ~0x1fffu, rna = (b + 0x1000) & ~0x1fffu, rn = (b + 0xfff + ((b >> 13) & 1)) & ~0x1fffu;
    INFO(b);
    CHECK(encode(NumberFormat::tf32, f, Rounding::rz) == rz);
    CHECK(encode(NumberFormat::tf32, f, Rounding::rna) == rna);  // a carry into the exponent is the right result
    CHECK(encode(NumberFormat::tf32, f, Rounding::rn) == rn);
  }
  CHECK(encode(NumberFormat::tf32, std::bit_cast<float>(0x7f7fffffu), Rounding::rn, true) == 0x7f7fe000);
  CHECK(encode(NumberFormat::tf32, std::bit_cast<float>(0x7f7fffffu), Rounding::rn, false) == 0x7f800000);
}

TEST_CASE("number formats: rounding to integral values", "[number_formats]") {
  CHECK(round_to_integral(2.5, Rounding::rn) == 2.0);
  CHECK(round_to_integral(3.5, Rounding::rn) == 4.0);
  CHECK(round_to_integral(-2.5, Rounding::rn) == -2.0);
  CHECK(std::signbit(round_to_integral(-0.3, Rounding::rn)));
  CHECK(round_to_integral(-2.7, Rounding::rz) == -2.0);
  CHECK(round_to_integral(-2.1, Rounding::rm) == -3.0);
  CHECK(round_to_integral(2.1, Rounding::rp) == 3.0);
  CHECK(std::signbit(round_to_integral(-0.5, Rounding::rp)));
  CHECK(round_to_integral(0x1p60 + 4096, Rounding::rn) == 0x1p60 + 4096);
  CHECK(flush_subnormal(NumberFormat::f32, -0x1p-130) == 0.0);
  CHECK(std::signbit(flush_subnormal(NumberFormat::f32, -0x1p-130)));
  CHECK(flush_subnormal(NumberFormat::f32, 0x1p-126) == 0x1p-126);
}

TEST_CASE("number formats: float to integer clamps, NaN per the ISA's rule", "[number_formats]") {
  CHECK(float_to_integer(3e9, Rounding::rz, 32, true, false) == 0x7fffffff);
  CHECK(float_to_integer(-3e9, Rounding::rz, 32, true, false) == 0x80000000);
  CHECK(float_to_integer(-2.7, Rounding::rz, 32, true, false) == 0xfffffffe);
  CHECK(float_to_integer(-1.5, Rounding::rz, 32, false, false) == 0);
  CHECK(float_to_integer(300.0, Rounding::rn, 8, false, false) == 0xff);
  CHECK(float_to_integer(-200.0, Rounding::rn, 8, true, false) == 0x80);
  CHECK(float_to_integer(0x1p64, Rounding::rn, 64, false, false) == ~uint64_t(0));
  CHECK(float_to_integer(0x1p63, Rounding::rn, 64, true, false) == 0x7fffffffffffffff);
  CHECK(float_to_integer(-0x1p63, Rounding::rn, 64, true, false) == 0x8000000000000000);
  CHECK(float_to_integer(2.5, Rounding::rn, 32, true, false) == 2);
  CHECK(float_to_integer(2.1, Rounding::rp, 32, true, false) == 3);
  CHECK(float_to_integer(std::nan(""), Rounding::rn, 32, true, false) == 0);
  CHECK(float_to_integer(std::nan(""), Rounding::rn, 32, true, true) == 0x80000000);
  CHECK(float_to_integer(std::nan(""), Rounding::rn, 64, false, true) == 0x8000000000000000);
}

TEST_CASE("number formats: integer to float rounds once", "[number_formats]") {
  const uint64_t u64_max = ~uint64_t(0);
  CHECK(integer_to_float(NumberFormat::f32, u64_max, 64, false, Rounding::rn) == 0x5f800000);  // 2^64
  CHECK(integer_to_float(NumberFormat::f32, u64_max, 64, false, Rounding::rz) == 0x5f7fffff);
  CHECK(integer_to_float(NumberFormat::f64, u64_max, 64, false, Rounding::rn) == 0x43f0000000000000);
  CHECK(integer_to_float(NumberFormat::f64, u64_max, 64, false, Rounding::rz) == 0x43efffffffffffff);
  // 2^24 + 1 is halfway between two f32s: even is 2^24.
  CHECK(integer_to_float(NumberFormat::f32, 16777217, 32, true, Rounding::rn) == 0x4b800000);
  CHECK(integer_to_float(NumberFormat::f32, 16777217, 32, true, Rounding::rp) == 0x4b800001);
  CHECK(integer_to_float(NumberFormat::f32, uint64_t(-16777217), 32, true, Rounding::rm) == 0xcb800001);
  CHECK(integer_to_float(NumberFormat::f32, uint64_t(-16777217), 32, true, Rounding::rz) == 0xcb800000);
  // -(2^53 + 1) in f64: ties to even -2^53; toward -inf -(2^53 + 2).
  const uint64_t m = uint64_t(-((int64_t(1) << 53) + 1));
  CHECK(integer_to_float(NumberFormat::f64, m, 64, true, Rounding::rn) == 0xc340000000000000);
  CHECK(integer_to_float(NumberFormat::f64, m, 64, true, Rounding::rm) == 0xc340000000000001);
  CHECK(integer_to_float(NumberFormat::f64, m, 64, true, Rounding::rz) == 0xc340000000000000);
  // 2^60 + 2^52 + 1 is just above halfway between bf16 neighbours 2^60 and 2^60 + 2^53: rounding
  // through a double first would see the tie and pick 2^60.
  CHECK(integer_to_float(NumberFormat::bf16, (uint64_t(1) << 60) + (uint64_t(1) << 52) + 1, 64, false, Rounding::rn) == 0x5d81);
  CHECK(integer_to_float(NumberFormat::f16, 70000, 32, true, Rounding::rn) == 0x7c00);
  CHECK(integer_to_float(NumberFormat::f16, 70000, 32, true, Rounding::rz) == 0x7bff);
  CHECK(integer_to_float(NumberFormat::f16, 0x80, 8, true, Rounding::rn) == 0xd800);  // s8 -128
  CHECK(integer_to_float(NumberFormat::f16, 0x80, 8, false, Rounding::rn) == 0x5800);  // u8 128
}
