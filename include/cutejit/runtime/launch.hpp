/** \file
 * How a kernel is launched: grid, block, dynamic shared memory, cluster shape and stream.
 * The stream is the driver's CUstream (or a cudaStream_t, the same thing), so launches take
 * part in CUDA graph capture; a null stream is the legacy default stream.
 */
#pragma once

#include <cstdint>

namespace cutejit {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  constexpr Dim3() = default;
  constexpr Dim3(uint32_t x_, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr uint64_t count() const { return uint64_t(x) * y * z; }
};

using Stream = void*;  ///< a CUstream / cudaStream_t

struct Launch {
  Dim3 grid;
  Dim3 block;
  uint32_t shared_bytes = 0;  ///< dynamic shared memory per block
  Dim3 cluster;               ///< thread-block cluster shape (sm_90 and newer); 1x1x1 means none
  Stream stream = nullptr;
};

constexpr uint32_t ceil_div(uint64_t a, uint64_t b) { return uint32_t((a + b - 1) / b); }

}  // namespace cutejit
