// The element types the library's kernels are instantiated for: the suffix of each kernel's
// name, and the elements one 16-byte vector access moves.
#pragma once

#include <type_traits>

#include "cutejit/core/error.hpp"
#include "cutejit/core/types.hpp"

namespace cutejit::kernels::detail {

template <class T>
constexpr const char* element_name() {
  if constexpr (std::is_same_v<T, bf16>) return "bf16";
  else if constexpr (std::is_same_v<T, f16>) return "f16";
  else return "f32";
}

/// Elements of T in 16 bytes.
template <class T>
constexpr int vector = 16 / int(sizeof(T));

}  // namespace cutejit::kernels::detail
