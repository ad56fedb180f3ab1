/** \file
 * How a kernel is launched: grid, block, dynamic shared memory, cluster shape, stream, and
 * programmatic dependent launch.
 * The stream is the driver's CUstream (or a cudaStream_t, the same thing), so launches take
 * part in CUDA graph capture; a null stream is the legacy default stream.
 */
#pragma once

#include <cstdint>
#include <source_location>
#include <type_traits>

#include "cutejit/runtime/stream.hpp"

namespace cutejit {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  constexpr Dim3() = default;
  constexpr Dim3(uint32_t x_, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr uint64_t count() const { return uint64_t(x) * y * z; }
};


struct Launch {
  Dim3 grid;
  Dim3 block;
  uint32_t shared_bytes = 0;  ///< dynamic shared memory per block
  Dim3 cluster;               ///< thread-block cluster shape (sm_90 and newer); 1x1x1 means none
  StreamHandle stream = nullptr;  ///< a Stream, or a framework's CUstream / cudaStream_t
  /// Programmatic dependent launch (sm_90 and newer): the kernel may start before the previous
  /// kernel in the stream has finished; it calls griddepcontrol_wait() before reading what that
  /// kernel writes. Hides one kernel's launch latency and tail behind the previous one's.
  bool programmatic_dependent_launch = false;
  /// Where the launch was described: an error refusing it names this line.
  std::source_location where = std::source_location::current();
};

/// Blocks needed to cover a count: a grid dimension. A template, so that with any integer
/// arguments it is an exact match and wins over the layout algebra's int64_t ceil_div.
template <class A, class B>
  requires(std::is_integral_v<A> && std::is_integral_v<B>)
constexpr uint32_t ceil_div(A a, B b) {
  return uint32_t((uint64_t(a) + uint64_t(b) - 1) / uint64_t(b));
}

}  // namespace cutejit
