// The approximate instructions, evaluated in double and rounded once to the instruction's
// format: a double result is within half a double ulp of exact, far inside one ulp of any format
// these instructions produce.
#include "emulator/special_functions.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace cutejit::emulator {

namespace {

double in_format(NumberFormat f, double x) { return f == NumberFormat::f64 ? x : decode(f, encode(f, x)); }

}  // namespace

double approximate(ApproxFunction f, NumberFormat format, double a, bool ftz) {
  if (ftz) a = flush_subnormal(format, a);
  double r = 0;
  switch (f) {
    case ApproxFunction::ex2: r = std::exp2(a); break;
    case ApproxFunction::lg2: r = std::log2(a); break;
    case ApproxFunction::rcp: r = 1.0 / a; break;
    case ApproxFunction::sqrt: r = std::sqrt(a); break;
    case ApproxFunction::rsqrt: r = 1.0 / std::sqrt(a); break;
    case ApproxFunction::sin: r = std::sin(a); break;
    case ApproxFunction::cos: r = std::cos(a); break;
    case ApproxFunction::tanh: r = std::tanh(a); break;
  }
  r = in_format(format, r);
  return ftz ? flush_subnormal(format, r) : r;
}

double divide_approx(double a, double b, bool ftz) {
  if (ftz) a = flush_subnormal(NumberFormat::f32, a), b = flush_subnormal(NumberFormat::f32, b);
  // a * (1/b), where 1/b is below the normal range and flushed: the ISA's statement for this range.
  double r = std::isfinite(b) && std::fabs(b) > 0x1p126 ? a * std::copysign(0.0, b) : in_format(NumberFormat::f32, a / b);
  return ftz ? flush_subnormal(NumberFormat::f32, r) : r;
}

double divide_full(double a, double b, bool ftz) {
  if (ftz) a = flush_subnormal(NumberFormat::f32, a), b = flush_subnormal(NumberFormat::f32, b);
  const double r = in_format(NumberFormat::f32, a / b);
  return ftz ? flush_subnormal(NumberFormat::f32, r) : r;
}

uint64_t approximate_f64_upper(ApproxFunction f, uint64_t bits) {
  constexpr uint64_t canonical = 0x7fffffff00000000;
  const double t = flush_subnormal(NumberFormat::f64, std::bit_cast<double>(bits & 0xffffffff00000000));
  const double r = flush_subnormal(NumberFormat::f64, f == ApproxFunction::rcp ? 1.0 / t : 1.0 / std::sqrt(t));
  if (std::isnan(r)) return canonical;
  uint64_t u = std::bit_cast<uint64_t>(r);
  const uint64_t dropped = u & 0xffffffff;
  u -= dropped;
  if (dropped > 0x80000000 || (dropped == 0x80000000 && ((u >> 32) & 1))) u += uint64_t(1) << 32;
  return u;
}

}  // namespace cutejit::emulator
