/** \file
 * A kernel's dynamic shared memory, declared rather than computed.
 *
 * A kernel declares its regions once, in order, in a SharedStorage (a compile-time value, so its
 * Config can state the launch's size as a constant); each region is typed, aligned and may have
 * stages (a ring). In the kernel, a SharedMemory over the same declaration hands out the regions
 * as pointers, a stage at a time. No kernel adds byte offsets to a base or casts pointers.
 *
 *   struct Shared {
 *     SharedStorage storage;                                 // a 1024-byte aligned base
 *     SharedRegion<bf16> a;
 *     SharedRegion<uint64_t> barriers;
 *   };
 *   constexpr Shared shared = [] {
 *     Shared r;
 *     r.a = r.storage.take<bf16>(128 * 64, stages, 1024);    // a ring of 128 x 64 tiles
 *     r.barriers = r.storage.barriers(PipelineTmaAsync::barrier_bytes(stages));
 *     return r;                                              // the size: r.storage.bytes()
 *   }();
 *   ...
 *   SharedMemory smem(shared.storage);
 *   Tensor<bf16> a = make_tensor(smem.stage(shared.a, s.index), stage_layout);
 *
 * Regions of one phase of a kernel may reuse the bytes of an earlier phase's (a ring that
 * becomes a merge's scratch once every warp is done with it, after a barrier): overlay(offset)
 * declares again from an earlier `used()`, and the size covers every phase.
 *
 *   const int phases = r.storage.used();
 *   r.ring = r.storage.take<bf16>(...);                     // the main loop's
 *   r.storage.overlay(phases);
 *   r.scratch = r.storage.take<float>(...);                 // the merge's, over the ring
 *
 * Swizzled TMA tiles and wgmma / UMMA operands must start on their swizzle pattern (1024 bytes
 * for 128-byte swizzles), more than the 16 bytes the launch guarantees, so the base is rounded up
 * at run time (a few instructions, once), the tracer knows the result is aligned, and the size
 * includes the slack that rounding takes.
 */
#pragma once

#include <stdexcept>

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

/// One region of a SharedStorage: `stages` consecutive copies (a ring's stages, or just one) of
/// `elements` elements of T, `offset` bytes past the aligned base. A region may be empty: what a
/// kernel's variant does not use (its offset is still where it would be).
template <Element T>
struct SharedRegion {
  int offset = 0;
  int elements = 0;
  int stages = 1;

  constexpr int stage_bytes() const { return elements * int(sizeof(T)); }
  constexpr int bytes() const { return stages * stage_bytes(); }
  /// The same bytes as elements of V: a region declared without knowing the kernel's element
  /// type (a Config shared by bf16 and FP8 kernels declares bytes) seen as the kernel's.
  template <Element V>
  constexpr SharedRegion<V> as() const {
    if (stage_bytes() % int(sizeof(V)) != 0 || offset % int(sizeof(V)) != 0)
      throw std::logic_error("a shared region's stages are not whole elements of the type it is seen as");
    return {offset, stage_bytes() / int(sizeof(V)), stages};
  }
};

/// The declaration: regions taken one after another, each at its own alignment, and the size
/// derived. Every member is constexpr; a declaration that cannot hold (an alignment above the
/// base's or not a power of two, no stages) does not compile where it is a constant.
class SharedStorage {
 public:
  /// `alignment`: the base's, a power of two from 16 to 1024; no region may ask for more.
  constexpr explicit SharedStorage(int alignment = 1024) : alignment_(alignment) {
    if (alignment < 16 || alignment > 1024 || (alignment & (alignment - 1)) != 0)
      throw std::logic_error("shared memory's base is aligned to a power of two from 16 to 1024 bytes");
  }

  /// `stages` copies of `elements` elements of T, the first at a multiple of `alignment` bytes
  /// (T's size if less, as in a C struct); each stage starts on the same alignment only if a
  /// stage's size is a multiple of it, which the caller's layout decides.
  template <Element T>
  constexpr SharedRegion<T> take(int elements, int stages = 1, int alignment = 0) {
    if (alignment < int(sizeof(T))) alignment = int(sizeof(T));
    if (alignment > alignment_ || (alignment & (alignment - 1)) != 0)
      throw std::logic_error("a shared region's alignment is a power of two no larger than the base's");
    if (elements < 0 || stages <= 0) throw std::logic_error("a shared region has at least one stage, of no elements or more");
    int offset = (end_ + alignment - 1) / alignment * alignment;
    SharedRegion<T> region{offset, elements, stages};
    end_ = offset + region.bytes();
    return region;
  }
  /// `bytes` of mbarriers (a pipeline's barrier_bytes(stages)): 8-byte words.
  constexpr SharedRegion<uint64_t> barriers(int bytes) { return take<uint64_t>(bytes / 8, 1, 8); }
  /// The regions taken from now on start again at `offset`, an earlier used(): they share bytes
  /// with those taken since, which the kernel must be done with (a barrier) before it writes
  /// these.
  constexpr void overlay(int offset) {
    if (offset < 0 || offset > end_) throw std::logic_error("a shared overlay starts at an offset the storage has already used");
    high_ = high_ > end_ ? high_ : end_;
    end_ = offset;
  }

  constexpr int alignment() const { return alignment_; }
  /// The bytes the regions span from the aligned base (every phase's, with overlays).
  constexpr int used() const { return high_ > end_ ? high_ : end_; }
  /// The launch's dynamic shared memory: the regions and the slack of aligning the base.
  constexpr uint32_t bytes() const { return uint32_t(used()) + dynamic_shared_slack(alignment_); }

 private:
  int alignment_;
  int end_ = 0;   ///< where the next region goes
  int high_ = 0;  ///< the farthest an overlaid phase reached
};

/// A SharedStorage's regions in a kernel: the aligned base, traced once, and a pointer to each
/// region's stages.
class SharedMemory {
 public:
  explicit SharedMemory(const SharedStorage& storage, detail::Where w = detail::Where::current())
      : base_(dynamic_shared_aligned<int8_t>(storage.alignment(), 0, w)) {}

  /// A region's first (or only) stage.
  template <Element T>
  Pointer<T> operator[](const SharedRegion<T>& region) const {
    return view<T>(region.offset == 0 ? base_ : base_ + region.offset);
  }
  /// Stage `s` of a region, known while tracing.
  template <Element T>
  Pointer<T> stage(const SharedRegion<T>& region, int s) const {
    int offset = region.offset + s * region.stage_bytes();
    return view<T>(offset == 0 ? base_ : base_ + offset);
  }
  /// Stage `s` of a region, chosen at run time (a ring's PipelineState::index).
  template <Element T>
  Pointer<T> stage(const SharedRegion<T>& region, const Int& s) const {
    return view<T>((region.offset == 0 ? base_ : base_ + region.offset) + s * region.stage_bytes());
  }

 private:
  // The one place a byte address becomes a typed one: the region's declaration guarantees the
  // alignment, and the tracer carries the base's.
  template <Element T>
  static Pointer<T> view(const Pointer<int8_t>& bytes) {
    return Pointer<T>(bytes.id());
  }
  Pointer<int8_t> base_;
};

}  // namespace cutejit
