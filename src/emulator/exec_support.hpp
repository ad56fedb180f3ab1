/** \file
 * Small helpers the instruction families share: reading an operand as a typed value,
 * sign extension, and the bit patterns of f32/f64.
 */
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "emulator/machine.hpp"
#include "emulator/number_formats.hpp"

namespace cutejit::emulator {

inline uint64_t mask_bits(uint64_t v, int bits) { return bits >= 64 ? v : v & ((uint64_t(1) << bits) - 1); }
inline int64_t sign_extend(uint64_t v, int bits) {
  if (bits >= 64) return int64_t(v);
  uint64_t m = uint64_t(1) << (bits - 1);
  v = mask_bits(v, bits);
  return int64_t((v ^ m) - m);
}
inline float as_f32(uint64_t v) { return std::bit_cast<float>(uint32_t(v)); }
inline double as_f64(uint64_t v) { return std::bit_cast<double>(v); }
inline uint64_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
inline uint64_t bits_of(double d) { return std::bit_cast<uint64_t>(d); }

/// The number format of a scalar float type (f16, bf16, f32, f64).
inline NumberFormat format_of(Type t) {
  switch (t) {
    case Type::f16: return NumberFormat::f16;
    case Type::bf16: return NumberFormat::bf16;
    case Type::f64: return NumberFormat::f64;
    default: return NumberFormat::f32;
  }
}

/// For an .aligned warp instruction: true once all 32 lanes are at it (then it runs once for
/// all); until then it holds the lanes that are. A lane that exited, or lanes that disagree on
/// the guard, are faults.
bool whole_warp(ExecContext& c);

/// Ends the threads of `lanes` (exit, or ret from a kernel): collectives and barriers waiting
/// for them look again.
void exit_lanes(ExecContext& c, uint32_t lanes);

/// A decoder's convenience: binds `fn` and says the opcode was taken.
inline bool bind(Instruction& in, Execute fn, uint16_t op = 0) {
  in.execute = fn;
  in.op = op;
  return true;
}

}  // namespace cutejit::emulator
