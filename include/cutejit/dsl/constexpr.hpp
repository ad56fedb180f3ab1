/** \file
 * `Constexpr<T>`: a static kernel parameter. Its value is known at trace time (plain C++ inside
 * the kernel, so loops over it unroll) and is part of the specialization: each value
 * compiles its own kernel.
 */
#pragma once

#include <type_traits>

namespace cutejit {

template <class T>
  requires(std::is_integral_v<T> || std::is_floating_point_v<T> || std::is_enum_v<T>)
struct Constexpr {
  T value;
  constexpr operator T() const { return value; }
};

}  // namespace cutejit
