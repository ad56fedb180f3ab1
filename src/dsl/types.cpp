#include "cutejit/dsl/types.hpp"

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
}  // namespace

f16::f16(float x) : bits(float_to_half_bits(x)) {}
f16::operator float() const { return half_bits_to_float(bits); }

bf16::bf16(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffff) > 0x7f800000) bits = uint16_t((u >> 16) | 0x40);  // quiet NaN
  else bits = uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
bf16::operator float() const { return std::bit_cast<float>(uint32_t(bits) << 16); }

std::string_view name(DType t) {
  static constexpr std::string_view names[] = {"i1", "i8", "i16", "i32", "i64", "u32", "u64", "f16", "bf16", "f32", "f64"};
  return names[int(t)];
}

int size_in_bytes(DType t) {
  static constexpr int sizes[] = {1, 1, 2, 4, 8, 4, 8, 2, 2, 4, 8};
  return sizes[int(t)];
}

bool is_float(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64; }
bool is_signed(DType t) { return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64; }

}  // namespace cutejit
