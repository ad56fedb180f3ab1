/** \file
 * The PTX ISA's floating-point instructions (9.7.3) and half-precision ones (9.7.4) as a decoded
 * opcode and a function of the source registers' bits, so the interpreter decodes
 * "add.rz.ftz.f32", "fma.rn.relu.bf16x2" or "ex2.approx.ftz.f32" once and applies it per thread.
 *
 * Semantics:
 * - add, sub, mul, fma (mad.rnd is fma), div.rnd, rcp.rnd, sqrt.rnd are correctly rounded in the
 *   instruction's mode (.rn when add/sub/mul omit it): f32 and f64 in the host's IEEE arithmetic
 *   under that rounding mode, restored afterwards; f16 and bf16 (.rn only) from the exact result.
 * - .ftz flushes subnormal inputs and results of the instruction's format (f32; f16 and f16x2;
 *   ex2.approx.ftz.bf16) to zeros of their sign; .sat clamps the result to [0, 1] with NaN -> +0;
 *   .relu (fma on f16/bf16) makes a negative result +0 and keeps NaN.
 * - NaN results are canonical (0x7fffffff, 0x7fff) for f32, f16 and bf16, which the ISA leaves
 *   unspecified; f64 keeps the host's NaN (an input's payload), as the ISA supports payloads there.
 * - min/max: a NaN input loses to a number, two NaNs (or any NaN under .NaN) give NaN; -0 < +0;
 *   .xorsign.abs compares magnitudes and gives the result the XOR of the inputs' signs unless it
 *   is NaN; .abs (the three-input f32 form) compares magnitudes. The three-input form takes c.
 * - abs, neg flip or clear the sign bit (NaN too; abs.f64 passes a NaN unchanged); copysign
 *   d, a, b is b with a's sign; testp gives 1 or 0, zero counting as normal.
 * - the .approx instructions, div.approx and div.full: special_functions.hpp, with the hardware's
 *   stated error bounds.
 * Packed types (f16x2, bf16x2, f32x2) operate per element, element 0 in the low bits.
 * Not covered (parse throws Fault): fma.oob (needs the tensor's OOB NaN).
 */
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "emulator/number_formats.hpp"

namespace cutejit::emulator {

enum class FloatOp : uint8_t { add, sub, mul, fma, div, abs, neg, min, max, rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh, copysign, testp };
enum class FloatTest : uint8_t { finite, infinite, number, notanumber, normal, subnormal };

struct FloatInstruction {
  FloatOp op = FloatOp::add;
  NumberFormat format = NumberFormat::f32;  ///< of each element: f32, f64, f16 or bf16
  uint8_t lanes = 1;                        ///< 2 for f16x2, bf16x2 and f32x2
  /// Width of the sources (and of d, except testp's predicate, returned as 0 or 1).
  uint8_t register_bits = 32;
  uint8_t min_sources = 1, max_sources = 1;  ///< min/max.f32 take 2 or 3
  /// The mixed-precision forms (add, sub, fma .f32.f16 / .f32.bf16, sm_100 on): the first
  /// `narrow_sources` sources (a; a and b for fma) are 16-bit registers of `narrow_format`,
  /// converted exactly to f32; the rest and d are f32.
  uint8_t narrow_sources = 0;
  NumberFormat narrow_format = NumberFormat::f32;

  // The decoded modifiers `execute` reads.
  Rounding rounding = Rounding::rn;
  bool approx = false, full = false, ftz = false, sat = false, relu = false, nan = false, xorsign = false, abs = false;
  FloatTest test = FloatTest::finite;
  uint64_t (*execute)(const FloatInstruction&, std::span<const uint64_t>) = nullptr;

  /// d's bits from the sources' bits (a, b, c in order; only as many as the instruction has).
  uint64_t operator()(std::span<const uint64_t> sources) const { return execute(*this, sources); }
};

/// The instruction for a full dotted opcode; nothing when it is not a floating-point instruction
/// of these sections (an integer add, for one). Throws Fault, naming the opcode, for a modifier
/// the ISA does not allow there or a mandatory one missing.
std::optional<FloatInstruction> parse_float_instruction(std::string_view opcode);

}  // namespace cutejit::emulator
