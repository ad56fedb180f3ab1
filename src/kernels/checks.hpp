// What every operator of the kernel library checks of its tensors before it launches, each
// failure an Error at the caller's line saying what the operator takes.
#pragma once

#include <source_location>
#include <string>

#include "cutejit/core/error.hpp"
#include "cutejit/runtime/buffer.hpp"

namespace cutejit::kernels::detail {

/// Throws "error: <op>: <message>" at the caller's line unless `ok`.
inline void require(bool ok, const std::string& op, const std::string& message, const std::source_location& where) {
  if (!ok) throw Error("error: " + op + ": " + message, where);
}

inline std::string shape_of(const auto& t) {
  std::string s = "(";
  for (int i = 0; i < t.rank; ++i) s += (i ? ", " : "") + std::to_string(t.shape[size_t(i)]);
  return s + ")";
}

/// A (rows, n) tensor whose rows are contiguous and start on 16-byte boundaries, with n a
/// multiple of `vector` elements: what the row kernels read and write 16 bytes at a time.
template <class T>
void require_rows(const DeviceTensor<T>& t, const char* name, const std::string& op, int64_t vector, const std::source_location& where) {
  require(t.rank == 2, op, std::string(name) + " is a tensor of rank " + std::to_string(t.rank) + "; it takes (rows, n)", where);
  require(t.stride[1] == 1, op, std::string(name) + "'s rows are not contiguous (its last stride is " + std::to_string(t.stride[1]) + ")",
          where);
  require(t.shape[1] % vector == 0 && t.stride[0] % vector == 0 && t.ptr % 16 == 0, op,
          std::string(name) + " " + shape_of(t) + " must start on 16 bytes and have rows of a multiple of " + std::to_string(vector) +
              " elements, each on 16 bytes (row stride " + std::to_string(t.stride[0]) + ")",
          where);
}

/// A rank-1 contiguous tensor of `n` elements on a 16-byte boundary.
template <class T>
void require_vector(const DeviceTensor<T>& t, const char* name, const std::string& op, int64_t n, const std::source_location& where) {
  require(t.rank == 1 && t.shape[0] == n && t.stride[0] == 1, op,
          std::string(name) + " is " + shape_of(t) + "; it takes (" + std::to_string(n) + ") contiguous", where);
  require(t.ptr % 16 == 0, op, std::string(name) + " must start on 16 bytes", where);
}

}  // namespace cutejit::kernels::detail
