// The element types the library's kernels are instantiated for: the suffix of each kernel's
// name, and the elements one 16-byte vector access moves.
#pragma once

#include <source_location>
#include <string>
#include <type_traits>

#include "cutejit/core/error.hpp"
#include "cutejit/core/types.hpp"

namespace cutejit::kernels::detail {

template <class T>
constexpr const char* element_name() {
  if constexpr (std::is_same_v<T, bf16>) return "bf16";
  else if constexpr (std::is_same_v<T, f16>) return "f16";
  else if constexpr (std::is_same_v<T, f8e4m3>) return "e4m3";
  else return "f32";
}

/// The suffix that tells apart a kernel whose C is not of the operands' usual output type (bf16
/// for bf16 and FP8 operands, f16 for f16): "_c" and C's type; empty otherwise, so the usual
/// kernels keep their names.
template <class TA, class TC>
std::string output_suffix() {
  using Usual = std::conditional_t<std::is_same_v<TA, f16>, f16, bf16>;
  if constexpr (std::is_same_v<TC, Usual>) return "";
  else return std::string("_c") + element_name<TC>();
}

/// Elements of T in 16 bytes.
template <class T>
constexpr int vector = 16 / int(sizeof(T));

/// f(T{}) for the element type T that `element` names (f32, f16 or bf16): the run-time element
/// type of a `*_compile` form to the template that compiles it; any other is an Error naming `op`.
template <class F>
auto with_element(DType element, const std::string& op, const std::source_location& where, F&& f) {
  switch (element) {
    case DType::f32: return f(f32{});
    case DType::f16: return f(f16{});
    case DType::bf16: return f(bf16{});
    default: throw Error("error: " + op + ": elements of " + std::string(name(element)) + "; it takes f32, f16 or bf16", where);
  }
}

}  // namespace cutejit::kernels::detail
