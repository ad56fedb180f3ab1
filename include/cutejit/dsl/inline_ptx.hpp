/** \file
 * The escape hatch: a PTX statement written by hand inside a traced kernel, as CUDA C++'s
 * `asm volatile` and CuTeDSL's inline_asm offer.
 *
 *     Value<uint32_t> lane = inline_ptx<uint32_t>("mov.u32 $0, %laneid;", "=r");
 *     Value<float> s = inline_ptx<float>("add.rn.f32 $0, $1, $2;", "=f,f,f", x, y);
 *     inline_ptx("st.global.cs.f32 [$0], $1;", "l,f", out_ptr, s);
 *
 * `$0` is the result when there is one, then the operands in order. A constraint per operand,
 * as in CUDA C++: `h` 16-bit, `r` 32-bit, `l` 64-bit, `f` f32, `d` f64; a result's is written
 * with `=`. A global pointer is an `l` operand (its address), a shared one an `r` operand (its
 * shared-window address, for `[$n]` with a `.shared` instruction). The constraints are checked
 * against the operand types at trace time, before anything reaches LLVM. The statement is
 * never moved or removed and clobbers memory, like `asm volatile(... ::: "memory")`.
 */
#pragma once

#include <array>
#include <span>
#include <string_view>
#include <type_traits>

#include "cutejit/dsl/value.hpp"

namespace cutejit {

namespace detail {
/// One operand of inline PTX: a traced value (a C++ number becomes a constant of its type), or
/// a pointer (its address): anything with a state space and an alignment, as tensor/'s Pointer,
/// which this layer below it knows only by that.
struct PtxOperand {
  ValueId id;
  bool pointer = false;
};
/// `result` is absent (void) or the result's element type.
ValueId inline_ptx(std::string_view ptx, std::string_view constraints, const DType* result, std::span<const PtxOperand> operands,
                   Where where);

/// The PTX text, with the user's source location captured where the literal is written.
struct PtxText {
  PtxText(const char* s, Where w = Where::current()) : text(s), where(w) {}
  PtxText(std::string_view s, Where w = Where::current()) : text(s), where(w) {}
  std::string_view text;
  Where where;
};

template <class T>
PtxOperand ptx_operand(const T& v, Where w) {
  if constexpr (requires { v.space(); v.alignment(); })
    return {v.id(), true};
  else if constexpr (std::is_arithmetic_v<T> && Element<T>)
    return {Value<T>(v, w).id()};
  else if constexpr (Traced<T>)
    return {Value<traced_element_t<T>>(v, w).id()};
  else
    static_assert(always_false<T>, "an inline_ptx operand is a traced value (Value<T>, a tensor element, a Var) or a Pointer");
}
}  // namespace detail

/// Emits `ptx` with these operands; returns its result, a Value<R>, unless R is void.
template <class R = void, class... Operands>
  requires(std::is_void_v<R> || Element<R>)
auto inline_ptx(detail::PtxText ptx, std::string_view constraints, const Operands&... operands) {
  const std::array<detail::PtxOperand, sizeof...(Operands)> ops{detail::ptx_operand(operands, ptx.where)...};
  if constexpr (std::is_void_v<R>) {
    detail::inline_ptx(ptx.text, constraints, nullptr, ops, ptx.where);
  } else {
    const DType result = dtype_v<R>;
    return Value<R>(detail::inline_ptx(ptx.text, constraints, &result, ops, ptx.where));
  }
}

}  // namespace cutejit
