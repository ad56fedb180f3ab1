/** \file
 * Dynamic control flow. A plain C++ `if` or `for` runs at trace time (a `for` over C++ ints
 * unrolls); these combinators emit branches and loops that run on the GPU. Values assigned
 * inside them must live in a `Var` (or a register array): an SSA `Value` made inside a region
 * is not visible after it.
 */
#pragma once

#include <utility>

#include "cutejit/dsl/value.hpp"

namespace cutejit {

/// Returned by `if_` so that an `else_` can follow: `if_(c, [&]{...}).else_([&]{...});`
class IfThen {
 public:
  explicit IfThen(uint32_t op) : op_(op) {}
  template <class F>
  void else_(F&& body, detail::Where w = detail::Where::current()) {
    detail::begin_else(op_, w);
    std::forward<F>(body)();
    detail::end_if_region();
  }

 private:
  uint32_t op_;
};

template <class F>
IfThen if_(const Operand<bool>& cond, F&& then, detail::Where w = detail::Where::current()) {
  uint32_t op = detail::begin_if(cond.id, w);
  std::forward<F>(then)();
  detail::end_if_region();
  return IfThen(op);
}

/// Loop hints: `Unroll{0}` leaves the choice to LLVM, `Unroll{1}` forbids unrolling,
/// `Unroll{n}` asks for a factor of n.
struct Unroll {
  int factor = 0;
};

/// for (i = lo; i < hi; i += step) body(i), with a positive step: a constant step of 0 or less
/// is an error at the caller's line, and a dynamic one runs the body no times (docs/dsl.md).
template <Element T, class F>
  requires is_integer_v<T>
void for_(const Operand<T>& lo, const Operand<T>& hi, const Operand<T>& step, F&& body, Unroll unroll = {},
          detail::Where w = detail::Where::current()) {
  Value<T> i(detail::begin_for(lo.id, hi.id, step.id, unroll.factor, w));
  std::forward<F>(body)(i);
  detail::end_for();
}
template <class F>
void for_(const Operand<int32_t>& lo, const Operand<int32_t>& hi, const Operand<int32_t>& step, F&& body,
          Unroll unroll = {}, detail::Where w = detail::Where::current()) {
  for_<int32_t>(lo, hi, step, std::forward<F>(body), unroll, w);
}
template <class F>
void for_(const Operand<int32_t>& lo, const Operand<int32_t>& hi, F&& body, detail::Where w = detail::Where::current()) {
  for_<int32_t>(lo, hi, Operand<int32_t>(1, w), std::forward<F>(body), Unroll{}, w);
}

/// while (cond()) body(); `cond` is traced once, into the loop header.
template <class C, class F>
void while_(C&& cond, F&& body, detail::Where w = detail::Where::current()) {
  detail::begin_while(w);
  Value<bool> c = std::forward<C>(cond)();
  detail::while_condition(c.id(), w);
  std::forward<F>(body)();
  detail::end_while();
}

}  // namespace cutejit
