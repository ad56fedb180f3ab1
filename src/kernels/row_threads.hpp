// The block of the kernels that take one row a CTA (the norms, softmax): about four 16-byte
// vectors a thread, so that a long row is split across many threads and a short one leaves few
// idle, from 32 to 1024 threads.
#pragma once

#include <algorithm>
#include <cstdint>

namespace cutejit::kernels::detail {

/// Threads for rows of `n` elements, `vector` of them to 16 bytes.
inline int row_threads(int64_t n, int vector) {
  const int64_t vectors = n / vector;
  return int(std::clamp<int64_t>((vectors + 4 * 32 - 1) / (4 * 32) * 32, 32, 1024));
}

}  // namespace cutejit::kernels::detail
