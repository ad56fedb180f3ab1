/** \file
 * The floating-point formats of the PTX ISA as bits and exact values: what a bit pattern of
 * f16, bf16, tf32, the FP8/FP6/FP4 formats or a scale factor is worth, and which bit pattern a
 * value rounds to under each rounding mode and saturation the ISA defines (sections 5.2.3
 * "Alternate Floating-Point Data Formats", 6.5 "Type Conversion" and 9.7.9.21 "cvt").
 * cvt, the half-precision arithmetic and the matrix instructions' operands and scale factors all
 * read and write these formats; defining them once, from the ISA, keeps them consistent.
 *
 * The formats (value of a normal number (-1)^s * 1.m * 2^(e - bias), subnormals 0.m * 2^(1 - bias)):
 *   f32, f64       IEEE binary32/binary64.
 *   f16            IEEE binary16: 5 exponent bits (bias 15), 10 mantissa bits; max 65504.
 *   bf16           8 exponent bits (bias 127), 7 mantissa bits; f32's upper half.
 *   tf32           f32's range with 10 mantissa bits, held in a 32-bit container. The ISA calls
 *                  its layout implementation defined; cvt here writes f32's layout with the low 13
 *                  bits zero (as CUTLASS's tfloat32_t stores it), and decoding ignores those bits.
 *   e4m3           4 exponent bits (bias 7), 3 mantissa bits; no infinity, NaN only S.1111.111
 *                  (0x7f/0xff); max 448 (0x7e).
 *   e5m2           5 exponent bits (bias 15), 2 mantissa bits, IEEE-like: inf 0x7c, max 57344.
 *   e2m3, e3m2     FP6 in the low 6 bits of a byte; no infinity or NaN; max 7.5 and 28.
 *   e2m1           FP4 in the low 4 bits; no infinity or NaN; values 0 .5 1 1.5 2 3 4 6.
 *   ue8m0          unsigned, 8 exponent bits (bias 127), no mantissa and no zero: 2^(e - 127),
 *                  0x00 is 2^-127; 0xff is the only NaN; no infinity.
 *   ue4m3          unsigned e4m3 in the low 7 bits of a byte; NaN 0x7f; max 448.
 *
 * Saturation (.satfinite): a NaN stays NaN where the format has one (canonical: 0x7fff for f16
 * and bf16, 0x7f for e4m3/e5m2, 0xff for ue8m0, 0x7fffffff for f32 and tf32) and becomes +MAX_NORM
 * in e2m1/e2m3/e3m2, which have none; a magnitude above MAX_NORM, infinity included, becomes
 * MAX_NORM with its sign. Without .satfinite, overflow is IEEE's: to infinity under .rn/.rna and
 * when rounding away from zero, to MAX_NORM when rounding toward zero; the ISA makes .satfinite
 * mandatory for every destination without an infinity, so only this function's callers that
 * bypass cvt see the fallback (NaN where the format has one, otherwise MAX_NORM with the sign).
 * ue8m0 has no sign: a conversion takes the magnitude, as CUDA's host conversion to e8m0 does
 * (the ISA does not say what a negative input gives).
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cutejit::emulator {

enum class NumberFormat : uint8_t { f64, f32, tf32, f16, bf16, e4m3, e5m2, e2m3, e3m2, e2m1, ue8m0, ue4m3 };

/// The ISA's floating-point rounding modifiers (.rn .rna .rz .rm .rp); the integer roundings
/// .rni .rzi .rmi .rpi are the same directions applied at the units digit.
enum class Rounding : uint8_t { rn, rna, rz, rm, rp };

/// The format a PTX type suffix names ("f16", "e4m3", "ue8m0", ...), without the x2/x4 packing.
std::optional<NumberFormat> parse_number_format(std::string_view name);
std::string_view name(NumberFormat format);

/// Bits a value occupies (e2m1: 4, e2m3: 6, ue4m3: 7, tf32: 32).
int format_bits(NumberFormat format);
/// The largest finite value, and the smallest positive normal one (what .ftz flushes below).
double largest_finite(NumberFormat format);
double smallest_normal(NumberFormat format);
/// The NaN this module produces in `format`; nothing for e2m1/e2m3/e3m2, which have no NaN.
std::optional<uint64_t> canonical_nan(NumberFormat format);

/// The exact value of `bits` (bits above the format's width are ignored).
double decode(NumberFormat format, uint64_t bits);

/// `value` rounded to `format` by `rounding`, as its bit pattern; `satfinite` and `relu` as
/// the cvt modifiers (relu: negative results, -0 included, become +0 and a NaN stays NaN).
/// f64 takes `value` as it is (rounding is the caller's: see round_f64).
uint64_t encode(NumberFormat format, double value, Rounding rounding = Rounding::rn, bool satfinite = false,
                bool relu = false);

/// For a result known as `nearest` (correctly rounded to double) plus a nonzero `error` far
/// below its ulp, the neighbouring double on the error's side: it lies in the same interval
/// between the representable numbers and midpoints of any format of at most 51 significant bits
/// as the exact result does, so encode() rounds it as it would round the exact result.
double toward_exact(double nearest, double error);
/// The same exact result rounded to double by `rounding`: `nearest`, or its neighbour.
double round_f64(double nearest, double error, Rounding rounding);

/// `x` with a subnormal of `format` replaced by a zero of its sign (.ftz).
double flush_subnormal(NumberFormat format, double x);
/// `x` rounded to an integral value in the direction of `rounding` (.rni .rzi .rmi .rpi);
/// zero keeps the sign of `x`, and infinities and NaN pass through.
double round_to_integral(double x, Rounding rounding);

/// cvt float to integer: `x` rounded to integral, clamped to the `bits`-wide integer's range,
/// in two's complement in the low `bits`. NaN gives 0, or 1 << (bits - 1) when `nan_to_sign_bit`
/// (the ISA's rule for an f64 source or a 64-bit destination).
uint64_t float_to_integer(double x, Rounding rounding, int bits, bool is_signed, bool nan_to_sign_bit);
/// cvt integer to float: the `bits`-wide integer in the low bits of `value` (sign-extended when
/// `is_signed`), rounded once to `format`.
uint64_t integer_to_float(NumberFormat format, uint64_t value, int bits, bool is_signed, Rounding rounding);

}  // namespace cutejit::emulator
