/** \file
 * A kernel argument whose type is known only at run time: what a launch from another language
 * (the Python module, through DLPack) hands a registered kernel. Each is converted to the host
 * type its parameter takes and checked as a C++ argument would be.
 */
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "cutejit/core/kernel_abi.hpp"
#include "cutejit/core/types.hpp"

namespace cutejit {

struct DynamicArg {
  enum class Kind : uint8_t { tensor, integer, real };
  Kind kind = Kind::integer;
  // Kind::tensor: a device tensor, strides in elements.
  uint64_t ptr = 0;
  DType dtype = DType::f32;
  int rank = 0;
  std::array<int64_t, max_tensor_rank> shape{};
  std::array<int64_t, max_tensor_rank> stride{};
  // Kind::integer and Kind::real.
  int64_t integer = 0;
  double real = 0;

  static DynamicArg of_integer(int64_t v) {
    DynamicArg a;
    a.kind = Kind::integer;
    a.integer = v;
    return a;
  }
  static DynamicArg of_real(double v) {
    DynamicArg a;
    a.kind = Kind::real;
    a.real = v;
    return a;
  }
  std::string describe() const {
    if (kind == Kind::integer) return "the integer " + std::to_string(integer);
    if (kind == Kind::real) return "the number " + std::to_string(real);
    return "a rank-" + std::to_string(rank) + " " + std::string(name(dtype)) + " tensor";
  }
};

}  // namespace cutejit
