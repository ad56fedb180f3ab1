/** \file
 * Traced values. A `Value<T>` is a handle to one SSA value of the kernel being traced; every
 * operator on it appends IR and records the user's source line. Mixing element types without
 * `cast<T>` does not compile: the operators take two operands of the same `T`, and a C++
 * number converts only to the `T` of the value it meets.
 *
 * A C++ number becomes a constant of any element type: `BF16 z = 0.0f`, `x(i) * 2.0f` on a
 * bf16 tensor, `x(i) = 0.5` on an FP8 one. A floating-point T takes any number, rounded at
 * trace time to T's nearest value, ties to even, in one rounding from the number as written
 * (a double is not rounded to f32 first): exact where T represents it, FP8 saturating to its
 * largest finite value as cvt.rn.satfinite does. An integer T takes the numbers that convert
 * to it in C++.
 */
#pragma once

#include <concepts>
#include <source_location>

#include "cutejit/dsl/constexpr.hpp"
#include "cutejit/dsl/trace_api.hpp"
#include "cutejit/core/types.hpp"

namespace cutejit {

template <Element T> class Value;
template <Element T> class Operand;

namespace detail {
/// Every traced type that can be read as a Value<T> (values, memory references, variables)
/// derives from this, which gives it the arithmetic operators as hidden friends.
template <Element T> struct Arithmetic;

template <Element T>
T traced_element(const Arithmetic<T>*);
/// A traced value, or anything that reads as one (a tensor element, a Var, an Operand).
template <class R>
concept Traced = requires { traced_element(static_cast<const R*>(nullptr)); };
template <class R>
using traced_element_t = decltype(traced_element(static_cast<const std::remove_cvref_t<R>*>(nullptr)));
/// A traced reference: reads as a Value<T> but is not one (a tensor element, a Var). Every
/// function that takes a Value<T> takes these too, reading them first.
template <class R>
concept TracedReference = Traced<R> && !std::same_as<R, Value<traced_element_t<R>>> && requires(const R& r) {
  { r.read(Where::current()) } -> std::same_as<Value<traced_element_t<R>>>;
};
template <class A, class B>
concept MixedElements = Traced<A> && Traced<B> && !std::same_as<traced_element_t<A>, traced_element_t<B>>;
template <class>
inline constexpr bool always_false = false;
/// A traced value of another element type than T: assigning one is a compile error, alone.
template <class R, class T>
concept OtherElement = Traced<R> && !std::same_as<traced_element_t<R>, T>;
#define CUTEJIT_ASSIGNMENT_OF_OTHER_ELEMENT                                                                          \
  "cutejit: the value assigned has a different element type than the variable or element it is assigned to; "      \
  "convert it with cast<T>(x) first"
}  // namespace detail

/// A C++ number that can be a constant of element type T (see the file comment).
template <class U, class T>
concept ConstantOf = std::is_arithmetic_v<U> && (std::is_convertible_v<U, T> || is_floating_v<T>);

/// An operand of a traced operation: a traced value, or a C++ number that becomes a constant.
/// Its constructors capture the user's source location, which is how operators know theirs.
template <Element T>
class Operand : public detail::Arithmetic<T> {
 public:
  Operand(const Value<T>& v, detail::Where w = detail::Where::current());
  template <ConstantOf<T> U>
  Operand(U c, detail::Where w = detail::Where::current()) : where(w) {
    if constexpr (std::is_floating_point_v<T>)
      id = detail::constant_float(dtype_v<T>, double(T(c)), w);
    else if constexpr (is_floating_v<T>)  // f16, bf16, FP8: rounded by the tracer, from the number as written
      id = detail::constant_float(dtype_v<T>, double(c), w);
    else
      id = detail::constant_int(dtype_v<T>, int64_t(T(c)), w);
  }
  /// A static kernel parameter is a constant too.
  template <class U>
    requires std::is_convertible_v<U, T>
  Operand(Constexpr<U> c, detail::Where w = detail::Where::current()) : Operand(U(c), w) {}
  /// Anything that reads as a Value<T> (a memory reference, a Var) converts through it.
  template <class R>
    requires requires(const R& r) { { r.read(detail::Where::current()) } -> std::same_as<Value<T>>; }
  Operand(const R& r, detail::Where w = detail::Where::current()) : Operand(r.read(w), w) {}

  detail::ValueId id;
  detail::Where where;
};

namespace detail {

template <Element T>
Value<T> make_binary(BinaryOp op, const Operand<T>& a, const Operand<T>& b) {
  return Value<T>(binary(op, a.id, b.id, a.where));
}
template <Element T>
auto make_compare(CompareOp op, const Operand<T>& a, const Operand<T>& b) {
  return Value<bool>(compare(op, a.id, b.id, a.where));
}

template <Element T>
struct Arithmetic {
  friend auto operator+(const Operand<T>& a, const Operand<T>& b) { return make_binary(BinaryOp::add, a, b); }
  friend auto operator-(const Operand<T>& a, const Operand<T>& b) { return make_binary(BinaryOp::sub, a, b); }
  friend auto operator*(const Operand<T>& a, const Operand<T>& b) { return make_binary(BinaryOp::mul, a, b); }
  friend auto operator/(const Operand<T>& a, const Operand<T>& b) { return make_binary(BinaryOp::div, a, b); }
  friend auto operator%(const Operand<T>& a, const Operand<T>& b)
    requires is_integer_v<T> { return make_binary(BinaryOp::rem, a, b); }
  friend auto operator&(const Operand<T>& a, const Operand<T>& b)
    requires is_integer_v<T> { return make_binary(BinaryOp::bit_and, a, b); }
  friend auto operator|(const Operand<T>& a, const Operand<T>& b)
    requires is_integer_v<T> { return make_binary(BinaryOp::bit_or, a, b); }
  friend auto operator^(const Operand<T>& a, const Operand<T>& b)
    requires is_integer_v<T> { return make_binary(BinaryOp::bit_xor, a, b); }
  friend auto operator<<(const Operand<T>& a, const Operand<T>& b)
    requires is_integer_v<T> { return make_binary(BinaryOp::shl, a, b); }
  friend auto operator>>(const Operand<T>& a, const Operand<T>& b)
    requires is_integer_v<T> { return make_binary(BinaryOp::shr, a, b); }
  friend auto operator&&(const Operand<T>& a, const Operand<T>& b)
    requires std::same_as<T, bool> { return make_binary(BinaryOp::bit_and, a, b); }
  friend auto operator||(const Operand<T>& a, const Operand<T>& b)
    requires std::same_as<T, bool> { return make_binary(BinaryOp::bit_or, a, b); }

  friend auto operator-(const Operand<T>& a) { return Value<T>(unary(UnaryOp::neg, a.id, a.where)); }
  friend auto operator~(const Operand<T>& a)
    requires is_integer_v<T> { return Value<T>(unary(UnaryOp::bit_not, a.id, a.where)); }
  friend auto operator!(const Operand<T>& a)
    requires std::same_as<T, bool> { return Value<bool>(unary(UnaryOp::bit_not, a.id, a.where)); }

  friend auto operator==(const Operand<T>& a, const Operand<T>& b) { return make_compare(CompareOp::eq, a, b); }
  friend auto operator!=(const Operand<T>& a, const Operand<T>& b) { return make_compare(CompareOp::ne, a, b); }
  friend auto operator<(const Operand<T>& a, const Operand<T>& b) { return make_compare(CompareOp::lt, a, b); }
  friend auto operator<=(const Operand<T>& a, const Operand<T>& b) { return make_compare(CompareOp::le, a, b); }
  friend auto operator>(const Operand<T>& a, const Operand<T>& b) { return make_compare(CompareOp::gt, a, b); }
  friend auto operator>=(const Operand<T>& a, const Operand<T>& b) { return make_compare(CompareOp::ge, a, b); }

  friend auto min(const Operand<T>& a, const Operand<T>& b) { return make_binary(BinaryOp::min, a, b); }
  friend auto max(const Operand<T>& a, const Operand<T>& b) { return make_binary(BinaryOp::max, a, b); }
  friend auto select(const Operand<bool>& c, const Operand<T>& a, const Operand<T>& b) {
    return Value<T>(detail::select(c.id, a.id, b.id, c.where));
  }
};

}  // namespace detail

template <Element T>
class Value : public detail::Arithmetic<T> {
 public:
  using element_type = T;
  Value() = default;
  explicit Value(detail::ValueId id) : id_(id) {}
  /// A C++ number becomes a traced constant.
  template <ConstantOf<T> U>
  Value(U c, detail::Where w = detail::Where::current()) : id_(Operand<T>(c, w).id) {}
  template <class R>
    requires requires(const R& r) { { r.read(detail::Where::current()) } -> std::same_as<Value<T>>; }
  Value(const R& r, detail::Where w = detail::Where::current()) : id_(r.read(w).id()) {}

  detail::ValueId id() const { return id_; }
  Value read(detail::Where) const { return *this; }
  template <detail::OtherElement<T> R>
  Value& operator=(const R&) {
    static_assert(detail::always_false<R>, CUTEJIT_ASSIGNMENT_OF_OTHER_ELEMENT);
    return *this;
  }

 private:
  detail::ValueId id_;
};

template <Element T>
Operand<T>::Operand(const Value<T>& v, detail::Where w) : id(v.id()), where(w) {}

using Bool = Value<bool>;
using Int = Value<int32_t>;
using Int64 = Value<int64_t>;
using UInt = Value<uint32_t>;
using F16 = Value<f16>;
using BF16 = Value<bf16>;
using F32 = Value<float>;
using F64 = Value<double>;

/// Converts between element types (int <-> float, widening, narrowing, f32 <-> f16/bf16).
template <Element To, Element From>
Value<To> cast(const Value<From>& v, detail::Where w = detail::Where::current()) {
  return Value<To>(detail::cast(v.id(), dtype_v<To>, w));
}
/// Reinterprets the bits of a value as another type of the same width.
template <Element To, Element From>
  requires(sizeof(To) == sizeof(From))
Value<To> bitcast(const Value<From>& v, detail::Where w = detail::Where::current()) {
  return Value<To>(detail::bitcast(v.id(), dtype_v<To>, w));
}


template <Element To, detail::TracedReference R>
Value<To> cast(const R& r, detail::Where w = detail::Where::current()) {
  return cast<To>(r.read(w), w);
}
template <Element To, detail::TracedReference R>
  requires(sizeof(To) == sizeof(detail::traced_element_t<R>))
Value<To> bitcast(const R& r, detail::Where w = detail::Where::current()) {
  return bitcast<To>(r.read(w), w);
}

// Two traced operands of different element types: one clear error instead of every operator's
// candidate list. cutejit never converts implicitly; cast<T> says which way. Assignments
// (Value, Var, tensor elements) have their own, in their classes.
#define CUTEJIT_MIXED_ELEMENTS(FUNCTION)                                                                             \
  template <class A, class B>                                                                                       \
    requires detail::MixedElements<A, B>                                                                            \
  Value<detail::traced_element_t<A>> FUNCTION(const A&, const B&) {                                                 \
    static_assert(detail::always_false<A>,                                                                          \
                  "cutejit: these operands have different element types; convert one with cast<T>(x) first");       \
    return {};                                                                                                      \
  }
CUTEJIT_MIXED_ELEMENTS(operator+)
CUTEJIT_MIXED_ELEMENTS(operator-)
CUTEJIT_MIXED_ELEMENTS(operator*)
CUTEJIT_MIXED_ELEMENTS(operator/)
CUTEJIT_MIXED_ELEMENTS(operator%)
CUTEJIT_MIXED_ELEMENTS(operator&)
CUTEJIT_MIXED_ELEMENTS(operator|)
CUTEJIT_MIXED_ELEMENTS(operator^)
CUTEJIT_MIXED_ELEMENTS(operator<<)
CUTEJIT_MIXED_ELEMENTS(operator>>)
CUTEJIT_MIXED_ELEMENTS(operator==)
CUTEJIT_MIXED_ELEMENTS(operator!=)
CUTEJIT_MIXED_ELEMENTS(operator<)
CUTEJIT_MIXED_ELEMENTS(operator<=)
CUTEJIT_MIXED_ELEMENTS(operator>)
CUTEJIT_MIXED_ELEMENTS(operator>=)
CUTEJIT_MIXED_ELEMENTS(min)
CUTEJIT_MIXED_ELEMENTS(max)
#undef CUTEJIT_MIXED_ELEMENTS

/// Two floats to an FP8 pair in one instruction (cvt.rn.satfinite.e4m3x2/e5m2x2.f32: rounded to
/// nearest, saturated to the largest finite value), `lo` in the low byte: the 16 bits of two
/// neighbouring FP8 elements, for one 2-byte store. sm_89 and newer.
template <Element To>
  requires(std::is_same_v<To, f8e4m3> || std::is_same_v<To, f8e5m2>)
Value<int16_t> cast_pair(const Value<float>& lo, const Value<float>& hi, detail::Where w = detail::Where::current()) {
  return Value<int16_t>(detail::cast_fp8_pair(lo.id(), hi.id(), dtype_v<To>, w));
}

/// Tells the compiler that an integer is a multiple of `divisor` (a power of two). This is a
/// promise: it lets vector loads and stores be proven aligned. A wrong promise is undefined.
template <Element T>
  requires is_integer_v<T>
Value<T> assume_divisible(const Value<T>& v, int64_t divisor, detail::Where w = detail::Where::current()) {
  return Value<T>(detail::assume_divisible(v.id(), divisor, w));
}

}  // namespace cutejit
