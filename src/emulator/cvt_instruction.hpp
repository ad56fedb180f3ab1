/** \file
 * The cvt and cvt.pack instructions (PTX ISA 9.7.9.21 and 9.7.9.22) as a decoded opcode and a
 * function of the source registers' bits. The interpreter hands over the full dotted opcode once,
 * when it decodes the instruction, and applies the result per thread; the rules of which
 * rounding, saturation and types the ISA allows together are checked here, at decode.
 *
 * What each form does:
 *   integer -> integer       chop to the destination, or clamp with .sat.
 *   float -> integer         .rni/.rzi/.rmi/.rpi (mandatory), clamped to the destination's range;
 *                            NaN gives 0, or 1 << (width - 1) for an f64 source or a 64-bit
 *                            destination; .ftz flushes an f32 subnormal source first.
 *   integer -> float         rounded once by .rn/.rz/.rm/.rp (mandatory).
 *   float -> float           narrowing rounds by the mandatory .rn/.rz/.rm/.rp; widening is exact
 *                            (a rounding modifier there is accepted and has no effect); the same
 *                            type with .rni/.rzi/.rmi/.rpi rounds to an integral value. .ftz flushes
 *                            f32 subnormal sources and results; .sat clamps to [0, 1] (NaN -> +0;
 *                            -0 stays -0); .relu and .satfinite (f32 to f16/bf16 with .rn/.rz, and
 *                            tf32) as number_formats.hpp describes.
 *   f32 -> tf32              .rna{.satfinite} or .rn/.rz{.satfinite}{.relu}.
 *   pairs                    cvt.{rn,rz}.f16x2/bf16x2.f32 d, a, b: a to d's upper half, b to the
 *                            lower. cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2,e2m3x2,e3m2x2}.f32
 *                            d, a, b: a to the upper byte (FP6 in its low 6 bits, the top 2 zero),
 *                            b to the lower; .e2m1x2: a to the upper nibble of d's byte. The FP8
 *                            pairs also from one f16x2 (or bf16x2) register, upper half to upper
 *                            byte. cvt.{rz,rp}{.satfinite}.ue8m0x2.f32 d, a, b and .ue8m0x2.bf16x2.
 *                            .satfinite is mandatory for FP8/FP6/FP4 destinations.
 *   unpacking                cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2,e2m3x2,e3m2x2,e2m1x2} and
 *                            cvt.rn.bf16x2.ue8m0x2: exact, upper source element to d's upper
 *                            half. An FP6 byte whose top 2 bits are not zero is a Fault.
 *   cvt.pack.sat.{u16,s16}.s32 d, a, b and cvt.pack.sat.{u8,s8,u4,s4,u2,s2}.s32.b32 d, a, b, c:
 *                            a and b clamped to the type, a above b in d's low bits, c's low bits
 *                            above them.
 * Not covered (parse_cvt throws Fault naming them): .rs stochastic rounding and the x4
 * destinations that need it (sm_100a/sm_103a only).
 */
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "emulator/number_formats.hpp"

namespace cutejit::emulator {

/// One of cvt's operand types: an integer of `bits` bits or a float of `format`.
struct CvtType {
  bool is_float = false;
  bool is_signed = false;
  uint8_t bits = 0;
  NumberFormat format = NumberFormat::f32;
};

/// A decoded cvt or cvt.pack: the operand widths the interpreter needs, and the conversion.
struct Conversion {
  /// Width of d's instruction type; a wider destination register gets the result zero-extended,
  /// or sign-extended when `destination_signed`.
  uint8_t destination_bits = 0;
  bool destination_signed = false;
  /// Width of each source's instruction type (only a register's low bits are read), and how many
  /// sources the instruction takes: a; a, b; or a, b, c.
  uint8_t source_bits = 0;
  uint8_t sources = 1;

  // The decoded modifiers `convert` reads.
  CvtType to, from;  ///< for pairs: the element types
  Rounding rounding = Rounding::rn;
  bool integer_rounding = false, ftz = false, sat = false, satfinite = false, relu = false;
  uint64_t (*convert)(const Conversion&, std::span<const uint64_t>) = nullptr;

  /// d's bits (in the low destination_bits) from the sources' bits, in operand order.
  uint64_t operator()(std::span<const uint64_t> operands) const { return convert(*this, operands); }
};

/// The conversion for a full dotted opcode ("cvt.rn.satfinite.e4m3x2.f32", "cvt.rzi.s32.f32",
/// "cvt.pack.sat.u8.s32.b32"); nothing when the opcode is not cvt. Throws Fault, naming the
/// opcode, for a cvt the ISA does not define (a missing mandatory modifier, a modifier the types
/// do not take) or that the emulated device does not cover.
std::optional<Conversion> parse_cvt(std::string_view opcode);

}  // namespace cutejit::emulator
