/** \file
 * Math on traced floating-point values. The plain names are IEEE-accurate (libdevice); the
 * `fast::` ones map to the GPU's approximate hardware instructions (ex2.approx, rsqrt.approx,
 * tanh.approx, ...) where NVVM has them, for kernels that can take their error bounds.
 */
#pragma once

#include "cutejit/dsl/value.hpp"

namespace cutejit {

#define CUTEJIT_FLOAT_UNARY(NAME, OP)                                                          \
  template <Element T>                                                                         \
    requires is_floating_v<T>                                                                  \
  Value<T> NAME(const Value<T>& x, detail::Where w = detail::Where::current()) {               \
    return Value<T>(detail::unary(detail::UnaryOp::OP, x.id(), w));                            \
  }                                                                                            \
  template <detail::TracedReference R>                                                         \
    requires is_floating_v<detail::traced_element_t<R>>                                        \
  Value<detail::traced_element_t<R>> NAME(const R& x, detail::Where w = detail::Where::current()) { \
    return Value<detail::traced_element_t<R>>(detail::unary(detail::UnaryOp::OP, x.read(w).id(), w)); \
  }

CUTEJIT_FLOAT_UNARY(exp, exp)
CUTEJIT_FLOAT_UNARY(exp2, exp2)
CUTEJIT_FLOAT_UNARY(log, log)
CUTEJIT_FLOAT_UNARY(log2, log2)
CUTEJIT_FLOAT_UNARY(sqrt, sqrt)
CUTEJIT_FLOAT_UNARY(rsqrt, rsqrt)
CUTEJIT_FLOAT_UNARY(sin, sin)
CUTEJIT_FLOAT_UNARY(cos, cos)
CUTEJIT_FLOAT_UNARY(tanh, tanh)

namespace fast {
CUTEJIT_FLOAT_UNARY(exp, fast_exp)
CUTEJIT_FLOAT_UNARY(exp2, fast_exp2)
CUTEJIT_FLOAT_UNARY(log2, fast_log2)
CUTEJIT_FLOAT_UNARY(sqrt, fast_sqrt)
CUTEJIT_FLOAT_UNARY(rsqrt, fast_rsqrt)
CUTEJIT_FLOAT_UNARY(sin, fast_sin)
CUTEJIT_FLOAT_UNARY(cos, fast_cos)
CUTEJIT_FLOAT_UNARY(tanh, fast_tanh)
CUTEJIT_FLOAT_UNARY(reciprocal, fast_reciprocal)
}  // namespace fast

#undef CUTEJIT_FLOAT_UNARY

/// |x| for floats and signed integers.
template <Element T>
Value<T> abs(const Value<T>& x, detail::Where w = detail::Where::current()) {
  return Value<T>(detail::unary(detail::UnaryOp::abs, x.id(), w));
}

template <detail::TracedReference R>
Value<detail::traced_element_t<R>> abs(const R& x, detail::Where w = detail::Where::current()) {
  return abs(x.read(w), w);
}

/// a * b + c with a single rounding.
template <Element T>
  requires is_floating_v<T>
Value<T> fma(const Value<T>& a, const std::type_identity_t<Operand<T>>& b, const std::type_identity_t<Operand<T>>& c,
             detail::Where w = detail::Where::current()) {
  return Value<T>(detail::fma(a.id(), b.id, c.id, w));
}
template <detail::TracedReference R, class T = detail::traced_element_t<R>>
  requires is_floating_v<T>
Value<T> fma(const R& a, const std::type_identity_t<Operand<T>>& b, const std::type_identity_t<Operand<T>>& c,
             detail::Where w = detail::Where::current()) {
  return fma(a.read(w), b, c, w);
}

}  // namespace cutejit
