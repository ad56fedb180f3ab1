// Bit patterns and values of the PTX ISA's floating-point formats: every format is described by
// its exponent and mantissa widths, bias, sign and which encodings it spends on infinity and NaN,
// and one rounding routine serves them all, working on the exact value held in a double.
#include "emulator/number_formats.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace cutejit::emulator {

namespace {

enum class NanEncoding : uint8_t {
  ieee,      // the all-ones exponent: mantissa 0 is infinity, any other mantissa NaN
  all_ones,  // only the all-ones magnitude is NaN; no infinity (e4m3, ue4m3, ue8m0)
  none,      // every encoding is a finite number (e2m1, e2m3, e3m2)
};

struct Layout {
  uint8_t exponent_bits, mantissa_bits;
  uint8_t shift;  // where the value sits in its container: tf32 keeps f32's layout, low 13 bits unused
  int16_t bias;
  bool is_signed;
  NanEncoding nan;
  bool subnormals;  // ue8m0 has no subnormals: exponent field 0 is 2^-127, not zero

  int magnitude_bits() const { return exponent_bits + mantissa_bits; }
  uint64_t magnitude_mask() const { return (uint64_t(1) << magnitude_bits()) - 1; }
  uint64_t infinity() const { return ((uint64_t(1) << exponent_bits) - 1) << mantissa_bits; }
  uint64_t max_finite() const {
    return nan == NanEncoding::ieee ? infinity() - 1 : nan == NanEncoding::all_ones ? magnitude_mask() - 1 : magnitude_mask();
  }
  uint64_t sign_bit() const { return is_signed ? uint64_t(1) << magnitude_bits() : 0; }
  int min_exponent() const { return subnormals ? 1 - bias : -bias; }
};

const Layout& layout(NumberFormat f) {
  static constexpr Layout layouts[] = {
      {11, 52, 0, 1023, true, NanEncoding::ieee, true},    // f64
      {8, 23, 0, 127, true, NanEncoding::ieee, true},      // f32
      {8, 10, 13, 127, true, NanEncoding::ieee, true},     // tf32
      {5, 10, 0, 15, true, NanEncoding::ieee, true},       // f16
      {8, 7, 0, 127, true, NanEncoding::ieee, true},       // bf16
      {4, 3, 0, 7, true, NanEncoding::all_ones, true},     // e4m3
      {5, 2, 0, 15, true, NanEncoding::ieee, true},        // e5m2
      {2, 3, 0, 1, true, NanEncoding::none, true},         // e2m3
      {3, 2, 0, 3, true, NanEncoding::none, true},         // e3m2
      {2, 1, 0, 1, true, NanEncoding::none, true},         // e2m1
      {8, 0, 0, 127, false, NanEncoding::all_ones, false}, // ue8m0
      {4, 3, 0, 7, false, NanEncoding::all_ones, true},    // ue4m3
  };
  return layouts[int(f)];
}

constexpr std::string_view format_names[] = {"f64", "f32", "tf32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue8m0", "ue4m3"};

bool rounds_up(Rounding r, bool negative, double fraction, bool odd) {
  switch (r) {
    case Rounding::rn: return fraction > 0.5 || (fraction == 0.5 && odd);
    case Rounding::rna: return fraction >= 0.5;
    case Rounding::rz: return false;
    case Rounding::rm: return negative && fraction > 0;
    case Rounding::rp: return !negative && fraction > 0;
  }
  return false;
}

/// A finite nonzero magnitude `a` rounded to `l`'s grid; the result may exceed max_finite().
uint64_t round_magnitude(const Layout& l, double a, Rounding r, bool negative) {
  int e;
  std::frexp(a, &e);
  --e;  // a is in [2^e, 2^(e+1))
  const int emin = l.min_exponent();
  if (!l.subnormals && e < emin) return 0;  // nothing below the least value: every rounding gives it
  int q = std::max(e, emin);
  const uint64_t hidden = uint64_t(1) << l.mantissa_bits;
  // a / 2^q in units of the last mantissa bit: below 2^(mantissa_bits + 1), so exact in a double.
  double scaled = std::ldexp(a, l.mantissa_bits - q);
  uint64_t m = uint64_t(scaled);
  if (rounds_up(r, negative, scaled - double(m), m & 1)) ++m;
  if (m == 2 * hidden) m = hidden, ++q;
  if (m < hidden) return m;  // subnormal (or zero)
  const int64_t field = int64_t(q) + l.bias;
  if (field >> (l.exponent_bits + 1)) return l.magnitude_mask() + 1;  // far beyond the range
  return (uint64_t(field) << l.mantissa_bits) | (m - hidden);
}

/// A NaN result; in a format without NaN, .satfinite's +MAX_NORM (the ISA allows no other case).
uint64_t nan_bits(NumberFormat f, const Layout& l) {
  if (l.nan == NanEncoding::none) return l.max_finite();
  if (f == NumberFormat::tf32) return 0x7fffffff;
  return *canonical_nan(f) << l.shift;
}

}  // namespace

std::optional<NumberFormat> parse_number_format(std::string_view s) {
  for (size_t i = 0; i < std::size(format_names); ++i)
    if (format_names[i] == s) return NumberFormat(i);
  return std::nullopt;
}

std::string_view name(NumberFormat f) { return format_names[int(f)]; }

int format_bits(NumberFormat f) {
  const Layout& l = layout(f);
  return l.magnitude_bits() + (l.is_signed ? 1 : 0) + l.shift;
}

double largest_finite(NumberFormat f) { return decode(f, layout(f).max_finite() << layout(f).shift); }

double smallest_normal(NumberFormat f) { return std::ldexp(1.0, layout(f).min_exponent()); }

std::optional<uint64_t> canonical_nan(NumberFormat f) {
  const Layout& l = layout(f);
  switch (l.nan) {
    case NanEncoding::none: return std::nullopt;
    case NanEncoding::all_ones: return l.magnitude_mask();
    case NanEncoding::ieee: return f == NumberFormat::tf32 ? 0x7fffffff : l.magnitude_mask();
  }
  return std::nullopt;
}

double decode(NumberFormat f, uint64_t bits) {
  if (f == NumberFormat::f64) return std::bit_cast<double>(bits);
  if (f == NumberFormat::f32) return std::bit_cast<float>(uint32_t(bits));
  const Layout& l = layout(f);
  const uint64_t v = bits >> l.shift;
  const uint64_t magnitude = v & l.magnitude_mask();
  const uint64_t exponent = magnitude >> l.mantissa_bits, mantissa = magnitude & ((uint64_t(1) << l.mantissa_bits) - 1);
  const bool negative = v & l.sign_bit();
  double x;
  if (l.nan == NanEncoding::ieee && exponent == (uint64_t(1) << l.exponent_bits) - 1)
    x = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (l.nan == NanEncoding::all_ones && magnitude == l.magnitude_mask())
    x = std::numeric_limits<double>::quiet_NaN();
  else if (exponent == 0 && l.subnormals)
    x = std::ldexp(double(mantissa), 1 - l.bias - l.mantissa_bits);
  else
    x = std::ldexp(double(mantissa + (uint64_t(1) << l.mantissa_bits)), int(exponent) - l.bias - l.mantissa_bits);
  return negative && !std::isnan(x) ? -x : x;
}

uint64_t encode(NumberFormat f, double x, Rounding r, bool satfinite, bool relu) {
  if (relu && !std::isnan(x) && std::signbit(x)) x = 0.0;
  if (f == NumberFormat::f64) return std::bit_cast<uint64_t>(x);
  const Layout& l = layout(f);
  if (std::isnan(x)) return nan_bits(f, l);
  if (f == NumberFormat::f32 && r == Rounding::rn && !satfinite) return std::bit_cast<uint32_t>(float(x));
  const bool negative = l.is_signed && std::signbit(x);
  const uint64_t sign = negative ? l.sign_bit() : 0;
  const double a = std::fabs(x);
  if (a == 0) return sign << l.shift;
  uint64_t magnitude = std::isinf(a) ? l.magnitude_mask() + 1 : round_magnitude(l, a, r, negative);
  if (magnitude > l.max_finite()) {
    const bool away = r == Rounding::rn || r == Rounding::rna || (r == Rounding::rp && !negative) || (r == Rounding::rm && negative);
    if (satfinite || (!away && !std::isinf(a)) || l.nan == NanEncoding::none) magnitude = l.max_finite();
    else if (l.nan == NanEncoding::ieee) magnitude = l.infinity();
    else return nan_bits(f, l);
  }
  return (sign | magnitude) << l.shift;
}

double toward_exact(double nearest, double error) {
  if (error == 0 || std::isnan(error) || !std::isfinite(nearest)) return nearest;
  return std::nextafter(nearest, error > 0 ? INFINITY : -INFINITY);
}

double round_f64(double nearest, double error, Rounding r) {
  if (error == 0 || std::isnan(error) || !std::isfinite(nearest)) return nearest;
  const bool exact_is_larger = error > 0;
  switch (r) {
    case Rounding::rn:
    case Rounding::rna: return nearest;
    case Rounding::rz: return exact_is_larger == (nearest < 0) ? std::nextafter(nearest, 0.0) : nearest;
    case Rounding::rm: return exact_is_larger ? nearest : std::nextafter(nearest, -INFINITY);
    case Rounding::rp: return exact_is_larger ? std::nextafter(nearest, INFINITY) : nearest;
  }
  return nearest;
}

double flush_subnormal(NumberFormat f, double x) {
  return x != 0 && std::fabs(x) < smallest_normal(f) ? std::copysign(0.0, x) : x;
}

double round_to_integral(double x, Rounding r) {
  if (!std::isfinite(x) || x == 0) return x;
  const double below = std::floor(x), fraction = x - below;  // exact: |x| >= 2^52 is integral already
  if (fraction == 0) return x;
  bool up = false;
  switch (r) {
    case Rounding::rn: up = fraction > 0.5 || (fraction == 0.5 && std::fmod(below, 2.0) != 0); break;
    case Rounding::rna: up = fraction > 0.5 || (fraction == 0.5 && x > 0); break;
    case Rounding::rz: up = x < 0; break;
    case Rounding::rm: up = false; break;
    case Rounding::rp: up = true; break;
  }
  const double result = up ? below + 1 : below;
  return result == 0 ? std::copysign(0.0, x) : result;
}

uint64_t float_to_integer(double x, Rounding r, int bits, bool is_signed, bool nan_to_sign_bit) {
  const uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  if (std::isnan(x)) return nan_to_sign_bit ? uint64_t(1) << (bits - 1) : 0;
  const double v = round_to_integral(x, r);
  const double low = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
  const double high_exclusive = std::ldexp(1.0, is_signed ? bits - 1 : bits);
  if (v < low) return uint64_t(int64_t(low)) & mask;
  if (v >= high_exclusive) return is_signed ? mask >> 1 : mask;
  return (is_signed ? uint64_t(int64_t(v)) : uint64_t(v)) & mask;
}

uint64_t integer_to_float(NumberFormat f, uint64_t value, int bits, bool is_signed, Rounding r) {
  if (bits < 64) value &= (uint64_t(1) << bits) - 1;
  bool negative = false;
  if (is_signed && bits < 64 && (value >> (bits - 1)) & 1) value |= ~uint64_t(0) << bits;
  if (is_signed && int64_t(value) < 0) negative = true, value = 0 - value;
  double nearest = double(value);
  // The conversion's error, from comparing integers: nearest is 2^64 only when it rounded up.
  double error = nearest >= 0x1p64 ? -1.0 : uint64_t(nearest) < value ? 1.0 : uint64_t(nearest) > value ? -1.0 : 0.0;
  if (negative) nearest = -nearest, error = -error;
  if (f == NumberFormat::f64) return std::bit_cast<uint64_t>(round_f64(nearest, error, r));
  return encode(f, toward_exact(nearest, error), r);
}

}  // namespace cutejit::emulator
