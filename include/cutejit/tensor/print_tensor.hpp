/** \file
 * A tensor printed from the device, as CuTe's print_tensor: its layout, then its elements, a
 * line per index of mode 0 (the rest of the coordinates along the line, colexicographically).
 *
 *     if_(thread_idx().x == 0, [&] { print_tensor(tile); });
 *
 * Every thread that reaches it prints; guard it as above. The shape must be static (a tile,
 * not a whole dynamic-size tensor: slice or partition first); the strides may be dynamic.
 */
#pragma once

#include <string>
#include <vector>

#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/tensor/tensor.hpp"

namespace cutejit {

template <Element T>
void print_tensor(const Tensor<T>& t, detail::Where w = detail::Where::current()) {
  const Layout& l = t.layout();
  if (!is_static(l.shape()))
    detail::fail("print_tensor prints a tensor of static shape, and this one's is dynamic: " + to_string(l) +
                     "; print a tile of it (local_tile, a slice or a partition)",
                 w);
  const int64_t total = size(l).value();
  const int64_t lines = rank(l) >= 2 ? size(l, 0).value() : 1;
  const int64_t per_line = total / lines;
  // At most this many values per printf: the device's printf buffer takes a few dozen arguments.
  constexpr int64_t per_call = 16;
  const char* conversion = is_floating_v<T> ? " %10.4g" : std::is_signed_v<T> ? " %6lld" : " %6llu";
  device_printf(w, "tensor " + to_string(l) + ":\n");
  for (int64_t line = 0; line < lines; ++line) {
    for (int64_t first = 0; first < per_line; first += per_call) {
      const int64_t count = std::min(per_call, per_line - first);
      std::string format = first == 0 ? " " : "";
      std::vector<detail::ValueId> values;
      for (int64_t k = first; k < first + count; ++k) {
        format += conversion;
        Value<T> v = t(IntTuple(line + k * lines), w).read(w);
        if constexpr (is_floating_v<T>) values.push_back(cast<double>(v, w).id());
        else if constexpr (std::is_signed_v<T>) values.push_back(cast<int64_t>(v, w).id());
        else values.push_back(cast<uint64_t>(v, w).id());
      }
      if (first + count == per_line) format += "\n";
      detail::print(format, values, w);
    }
  }
}

}  // namespace cutejit
