#include "cutejit/dsl/narrow_floats.hpp"

#include "cutejit/core/error.hpp"

#include <cmath>
#include <cstring>
#include <string>

namespace cutejit {

namespace {
/// A small float format without infinities: `e` exponent bits of `bias`, `m` mantissa bits,
/// magnitudes 0 .. `max_code` (codes above it, if any, are NaN).
struct Format {
  int e, m, bias, max_code;
};
constexpr Format fp4{2, 1, 1, 0x7}, fp6_e2m3{2, 3, 1, 0x1f}, fp6_e3m2{3, 2, 3, 0x1f}, e4m3_magnitude{4, 3, 7, 0x7e};

float magnitude(const Format& f, int code) {
  const int exponent = code >> f.m, mantissa = code & ((1 << f.m) - 1);
  if (exponent == 0) return std::ldexp(float(mantissa), 1 - f.bias - f.m);  // subnormal
  return std::ldexp(1.0f + std::ldexp(float(mantissa), -f.m), exponent - f.bias);
}

/// The code nearest |x| (ties to the even code), saturating at max_code.
int nearest(const Format& f, float a) {
  if (a >= magnitude(f, f.max_code)) return f.max_code;
  int code = 0;
  while (code < f.max_code && magnitude(f, code + 1) <= a) ++code;
  if (code == f.max_code) return code;
  const float below = magnitude(f, code), above = magnitude(f, code + 1);
  if (a - below < above - a) return code;
  if (a - below > above - a) return code + 1;
  return code % 2 == 0 ? code : code + 1;
}

/// A signed format: the sign in the bit above the magnitude; NaN becomes +max.
uint8_t encode_signed(const Format& f, float x) {
  if (std::isnan(x)) return uint8_t(f.max_code);
  const int sign = std::signbit(x) ? 1 << (f.e + f.m) : 0;
  return uint8_t(sign | nearest(f, std::fabs(x)));
}

float decode_signed(const Format& f, uint8_t bits) {
  const float v = magnitude(f, bits & ((1 << (f.e + f.m)) - 1));
  return bits >> (f.e + f.m) & 1 ? -v : v;
}
}  // namespace

std::vector<uint8_t> pack_e2m1(std::span<const float> values, const std::source_location& where) {
  if (values.size() % 2 != 0)
    throw Error("pack_e2m1 packs FP4 values two to a byte; " + std::to_string(values.size()) +
                    " values leave the last byte half full (a packed FP4 tensor's extent is even: pad it)",
                where);
  std::vector<uint8_t> packed(values.size() / 2);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = e2m1x2(e2m1(values[2 * i]), e2m1(values[2 * i + 1])).bits;
  return packed;
}

std::vector<float> unpack_e2m1(std::span<const uint8_t> packed) {
  std::vector<float> values;
  values.reserve(2 * packed.size());
  for (uint8_t b : packed) {
    e2m1x2 pair;
    pair.bits = b;
    values.push_back(float(pair.first()));
    values.push_back(float(pair.second()));
  }
  return values;
}

e2m1::e2m1(float x) : bits(encode_signed(fp4, x)) {}
e2m1::operator float() const { return decode_signed(fp4, bits & 0xf); }
e2m3::e2m3(float x) : bits(encode_signed(fp6_e2m3, x)) {}
e2m3::operator float() const { return decode_signed(fp6_e2m3, bits & 0x3f); }
e3m2::e3m2(float x) : bits(encode_signed(fp6_e3m2, x)) {}
e3m2::operator float() const { return decode_signed(fp6_e3m2, bits & 0x3f); }

ue4m3::ue4m3(float x) {
  if (std::isnan(x)) bits = 0x7f;
  else bits = std::signbit(x) ? 0 : uint8_t(nearest(e4m3_magnitude, x));
}
ue4m3::operator float() const { return (bits & 0x7f) == 0x7f ? NAN : magnitude(e4m3_magnitude, bits & 0x7f); }

ue8m0::ue8m0(float x, bool round_up) {
  if (std::isnan(x)) {
    bits = 0xff;
    return;
  }
  if (!(x > std::ldexp(1.0f, -127))) {  // zero, negatives, and 2^-127 itself: the smallest scale
    bits = 0;
    return;
  }
  if (std::isinf(x)) {
    bits = 0xfe;
    return;
  }
  int exponent = 0;
  const float fraction = std::frexp(x, &exponent);  // x = fraction * 2^exponent, fraction in [0.5, 1)
  int code = exponent - 1 + 127;                      // floor(log2 x) + bias
  if (round_up && fraction != 0.5f) ++code;
  bits = uint8_t(code < 0 ? 0 : code > 0xfe ? 0xfe : code);
}
ue8m0::operator float() const { return bits == 0xff ? NAN : std::ldexp(1.0f, int(bits) - 127); }

}  // namespace cutejit
