/** \file
 * Integer: one leaf of a shape, stride or coordinate. It is either static (an int64_t known on
 * the host) or dynamic (a traced `Int` of the kernel being traced). Arithmetic folds on the
 * host whenever it can: static with static is computed here, and the identities x+0, x*1,
 * x*0, x/1, x%1 never reach the IR. Only a dynamic operand emits an arith op, so a layout that
 * is static stays entirely host-side and a host program can use the algebra with no kernel.
 *
 * An Integer reads as an `Int` (it has `read`), so it can be used wherever a traced int is
 * expected; it converts implicitly to int64_t only when static (a dynamic one throws an Error
 * naming where the value entered the layout).
 */
#pragma once

#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "cutejit/dsl/value.hpp"

namespace cutejit {

class Integer {
 public:
  Integer() = default;
  template <class T>
    requires(std::integral<T> && !std::same_as<T, bool>)
  Integer(T v) : value_(int64_t(v)) {}  // NOLINT: implicit on purpose
  /// A traced int: dynamic. `where` is where it entered the layout (used for IR locations and errors).
  Integer(const Int& v, detail::Where w = detail::Where::current()) : id_(v.id()), where_(w) {}  // NOLINT
  /// Anything that reads as an Int (a Var<int32_t>, a tensor element).
  template <class R>
    requires(!std::same_as<R, Int> && requires(const R& r) { { r.read(detail::Where::current()) } -> std::same_as<Int>; })
  Integer(const R& r, detail::Where w = detail::Where::current()) : Integer(r.read(w), w) {}  // NOLINT

  bool is_static() const { return id_.trace == 0; }
  bool is_dynamic() const { return id_.trace != 0; }
  /// The static value; throws an Error (naming where the dynamic value came from) otherwise.
  int64_t value() const {
    if (is_dynamic()) dynamic_error();
    return value_;
  }
  operator int64_t() const { return value(); }  // NOLINT: static integers read as plain numbers
  detail::ValueId id() const { return id_; }
  detail::Where where() const { return where_; }
  /// The largest power of two known to divide this integer (static: from its value; dynamic:
  /// what the tracer knows, e.g. from assume_divisible), capped at 2^30.
  int64_t divisor() const;
  /// As a traced Int (a static value becomes a constant at `w`).
  Int read(detail::Where w) const;
  /// True when a and b are provably the same number (equal statics, or the same traced value).
  friend bool same(const Integer& a, const Integer& b) {
    if (a.is_static() != b.is_static()) return false;
    if (a.is_static()) return a.value_ == b.value_;
    return a.id_.trace == b.id_.trace && a.id_.index == b.id_.index;
  }

 private:
  [[noreturn]] void dynamic_error() const;
  int64_t value_ = 0;
  detail::ValueId id_{};
  detail::Where where_{};
};

/// Operands of Integer arithmetic: an Integer and a C++ integer (templates, so that the
/// exact match wins over converting the Integer to int64_t for the built-in operator).
template <class A, class B>
concept IntegerOperands = (std::same_as<A, Integer> || (std::integral<A> && !std::same_as<A, bool>)) &&
                          (std::same_as<B, Integer> || (std::integral<B> && !std::same_as<B, bool>)) &&
                          (std::same_as<A, Integer> || std::same_as<B, Integer>);

namespace detail {
enum class IntegerOp : uint8_t { add, sub, mul, div, rem, min, max, bit_and, bit_xor, ceil_div };
/// Folds on the host when it can, else emits the op (truncating division, as C++; layout
/// integers are non-negative).
Integer integer_op(IntegerOp op, const Integer& a, const Integer& b);
}  // namespace detail

// Templates over IntegerOperands, so that they never compete with the traced Int overloads.
#define CUTEJIT_INTEGER_OP(SIGNATURE, OP)                                        \
  template <class A, class B>                                                    \
    requires IntegerOperands<A, B>                                               \
  Integer SIGNATURE(const A& a, const B& b) {                                    \
    return detail::integer_op(detail::IntegerOp::OP, Integer(a), Integer(b));   \
  }
CUTEJIT_INTEGER_OP(operator+, add)
CUTEJIT_INTEGER_OP(operator-, sub)
CUTEJIT_INTEGER_OP(operator*, mul)
CUTEJIT_INTEGER_OP(operator/, div)
CUTEJIT_INTEGER_OP(operator%, rem)
CUTEJIT_INTEGER_OP(min, min)
CUTEJIT_INTEGER_OP(max, max)
CUTEJIT_INTEGER_OP(bit_and, bit_and)
CUTEJIT_INTEGER_OP(bit_xor, bit_xor)
CUTEJIT_INTEGER_OP(ceil_div, ceil_div)
#undef CUTEJIT_INTEGER_OP

/// a >> bits (bits < 0 shifts left).
Integer shift_right(const Integer& a, int bits);
/// True when a provably divides b (b % a == 0), from static values or known divisors.
bool divides(const Integer& a, const Integer& b);

std::string to_string(const Integer& x);  ///< the value, or "?" when dynamic
std::ostream& operator<<(std::ostream& os, const Integer& x);

}  // namespace cutejit
