/** \file
 * The microscaling formats of Blackwell's block-scaled MMAs (OCP MX and NVFP4), stored as their
 * bits on the host, with conversions that round as the GPU's `cvt.rn.satfinite` does:
 *
 *   e2m1 (FP4)   sign, 2 exponent bits (bias 1), 1 mantissa bit: +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}
 *   e2m3 (FP6)   sign, 2 exponent bits (bias 1), 3 mantissa bits: largest 7.5
 *   e3m2 (FP6)   sign, 3 exponent bits (bias 3), 2 mantissa bits: largest 28
 *   ue8m0        a scale: 2^(bits - 127), 0xFF NaN, no zero, no sign
 *   ue4m3        a scale: E4M3 without its sign (bias 7, largest 448, 0x7F NaN)
 *
 * FP4 and FP6 have no infinities or NaN: converting rounds to nearest even, saturates beyond the
 * largest value (sign kept) and turns NaN into +largest. `e2m1x2` is two FP4 values in a byte,
 * element 0 in the low nibble: the order of the k64 block-scaled mma.sync operands.
 *
 * On the GPU (the sm_100 and sm_120 families' "a" and "f" targets) `cvt_e2m1x2` and kin convert
 * pairs of f32 values with one cvt each.
 */
#pragma once

#include <cstdint>
#include <source_location>
#include <span>
#include <utility>
#include <vector>

#include "cutejit/dsl/value.hpp"

namespace cutejit {

struct e2m1 {
  uint8_t bits = 0;  ///< the low 4 bits
  e2m1() = default;
  explicit e2m1(float x);
  explicit operator float() const;
};

struct e2m3 {
  uint8_t bits = 0;  ///< the low 6 bits
  e2m3() = default;
  explicit e2m3(float x);
  explicit operator float() const;
};

struct e3m2 {
  uint8_t bits = 0;  ///< the low 6 bits
  e3m2() = default;
  explicit e3m2(float x);
  explicit operator float() const;
};

/// A power-of-two scale. Converting a float rounds toward zero (`round_up`: toward +infinity),
/// as cvt.rz / cvt.rp.satfinite.ue8m0x2 do: finite values beyond 2^127 saturate to 2^127 and
/// anything at or below 2^-127 (zero, negatives) becomes 2^-127; NaN stays NaN (0xFF).
struct ue8m0 {
  uint8_t bits = 127;  ///< 1.0
  ue8m0() = default;
  explicit ue8m0(float x, bool round_up = false);
  explicit operator float() const;
};

/// An unsigned E4M3 scale: rounds to nearest even, saturates to 448, negatives become 0.
struct ue4m3 {
  uint8_t bits = 0;  ///< the low 7 bits
  ue4m3() = default;
  explicit ue4m3(float x);
  explicit operator float() const;
};

/// Two FP4 values in one byte: element 0 in bits 0-3, element 1 in bits 4-7.
struct e2m1x2 {
  uint8_t bits = 0;
  e2m1x2() = default;
  e2m1x2(e2m1 first, e2m1 second) : bits(uint8_t((first.bits & 0xf) | (second.bits & 0xf) << 4)) {}
  e2m1 first() const { e2m1 e; e.bits = bits & 0xf; return e; }
  e2m1 second() const { e2m1 e; e.bits = bits >> 4; return e; }
};

/// Floats as packed FP4, two to a byte (e2m1x2), as the FP4 operands of the block-scaled MMAs
/// are stored: a K-major row of K values becomes K / 2 bytes. An odd count is an error: a
/// packed tensor holds whole pairs.
std::vector<uint8_t> pack_e2m1(std::span<const float> values, const std::source_location& where = std::source_location::current());
/// The floats a packed FP4 tensor holds, two per byte.
std::vector<float> unpack_e2m1(std::span<const uint8_t> packed);

// ---- on the GPU ----

namespace detail {
/// The packing conversions: cvt.rn.satfinite.{e2m1x2,e2m3x2,e3m2x2}.f32 and
/// cvt.{rz,rp}.satfinite.ue8m0x2.f32 of (first, second), first in the low bits, as the bits of a u32.
enum class NarrowPack { e2m1x2, e2m3x2, e3m2x2, ue8m0x2_rz, ue8m0x2_rp };
ValueId narrow_pack(NarrowPack kind, ValueId first, ValueId second, Where where);
/// cvt.rn.f16x2.e2m1x2: an FP4 pair back to two f32 (through f16x2, exact), first from the low bits.
std::pair<ValueId, ValueId> narrow_unpack_e2m1x2(ValueId packed, Where where);
}  // namespace detail

/// Two f32 to FP4 (e2m1x2, in the low byte): one cvt.rn.satfinite.e2m1x2.f32.
inline Value<uint32_t> cvt_e2m1x2(const F32& first, const F32& second, detail::Where w = detail::Where::current()) {
  return Value<uint32_t>(detail::narrow_pack(detail::NarrowPack::e2m1x2, first.id(), second.id(), w));
}
/// Two f32 to FP6, one per byte of the low 16 bits (e2m3 or e3m2).
inline Value<uint32_t> cvt_e2m3x2(const F32& first, const F32& second, detail::Where w = detail::Where::current()) {
  return Value<uint32_t>(detail::narrow_pack(detail::NarrowPack::e2m3x2, first.id(), second.id(), w));
}
inline Value<uint32_t> cvt_e3m2x2(const F32& first, const F32& second, detail::Where w = detail::Where::current()) {
  return Value<uint32_t>(detail::narrow_pack(detail::NarrowPack::e3m2x2, first.id(), second.id(), w));
}
/// Two f32 to UE8M0 scales, one per byte of the low 16 bits, rounding toward zero or up.
inline Value<uint32_t> cvt_ue8m0x2(const F32& first, const F32& second, bool round_up = false,
                                   detail::Where w = detail::Where::current()) {
  return Value<uint32_t>(detail::narrow_pack(round_up ? detail::NarrowPack::ue8m0x2_rp : detail::NarrowPack::ue8m0x2_rz, first.id(),
                                             second.id(), w));
}
/// The FP4 pair in the low byte of `packed` back to two f32.
inline std::pair<F32, F32> cvt_from_e2m1x2(const Value<uint32_t>& packed, detail::Where w = detail::Where::current()) {
  auto [a, b] = detail::narrow_unpack_e2m1x2(packed.id(), w);
  return {F32(a), F32(b)};
}

}  // namespace cutejit
