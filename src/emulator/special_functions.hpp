/** \file
 * The PTX ISA's approximate instructions, computed accurately: in double from the C++ library,
 * then rounded to nearest in the instruction's format, so the emulated result is within 1 ulp of
 * the exact one (correctly rounded for rcp, sqrt and the divides). The hardware is only as good as
 * the ISA's stated bounds below, so a kernel whose output depends on more than these bounds may
 * see the emulator and a GPU differ by up to that much:
 *
 *   instruction                    the ISA's maximum error of the hardware
 *   ex2.approx{.ftz}.f32           2 ulp from the correctly rounded result, full range
 *   lg2.approx{.ftz}.f32           absolute 2^-22 for a in (0.5, 2); relative 2^-22 elsewhere
 *   rcp.approx{.ftz}.f32           1 ulp, full range
 *   sqrt.approx{.ftz}.f32          relative 2^-23 over the positive finite range
 *   rsqrt.approx{.ftz}.f32         relative 2^-22.9 over the positive finite range
 *   sin/cos.approx{.ftz}.f32       absolute 2^-20.5 in [-2pi, 2pi], 2^-14.7 in [-100pi, 100pi],
 *                                  no guarantee outside
 *   tanh.approx.f32                relative 2^-11 (subnormals pass through unchanged)
 *   tanh.approx.{f16,bf16}{x2}     absolute 2^-10.987 (f16), 2^-8 (bf16)
 *   ex2.approx.{f16,f16x2}         relative 2^-9.9
 *   ex2.approx.ftz.{bf16,bf16x2}   relative 2^-7
 *   div.approx{.ftz}.f32           2 ulp for |b| in [2^-126, 2^126]; for 2^126 < |b| < 2^128 the
 *                                  ISA states a * (1/b) with 1/b flushed: NaN when a is infinite,
 *                                  otherwise a signed zero; emulated as stated
 *   div.full{.ftz}.f32             2 ulp, full range
 *   rcp.approx.ftz.f64,            "gross": from a's upper 32 bits only (1.11.20), result's low
 *   rsqrt.approx.ftz.f64           32 bits zero; emulated as the exact function of that truncated
 *                                  input, rounded to nearest at 20 mantissa bits
 *   rsqrt.approx.f64               no stated bound (emulated in software on the GPU)
 *
 * Special values are the ISA's tables, which are the C++ library's: ex2(-inf) = +0, ex2(+-0) = 1;
 * lg2(+-0) = -inf, lg2(negative) = NaN; rcp(+-0) = +-inf, rcp(+-inf) = +-0; sqrt(-0) = -0;
 * rsqrt(+-0) = +-inf, rsqrt(+inf) = +0; sin(+-0) = +-0; cos(+-0) = 1; sin/cos(+-inf) = NaN;
 * tanh(+-inf) = +-1, tanh(+-0) = +-0; NaN gives NaN. .ftz flushes a subnormal argument of the
 * instruction's format to a zero of its sign before, and a subnormal result after; the f64
 * approximations always do.
 */
#pragma once

#include <cstdint>

#include "emulator/number_formats.hpp"

namespace cutejit::emulator {

enum class ApproxFunction : uint8_t { ex2, lg2, rcp, sqrt, rsqrt, sin, cos, tanh };

/// f(a) rounded to nearest in `format` (f32, f16 or bf16; f64 for rsqrt.approx.f64), as a double.
double approximate(ApproxFunction f, NumberFormat format, double a, bool ftz);

/// div.approx.f32 and div.full.f32 of two f32 values, as a double holding an f32.
double divide_approx(double a, double b, bool ftz);
double divide_full(double a, double b, bool ftz);

/// rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64 (f is rcp or rsqrt) on an f64's bits.
uint64_t approximate_f64_upper(ApproxFunction f, uint64_t a);

}  // namespace cutejit::emulator
