/** \file
 * TMA tensor maps on the host. A `TensorMap<T>` is the 128-byte descriptor the copy engine reads
 * (a CUtensorMap, encoded by the driver's cuTensorMapEncodeTiled) plus what the kernel needs to
 * know statically about it: rank, box (the shared-memory tile) and swizzle. It is passed to a
 * `TmaDescriptor<T>` kernel parameter by value, as a `__grid_constant__`.
 *
 * Modes are given in the tensor's own order (a row-major M x K matrix: shape {M, K}, box
 * {rows, cols}); the last mode must be the contiguous one. Every check the driver would make
 * (and some it would not, such as the swizzle span) is made first, each failure a clear Error.
 */
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <source_location>

#include "cutejit/core/tensor_map_shape.hpp"
#include "cutejit/core/types.hpp"
#include "cutejit/runtime/buffer.hpp"

namespace cutejit {

template <Element T>
struct TensorMap {
  struct alignas(64) Bits {
    std::array<uint64_t, 16> words{};
  };
  Bits bits;             ///< the encoded CUtensorMap
  TensorMapShape shape;
  bool encoded = false;  ///< false for a map made only to cross-compile (`TensorMap::for_compile`)

  /// A map that carries only the static facts, for `Kernel::compile` with no GPU; launching
  /// with it is an error.
  static TensorMap for_compile(int rank, std::initializer_list<uint32_t> box, TmaSwizzle swizzle,
                               std::source_location where = std::source_location::current());
};

namespace detail {
/// Checks the static facts (element type, rank, box sizes, swizzle span); throws Error at `where`.
TensorMapShape tensor_map_shape(DType element, int rank, std::initializer_list<uint32_t> box, TmaSwizzle swizzle,
                                std::source_location where);
/// Checks the tensor against the shape (alignment, strides, extents) and encodes it into `out`.
void encode_tensor_map(void* out, const TensorMapShape& shape, uint64_t ptr, const int64_t* extents, const int64_t* strides,
                       std::source_location where);
}  // namespace detail

template <Element T>
TensorMap<T> TensorMap<T>::for_compile(int rank, std::initializer_list<uint32_t> box, TmaSwizzle swizzle,
                                       std::source_location where) {
  TensorMap<T> m;
  m.shape = detail::tensor_map_shape(dtype_v<T>, rank, box, swizzle, where);
  return m;
}

/// Encodes a tensor map for `tensor` whose tiles are `box` elements (one count per mode, each at
/// most 256), landing in shared memory with `swizzle`. Needs the CUDA driver.
template <Element T>
TensorMap<T> make_tensor_map(const DeviceTensor<T>& tensor, std::initializer_list<uint32_t> box,
                             TmaSwizzle swizzle = TmaSwizzle::none,
                             std::source_location where = std::source_location::current()) {
  TensorMap<T> m;
  m.shape = detail::tensor_map_shape(dtype_v<T>, tensor.rank, box, swizzle, where);
  detail::encode_tensor_map(&m.bits, m.shape, tensor.ptr, tensor.shape.data(), tensor.stride.data(), where);
  m.encoded = true;
  return m;
}

}  // namespace cutejit
