/** \file
 * What a kernel knows statically about a TMA tensor map: its element type, rank, box and
 * swizzle. Kernels and atoms read it (a TmaDescriptor parameter, a wgmma operand's swizzle);
 * runtime/tensor_map.hpp makes the maps themselves, on the host.
 */
#pragma once

#include <array>
#include <cstdint>

#include "cutejit/core/types.hpp"

namespace cutejit {

/// How the copy engine permutes 16-byte chunks within each row of a shared-memory tile; the
/// number is the swizzle span in bytes, the row length the pattern repeats over (0: none).
enum class TmaSwizzle : uint8_t { none = 0, bytes32 = 32, bytes64 = 64, bytes128 = 128 };

/// What a kernel knows statically about a tensor map (part of the specialization).
struct TensorMapShape {
  DType element = DType::f32;
  int rank = 0;
  std::array<uint32_t, 5> box{};  ///< the tile, in the tensor's mode order
  TmaSwizzle swizzle = TmaSwizzle::none;
};

}  // namespace cutejit
