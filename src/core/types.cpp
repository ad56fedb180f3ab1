#include "cutejit/core/types.hpp"

#include <bit>
#include <cmath>

namespace cutejit {

namespace {
// Round-to-nearest-even conversions, so host references match what the GPU's cvt.rn produces.
uint16_t float_to_half_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return uint16_t(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return uint16_t(sign);
    mant |= 0x800000;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1), midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return uint16_t(half);
}
float half_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) return std::bit_cast<float>(sign) + (sign ? -1.0f : 1.0f) * std::ldexp(float(mant), -24);
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}
// An OCP FP8 format: `mantissa` bits of fraction, exponent `bias`, the largest finite
// encoding `max_code` (sign clear) and the NaN a conversion produces.
struct Fp8Format {
  int mantissa, bias;
  uint8_t max_code, nan_code;
  bool has_infinity;  // E5M2: exponent all ones is infinity/NaN; E4M3: only S.1111.111 is NaN
};
constexpr Fp8Format e4m3{3, 7, 0x7e, 0x7f, false};
constexpr Fp8Format e5m2{2, 15, 0x7b, 0x7f, true};

double fp8_magnitude(uint8_t code, const Fp8Format& f) {
  int exponent = (code & 0x7f) >> f.mantissa, fraction = code & ((1 << f.mantissa) - 1);
  int emin = 1 - f.bias;
  if (exponent == 0) return std::ldexp(double(fraction), emin - f.mantissa);  // subnormal
  return std::ldexp(double((1 << f.mantissa) + fraction), exponent - f.bias - f.mantissa);
}

float fp8_to_float(uint8_t code, const Fp8Format& f) {
  double sign = (code & 0x80) ? -1.0 : 1.0;
  int exponent = (code & 0x7f) >> f.mantissa, fraction = code & ((1 << f.mantissa) - 1);
  int top = (1 << (7 - f.mantissa)) - 1;
  if (f.has_infinity && exponent == top) return fraction ? std::nanf("") : float(sign * INFINITY);
  if (!f.has_infinity && (code & 0x7f) == 0x7f) return std::nanf("");
  return float(sign * fp8_magnitude(code, f));
}

// Round to nearest even, saturating (".satfinite"): what cvt.rn.satfinite.{e4m3,e5m2}x2.f32 does.
uint8_t float_to_fp8(float x, const Fp8Format& f) {
  if (std::isnan(x)) return f.nan_code;
  uint8_t sign = std::signbit(x) ? 0x80 : 0;
  double a = std::fabs(double(x));
  // The largest finite value is itself representable, so only magnitudes at or beyond it saturate.
  if (a >= fp8_magnitude(f.max_code, f)) return uint8_t(sign | f.max_code);
  if (a == 0) return sign;
  int emin = 1 - f.bias;
  int e = std::ilogb(a);  // a = m * 2^e with m in [1, 2)
  if (e < emin) e = emin;  // subnormals share the smallest normal exponent's quantum
  // a / quantum is exact (a power-of-two scaling of a float in a double); nearbyint rounds half
  // to even in the default rounding mode.
  double n = std::nearbyint(std::ldexp(a, f.mantissa - e));
  int one = 1 << f.mantissa;
  if (n >= 2 * one) n /= 2, ++e;          // rounded up into the next binade
  if (n < one) return uint8_t(sign | int(n));  // subnormal (e == emin) or rounded to zero
  return uint8_t(sign | (e + f.bias) << f.mantissa | (int(n) - one));
}
}  // namespace

f8e4m3::f8e4m3(float x) : bits(float_to_fp8(x, e4m3)) {}
f8e4m3::operator float() const { return fp8_to_float(bits, e4m3); }
f8e5m2::f8e5m2(float x) : bits(float_to_fp8(x, e5m2)) {}
f8e5m2::operator float() const { return fp8_to_float(bits, e5m2); }

f16::f16(float x) : bits(float_to_half_bits(x)) {}
f16::operator float() const { return half_bits_to_float(bits); }

bf16::bf16(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffff) > 0x7f800000) bits = uint16_t((u >> 16) | 0x40);  // quiet NaN
  else bits = uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
bf16::operator float() const { return std::bit_cast<float>(uint32_t(bits) << 16); }

std::string_view name(DType t) {
  static constexpr std::string_view names[] = {"i1", "i8", "i16", "i32", "i64", "u32", "u64", "f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2", "u8", "u16"};
  return names[int(t)];
}

int size_in_bytes(DType t) {
  static constexpr int sizes[] = {1, 1, 2, 4, 8, 4, 8, 2, 2, 4, 8, 1, 1, 1, 2};
  return sizes[int(t)];
}

bool is_float(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64 || is_fp8(t);
}
bool is_fp8(DType t) { return t == DType::f8e4m3 || t == DType::f8e5m2; }
bool is_signed(DType t) { return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64; }

}  // namespace cutejit
