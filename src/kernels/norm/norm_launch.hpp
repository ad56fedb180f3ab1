// What the norms (rmsnorm.cpp, layernorm.cpp) check of their rows, residual and weight, and
// their launch: one CTA a row.
#pragma once

#include <source_location>
#include <string>

#include "cutejit/runtime/launch.hpp"
#include "cutejit/kernels/norm.hpp"
#include "kernels/checks.hpp"
#include "kernels/element_names.hpp"
#include "kernels/row_threads.hpp"

namespace cutejit::kernels::detail {

/// x, y and (with one) the residual (rows, hidden) with rows of whole 16-byte vectors, of one
/// shape; the weight (hidden); eps not negative. Throws at `where` naming `op`.
template <class T>
Launch norm_launch(const char* op, const DeviceTensor<T>& x, const DeviceTensor<T>* residual, const DeviceTensor<T>& weight,
                   const DeviceTensor<T>& y, const NormOptions& options, const std::source_location& where) {
  require_rows(x, "x", op, vector<T>, where);
  require_rows(y, "y", op, vector<T>, where);
  require(y.shape == x.shape, op, "y is " + shape_of(y) + "; it must have x's shape " + shape_of(x), where);
  if (residual) {
    require_rows(*residual, "residual", op, vector<T>, where);
    require(residual->shape == x.shape, op, "residual is " + shape_of(*residual) + "; it must have x's shape " + shape_of(x), where);
  }
  require_vector(weight, "weight", op, x.shape[1], where);
  require(x.shape[0] < (int64_t(1) << 31), op, "x has " + std::to_string(x.shape[0]) + " rows; at most 2^31 - 1 are launched", where);
  require(options.eps >= 0, op, "eps is negative", where);
  return Launch{.grid = uint32_t(x.shape[0]), .block = uint32_t(row_threads(x.shape[1], vector<T>)), .stream = options.stream,
                .where = where};
}

}  // namespace cutejit::kernels::detail
