// Floating-point and half-precision instructions: decoding against the ISA's table of which
// modifiers each type takes, and the per-element arithmetic.
#include "emulator/float_arithmetic.hpp"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "emulator/fault.hpp"
#include "emulator/ptx_text.hpp"
#include "emulator/special_functions.hpp"

namespace cutejit::emulator {

namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

/// The host's rounding mode set for one operation. The operands are read, and the result written,
/// through volatiles, so the compiler cannot move the arithmetic out of the mode's scope.
class RoundingScope {
 public:
  explicit RoundingScope(Rounding r) : saved_(std::fegetround()) {
    std::fesetround(r == Rounding::rz ? FE_TOWARDZERO : r == Rounding::rm ? FE_DOWNWARD : r == Rounding::rp ? FE_UPWARD : FE_TONEAREST);
  }
  ~RoundingScope() { std::fesetround(saved_); }
  RoundingScope(const RoundingScope&) = delete;
  RoundingScope& operator=(const RoundingScope&) = delete;

 private:
  int saved_;
};

template <class T>
T ieee(FloatOp op, T a, T b, T c) {
  switch (op) {
    case FloatOp::add: return a + b;
    case FloatOp::sub: return a - b;
    case FloatOp::mul: return a * b;
    case FloatOp::fma: return std::fma(a, b, c);
    case FloatOp::div: return a / b;
    case FloatOp::sqrt: return std::sqrt(a);
    default: return T(1) / a;  // rcp
  }
}

template <class T>
double ieee_rounded(FloatOp op, Rounding r, T a, T b, T c) {
  if (r == Rounding::rn) return ieee<T>(op, a, b, c);
  volatile T va = a, vb = b, vc = c;
  RoundingScope scope(r);
  volatile T result = ieee<T>(op, va, vb, vc);
  return result;
}

/// f16/bf16 add, sub, mul and fma (.rn): the exact result as a double plus the sign of what that
/// double left out, rounded once to the format. Products of these formats are exact in a double.
double half_rounded(FloatOp op, NumberFormat f, double a, double b, double c) {
  double x = a, y = op == FloatOp::sub ? -b : b;
  if (op == FloatOp::mul) return decode(f, encode(f, a * b));
  if (op == FloatOp::fma) x = a * b, y = c;
  const double s = x + y, v = s - x, error = (x - (s - v)) + (y - v);  // TwoSum: s + error == x + y
  return decode(f, encode(f, toward_exact(s, error)));
}

double arithmetic(const FloatInstruction& in, double a, double b, double c) {
  switch (in.format) {
    case NumberFormat::f64: return ieee_rounded<double>(in.op, in.rounding, a, b, c);
    case NumberFormat::f32: return ieee_rounded<float>(in.op, in.rounding, float(a), float(b), float(c));
    default: return half_rounded(in.op, in.format, a, b, c);
  }
}

double min_or_max(const FloatInstruction& in, double a, double b) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb) return in.nan || (na && nb) ? nan_value : na ? b : a;
  const bool want_min = in.op == FloatOp::min;
  if (a == b) return want_min == std::signbit(a) ? a : b;
  return want_min == (a < b) ? a : b;
}

double approximate_op(const FloatInstruction& in, double a) {
  static constexpr ApproxFunction functions[] = {ApproxFunction::rcp, ApproxFunction::sqrt, ApproxFunction::rsqrt, ApproxFunction::sin,
                                                 ApproxFunction::cos, ApproxFunction::lg2,  ApproxFunction::ex2,   ApproxFunction::tanh};
  return approximate(functions[int(in.op) - int(FloatOp::rcp)], in.format, a, in.ftz);
}

/// One element's result as a value of the format (before .sat/.relu/.ftz on the result).
double element(const FloatInstruction& in, const double (&v)[3], size_t n) {
  switch (in.op) {
    case FloatOp::div:
      if (in.approx) return divide_approx(v[0], v[1], false);
      if (in.full) return divide_full(v[0], v[1], false);
      return arithmetic(in, v[0], v[1], 0);
    case FloatOp::rcp:
    case FloatOp::sqrt:
      if (!in.approx) return arithmetic(in, v[0], 0, 0);
      return approximate_op(in, v[0]);
    case FloatOp::rsqrt: case FloatOp::sin: case FloatOp::cos: case FloatOp::lg2: case FloatOp::ex2: case FloatOp::tanh:
      return approximate_op(in, v[0]);
    case FloatOp::min:
    case FloatOp::max: {
      double a = v[0], b = v[1];
      const bool sign = std::signbit(a) != std::signbit(b);
      if (in.abs) a = std::fabs(a), b = std::fabs(b);
      double r = min_or_max(in, a, b);
      if (n > 2) r = min_or_max(in, r, in.abs ? std::fabs(v[2]) : v[2]);
      return in.xorsign && !std::isnan(r) ? std::copysign(r, sign ? -1.0 : 1.0) : r;
    }
    default: return arithmetic(in, v[0], v[1], v[2]);
  }
}

uint64_t mask_of(int bits) { return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }

bool is_subnormal(NumberFormat f, double x) { return x != 0 && std::fabs(x) < smallest_normal(f); }

/// abs, neg and copysign: sign-bit operations on one element's bits.
uint64_t sign_op(const FloatInstruction& in, int bits, uint64_t a, uint64_t b) {
  const uint64_t sign = uint64_t(1) << (bits - 1);
  if (in.ftz && is_subnormal(in.format, decode(in.format, a))) a &= sign;
  switch (in.op) {
    case FloatOp::neg: return a ^ sign;
    case FloatOp::copysign: return (b & ~sign) | (a & sign);
    default: return in.format == NumberFormat::f64 && std::isnan(decode(in.format, a)) ? a : a & ~sign;  // abs
  }
}

bool test(const FloatInstruction& in, double x) {
  switch (in.test) {
    case FloatTest::finite: return std::isfinite(x);
    case FloatTest::infinite: return std::isinf(x);
    case FloatTest::number: return !std::isnan(x);
    case FloatTest::notanumber: return std::isnan(x);
    case FloatTest::normal: return std::isfinite(x) && !is_subnormal(in.format, x);
    case FloatTest::subnormal: return is_subnormal(in.format, x);
  }
  return false;
}

uint64_t execute_elements(const FloatInstruction& in, std::span<const uint64_t> s) {
  const int bits = in.register_bits / in.lanes;
  const uint64_t mask = mask_of(bits);
  const size_t n = std::min<size_t>(s.size(), in.max_sources);
  uint64_t d = 0;
  for (int lane = 0; lane < in.lanes; ++lane) {
    uint64_t e[3] = {};
    for (size_t i = 0; i < n; ++i) e[i] = (s[i] >> (lane * bits)) & mask;
    uint64_t r;
    if (in.op == FloatOp::abs || in.op == FloatOp::neg || in.op == FloatOp::copysign) {
      r = sign_op(in, bits, e[0], e[1]);
    } else if (in.op == FloatOp::testp) {
      return test(in, decode(in.format, e[0]));
    } else {
      double v[3] = {};
      for (size_t i = 0; i < n; ++i) v[i] = decode(in.format, e[i]), v[i] = in.ftz ? flush_subnormal(in.format, v[i]) : v[i];
      for (size_t i = 0; i < in.narrow_sources; ++i) v[i] = decode(in.narrow_format, e[i] & 0xffff);
      double x = element(in, v, n);
      if (in.sat) x = std::isnan(x) || x < 0 ? 0.0 : std::min(x, 1.0);
      if (in.ftz) x = flush_subnormal(in.format, x);
      r = encode(in.format, x, Rounding::rn, false, in.relu);
    }
    d |= (r & mask) << (lane * bits);
  }
  return d;
}

uint64_t execute_f64_approx(const FloatInstruction& in, std::span<const uint64_t> s) {
  return approximate_f64_upper(in.op == FloatOp::rcp ? ApproxFunction::rcp : ApproxFunction::rsqrt, s[0]);
}

// ---- decoding -----------------------------------------------------------------------------------

struct Modifiers {
  std::optional<Rounding> rounding;
  bool approx = false, full = false, ftz = false, sat = false, relu = false, nan = false, xorsign = false, abs = false;
  std::optional<FloatTest> test;
};

[[noreturn]] void refuse(std::string_view opcode, const std::string& why) {
  throw Fault(std::string(opcode.substr(0, opcode.find('.'))) + ": " + why + " in '" + std::string(opcode) + "'");
}


Modifiers read_modifiers(std::string_view opcode, const std::vector<std::string_view>& parts) {
  static constexpr std::pair<std::string_view, Rounding> roundings[] = {
      {"rn", Rounding::rn}, {"rz", Rounding::rz}, {"rm", Rounding::rm}, {"rp", Rounding::rp}};
  static constexpr std::pair<std::string_view, FloatTest> tests[] = {
      {"finite", FloatTest::finite}, {"infinite", FloatTest::infinite}, {"number", FloatTest::number},
      {"notanumber", FloatTest::notanumber}, {"normal", FloatTest::normal}, {"subnormal", FloatTest::subnormal}};
  Modifiers m;
  for (size_t i = 1; i + 1 < parts.size(); ++i) {
    const std::string_view p = parts[i];
    if (auto r = std::find_if(std::begin(roundings), std::end(roundings), [&](auto& e) { return e.first == p; }); r != std::end(roundings)) {
      if (m.rounding) refuse(opcode, "two rounding modifiers");
      m.rounding = r->second;
    } else if (auto t = std::find_if(std::begin(tests), std::end(tests), [&](auto& e) { return e.first == p; }); t != std::end(tests)) {
      m.test = t->second;
    } else if (p == "approx") m.approx = true;
    else if (p == "full") m.full = true;
    else if (p == "ftz") m.ftz = true;
    else if (p == "sat") m.sat = true;
    else if (p == "relu") m.relu = true;
    else if (p == "NaN") m.nan = true;
    else if (p == "xorsign") m.xorsign = true;
    else if (p == "abs") m.abs = true;
    else if (p == "oob") refuse(opcode, ".oob is not covered by the emulated device");
    else refuse(opcode, "unknown modifier ." + std::string(p));
  }
  return m;
}

std::optional<FloatOp> op_named(std::string_view s) {
  static constexpr std::pair<std::string_view, FloatOp> ops[] = {
      {"add", FloatOp::add},   {"sub", FloatOp::sub},     {"mul", FloatOp::mul}, {"fma", FloatOp::fma},   {"mad", FloatOp::fma},
      {"div", FloatOp::div},   {"abs", FloatOp::abs},     {"neg", FloatOp::neg}, {"min", FloatOp::min},   {"max", FloatOp::max},
      {"rcp", FloatOp::rcp},   {"sqrt", FloatOp::sqrt},   {"rsqrt", FloatOp::rsqrt}, {"sin", FloatOp::sin}, {"cos", FloatOp::cos},
      {"lg2", FloatOp::lg2},   {"ex2", FloatOp::ex2},     {"tanh", FloatOp::tanh}, {"copysign", FloatOp::copysign}, {"testp", FloatOp::testp}};
  for (auto& [n, op] : ops)
    if (n == s) return op;
  return std::nullopt;
}

/// The ISA's modifier rules for `in` (op, format, lanes set) given the opcode's modifiers.
void check(std::string_view opcode, const FloatInstruction& in, const Modifiers& m) {
  auto need = [&](bool ok, const char* why) { if (!ok) refuse(opcode, why); };
  const NumberFormat f = in.format;
  const bool f32 = f == NumberFormat::f32 && in.lanes == 1, f64 = f == NumberFormat::f64, f16 = f == NumberFormat::f16,
             bf16 = f == NumberFormat::bf16, half = f16 || bf16, f32x2 = f == NumberFormat::f32 && in.lanes == 2;
  const FloatOp op = in.op;
  const bool arith = op == FloatOp::add || op == FloatOp::sub || op == FloatOp::mul || op == FloatOp::fma;
  const bool rounded_op = arith || ((op == FloatOp::div || op == FloatOp::rcp || op == FloatOp::sqrt) && !m.approx && !m.full);
  need(!m.rounding || rounded_op, "this instruction takes no rounding modifier");
  need(!half || !m.rounding || *m.rounding == Rounding::rn, "half-precision arithmetic rounds .rn only");
  need(!f32x2 || arith, ".f32x2 is for add, sub, mul and fma");
  if (rounded_op && op != FloatOp::add && op != FloatOp::sub && op != FloatOp::mul)
    need(m.rounding.has_value(), "a rounding modifier is mandatory");
  need(!m.ftz || f32 || f32x2 || f16 || (op == FloatOp::ex2 && bf16) || (f64 && m.approx && (op == FloatOp::rcp || op == FloatOp::rsqrt)),
       ".ftz applies to .f32 and .f16 only");
  need(!m.ftz || (op != FloatOp::tanh && !(op == FloatOp::ex2 && f16)), "tanh and ex2.approx.f16 take no .ftz");
  need(!(op == FloatOp::ex2 && bf16) || m.ftz, "ex2.approx on bf16 needs .ftz");
  need(!m.sat || ((op == FloatOp::add || op == FloatOp::sub || op == FloatOp::mul || op == FloatOp::fma) && (f32 || f16)),
       ".sat applies to add, sub, mul and fma on .f32 and .f16");
  need(!m.relu || (op == FloatOp::fma && half && !m.sat), ".relu applies to fma on f16/bf16, without .sat");
  const bool approx_only = op == FloatOp::rsqrt || op == FloatOp::sin || op == FloatOp::cos || op == FloatOp::lg2 || op == FloatOp::ex2 ||
                           op == FloatOp::tanh;
  need(m.approx == approx_only || ((op == FloatOp::div || op == FloatOp::rcp || op == FloatOp::sqrt) && m.approx),
       approx_only ? ".approx is mandatory here" : ".approx does not apply here");
  need(!m.approx || f32 || (half && (op == FloatOp::ex2 || op == FloatOp::tanh)) || (f64 && op == FloatOp::rsqrt) ||
           (f64 && op == FloatOp::rcp && m.ftz),
       "no such approximation for this type");
  need(!(op == FloatOp::sin || op == FloatOp::cos || op == FloatOp::lg2) || f32, "sin, cos and lg2 are .f32 only");
  need(!m.full || (op == FloatOp::div && f32), ".full is div.f32's");
  need(!(op == FloatOp::div && !f32 && !f64), "div is .f32 or .f64");
  need(!((op == FloatOp::rcp || op == FloatOp::sqrt) && half), "rcp and sqrt are .f32 or .f64");
  need(!m.nan || ((op == FloatOp::min || op == FloatOp::max) && !f64), ".NaN applies to min/max other than .f64");
  need(!m.xorsign || m.abs, ".xorsign needs .abs");
  need(!m.abs || m.xorsign || f32, ".abs without .xorsign is the three-input .f32 form's");
  need(!m.abs || ((op == FloatOp::min || op == FloatOp::max) && !f64), ".abs applies to min/max other than .f64");
  need(!(op == FloatOp::copysign || op == FloatOp::testp) || f32 || f64, "copysign and testp are .f32 or .f64");
  need(m.test.has_value() == (op == FloatOp::testp), "testp needs one of .finite .infinite .number .notanumber .normal .subnormal");
}

}  // namespace

std::optional<FloatInstruction> parse_float_instruction(std::string_view opcode) {
  std::vector<std::string_view> parts = split_opcode(opcode);
  const std::optional<FloatOp> op = op_named(parts[0]);
  if (!op || parts.size() < 2) return std::nullopt;
  // Mixed precision, `add{.rnd}{.sat}.f32.atype d, a, c` (sub alike) and
  // `fma.rnd{.sat}.f32.abtype d, a, b, c`, atype f16 or bf16: the narrow sources widened
  // exactly, then the f32 operation.
  NumberFormat narrow = NumberFormat::f32;
  if (parts.size() >= 3 && parts[parts.size() - 2] == "f32" && (parts.back() == "f16" || parts.back() == "bf16")) {
    if (*op != FloatOp::add && *op != FloatOp::sub && *op != FloatOp::fma) refuse(opcode, "mixed precision is for add, sub and fma");
    if (parts[0] == "mad") refuse(opcode, "mixed precision is for add, sub and fma");
    narrow = parts.back() == "f16" ? NumberFormat::f16 : NumberFormat::bf16;
    parts.pop_back();
  }
  static constexpr std::pair<std::string_view, std::pair<NumberFormat, int>> types[] = {
      {"f32", {NumberFormat::f32, 1}},  {"f64", {NumberFormat::f64, 1}},   {"f16", {NumberFormat::f16, 1}}, {"bf16", {NumberFormat::bf16, 1}},
      {"f16x2", {NumberFormat::f16, 2}}, {"bf16x2", {NumberFormat::bf16, 2}}, {"f32x2", {NumberFormat::f32, 2}}};
  auto t = std::find_if(std::begin(types), std::end(types), [&](auto& e) { return e.first == parts.back(); });
  if (t == std::end(types)) return std::nullopt;
  const Modifiers m = read_modifiers(opcode, parts);
  FloatInstruction in;
  in.op = *op, in.format = t->second.first, in.lanes = uint8_t(t->second.second);
  if (parts[0] == "mad" && !m.rounding) refuse(opcode, "mad on floats needs a rounding modifier (sm_20 and later)");
  check(opcode, in, m);
  if (narrow != NumberFormat::f32) {
    if (m.ftz) refuse(opcode, "the mixed-precision forms take no .ftz");
    in.narrow_format = narrow;
    in.narrow_sources = in.op == FloatOp::fma ? 2 : 1;
  }
  in.register_bits = uint8_t(in.lanes * (in.format == NumberFormat::f64 ? 64 : in.format == NumberFormat::f32 ? 32 : 16));
  in.rounding = m.rounding.value_or(Rounding::rn);
  in.approx = m.approx, in.full = m.full, in.ftz = m.ftz, in.sat = m.sat, in.relu = m.relu, in.nan = m.nan, in.xorsign = m.xorsign,
  in.abs = m.abs, in.test = m.test.value_or(FloatTest::finite);
  switch (in.op) {
    case FloatOp::fma: in.min_sources = in.max_sources = 3; break;
    case FloatOp::add: case FloatOp::sub: case FloatOp::mul: case FloatOp::div: case FloatOp::copysign:
      in.min_sources = in.max_sources = 2;
      break;
    case FloatOp::min: case FloatOp::max:
      in.min_sources = 2, in.max_sources = in.format == NumberFormat::f32 && in.lanes == 1 && !in.xorsign ? 3 : 2;
      break;
    default: in.min_sources = in.max_sources = 1; break;
  }
  const bool f64_upper = in.format == NumberFormat::f64 && in.approx && in.ftz;
  in.execute = f64_upper ? execute_f64_approx : execute_elements;
  return in;
}

}  // namespace cutejit::emulator
