/** \file
 * Dynamic shared memory with a stronger alignment than the 16 bytes the launch guarantees.
 * Swizzled TMA tiles and wgmma operands must start on their swizzle pattern (1024 bytes for
 * 128-byte swizzles), so a pipelined kernel rounds its dynamic base up at run time (a few
 * instructions, once) and the tracer knows the result is aligned. The launch reserves the slack.
 */
#pragma once

#include "cutejit/pipeline/mbarrier.hpp"

namespace cutejit {

/// Extra dynamic shared bytes a launch must add for `dynamic_shared_aligned(alignment)`.
constexpr uint32_t dynamic_shared_slack(int64_t alignment) { return alignment > 16 ? uint32_t(alignment - 16) : 0; }

/// The block's dynamic shared memory, from its base rounded up to `alignment` (a power of two,
/// 16 to 1024) plus `byte_offset`, viewed as T.
template <Element T>
Pointer<T> dynamic_shared_aligned(int64_t alignment, int64_t byte_offset = 0, detail::Where w = detail::Where::current()) {
  if (alignment < 16 || alignment > 1024 || (alignment & (alignment - 1)) != 0)
    detail::fail("dynamic shared memory can be aligned to a power of two from 16 to 1024 bytes, not " + std::to_string(alignment), w);
  Pointer<int8_t> base = dynamic_shared<int8_t>(0, w);
  uint32_t mask = uint32_t(alignment - 1);
  UInt pad = (uint32_t(alignment) - (shared_address(base, w) & mask)) & mask;
  Pointer<int8_t> aligned(detail::assume_pointer_alignment((base + Operand<int32_t>(cast<int32_t>(pad, w), w)).id(), alignment));
  return Pointer<T>((aligned + Operand<int32_t>(int32_t(byte_offset), w)).id());
}

}  // namespace cutejit
