// Integer: static-or-dynamic layout integers. Static operands fold on the host; identities
// fold at trace time; only what is left emits arith ops into the kernel being traced.
#include <cutejit/layout/integer.hpp>

#include <cutejit/core/error.hpp>

#include <bit>
#include <climits>
#include <cstdlib>
#include <ostream>

namespace cutejit {

namespace {

constexpr int64_t max_divisor = int64_t(1) << 30;

int64_t lowest_bit(int64_t v) {
  if (v == 0) return max_divisor;
  return std::min(max_divisor, int64_t(1) << std::countr_zero(uint64_t(std::llabs(v))));
}

/// The location to give an op: that of its (first) dynamic operand.
detail::Where where_of(const Integer& a, const Integer& b) { return a.is_dynamic() ? a.where() : b.where(); }

detail::ValueId traced(const Integer& x, detail::Where w) {
  if (x.is_dynamic()) return x.id();
  int64_t v = x.value();
  if (v < INT32_MIN || v > INT32_MAX)
    throw Error("the static integer " + std::to_string(v) +
                    " is combined with a traced (32-bit) value but does not fit in 32 bits (layouts of traced "
                    "tensors index with int32)",
                w);
  return detail::constant_int(DType::i32, v, w);
}

Integer emit(detail::BinaryOp op, const Integer& a, const Integer& b) {
  detail::Where w = where_of(a, b);
  return Integer(Int(detail::binary(op, traced(a, w), traced(b, w), w)), w);
}

bool is(const Integer& x, int64_t v) { return x.is_static() && x.value() == v; }

}  // namespace

void Integer::dynamic_error() const {
  throw Error(
      "this layout computation needs a static integer, but the value is dynamic (a traced Int that entered the "
      "layout here); give a static value, or use an operation that accepts dynamic leaves",
      where_);
}

int64_t Integer::divisor() const {
  if (is_static()) return lowest_bit(value_);
  return detail::known_divisor(id_);
}

Int Integer::read(detail::Where w) const { return Int(traced(*this, w)); }

namespace detail {

Integer integer_op(IntegerOp op, const Integer& a, const Integer& b) {
  bool both = a.is_static() && b.is_static();
  switch (op) {
    case IntegerOp::add:
      if (both) return a.value() + b.value();
      if (is(a, 0)) return b;
      if (is(b, 0)) return a;
      return emit(BinaryOp::add, a, b);
    case IntegerOp::sub:
      if (both) return a.value() - b.value();
      if (is(b, 0)) return a;
      if (same(a, b)) return 0;
      return emit(BinaryOp::sub, a, b);
    case IntegerOp::mul:
      if (both) return a.value() * b.value();
      if (is(a, 0) || is(b, 0)) return 0;
      if (is(a, 1)) return b;
      if (is(b, 1)) return a;
      return emit(BinaryOp::mul, a, b);
    case IntegerOp::div:
      if (is(b, 0)) throw Error("division by zero in a layout computation", where_of(a, b));
      if (both) return a.value() / b.value();
      if (is(b, 1)) return a;
      if (is(a, 0)) return 0;
      if (same(a, b)) return 1;
      return emit(BinaryOp::div, a, b);
    case IntegerOp::rem:
      if (is(b, 0)) throw Error("remainder by zero in a layout computation", where_of(a, b));
      if (both) return a.value() % b.value();
      if (is(b, 1) || is(a, 0) || same(a, b)) return 0;
      return emit(BinaryOp::rem, a, b);
    case IntegerOp::min:
      if (both) return std::min(a.value(), b.value());
      if (same(a, b)) return a;
      return emit(BinaryOp::min, a, b);
    case IntegerOp::max:
      if (both) return std::max(a.value(), b.value());
      if (same(a, b)) return a;
      return emit(BinaryOp::max, a, b);
    case IntegerOp::bit_and:
      if (both) return a.value() & b.value();
      if (is(a, 0) || is(b, 0)) return 0;
      return emit(BinaryOp::bit_and, a, b);
    case IntegerOp::bit_xor:
      if (both) return a.value() ^ b.value();
      if (is(a, 0)) return b;
      if (is(b, 0)) return a;
      return emit(BinaryOp::bit_xor, a, b);
    case IntegerOp::ceil_div:
      if (both) {
        if (b.value() == 0) throw Error("ceil_div: division by zero (" + std::to_string(a.value()) + " / 0)");
        return (a.value() + b.value() - 1) / b.value();
      }
      if (divides(b, a)) return a / b;  // exact: no rounding term to emit
      return (a + b - 1) / b;
  }
  return 0;
}

}  // namespace detail

Integer shift_right(const Integer& a, int bits) {
  if (a.is_static()) return bits >= 0 ? a.value() >> bits : a.value() << -bits;
  if (bits == 0) return a;
  return emit(bits > 0 ? detail::BinaryOp::shr : detail::BinaryOp::shl, a, Integer(std::abs(bits)));
}

bool divides(const Integer& a, const Integer& b) {
  if (a.is_static() && b.is_static()) return a.value() != 0 && b.value() % a.value() == 0;
  if (same(a, b) || is(a, 1) || is(b, 0)) return true;
  if (a.is_static()) {
    int64_t d = std::llabs(a.value());
    return d != 0 && b.divisor() % d == 0;
  }
  return false;
}

std::string to_string(const Integer& x) { return x.is_static() ? std::to_string(x.value()) : "?"; }
std::ostream& operator<<(std::ostream& os, const Integer& x) { return os << to_string(x); }

}  // namespace cutejit
