/** \file
 * Tensor Memory (sm_100 family): 128 lanes x 512 columns of 32-bit cells per SM, where
 * tcgen05.mma keeps its accumulators. A CTA allocates columns with one warp, reads the address
 * the hardware wrote to shared memory after a barrier, and frees them with the same warp before
 * it exits:
 *
 *   TmemAllocation tmem(slot, 256);                // slot: a 32-bit word of shared memory
 *   if_(warp_idx() == 0, [&] { tmem.allocate(); });
 *   tcgen05_fence_before_thread_sync(); sync_threads(); tcgen05_fence_after_thread_sync();
 *   Value<uint32_t> d = tmem.address();            // lane 0, the first column
 *   ... MMAs into d, then the epilogue's tmem_load ...
 *   if_(warp_idx() == 0, [&] { tmem.free(d); });   // after every warp's last load
 *
 * Warp w of a warpgroup reaches lanes 32 (w % 4) ... 32 (w % 4) + 31 only. With the 32x32b
 * shape, lane t of the warp reads TMEM lane 32 (w % 4) + t and `Columns` consecutive columns:
 * one row of an M = 128 accumulator, so thread i of the warpgroup holds row i
 * (`TmemAccumulator::load_row`, which also keeps the columns inside the accumulator).
 * `tmem_layout_tv` gives every shape's (thread, register) -> (lane, column) map, and
 * `tmem_load<Shape, Num>` / `tmem_store` move those registers.
 *
 * The CTAs of a pair (sm100::CtaGroup::two, for 2-CTA MMAs) each allocate with one warp, the
 * same columns at the same slot, and free them only once the pair's MMAs into both are done
 * (a cluster barrier before the frees).
 */
#pragma once

#include <bit>
#include <string>
#include <vector>

#include "cutejit/arch/sm100/tcgen05.hpp"
#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/tensor/fragment.hpp"
#include "cutejit/tensor/pointer.hpp"

namespace cutejit {

/// `columns` TMEM columns (a power of two from 32 to 512) whose address the allocation writes
/// to the 32-bit shared-memory word `slot`.
class TmemAllocation {
 public:
  TmemAllocation(const Pointer<uint32_t>& slot, int columns, sm100::CtaGroup group = sm100::CtaGroup::one,
                 detail::Where w = detail::Where::current())
      : slot_(slot), columns_(columns), group_(group) {
    if (columns < 32 || columns > 512 || !std::has_single_bit(unsigned(columns)))
      detail::fail("a TMEM allocation is a power of two from 32 to 512 columns, not " + std::to_string(columns), w);
    if (slot.space() != Space::shared) detail::fail("a TMEM allocation's address slot is a word of shared memory", w);
  }
  int columns() const { return columns_; }

  /// Warp-collective (one whole warp): allocates, then gives up the CTA's permit to allocate
  /// more, so that another CTA on the SM may.
  void allocate(detail::Where w = detail::Where::current()) const {
    if (allocated_) detail::fail("this TMEM allocation is made twice; a CTA allocates its columns once", w);
    allocated_ = true;
    detail::tmem_alloc(slot_.id(), columns_, group_, w);
    detail::tmem_relinquish_alloc_permit(group_, w);
  }
  /// The allocation's address (lane 0, first column), once a barrier has followed allocate().
  Value<uint32_t> address(detail::Where w = detail::Where::current()) const { return (*slot_).read(w); }
  /// Warp-collective, by the warp that allocated: frees the columns at `address`.
  void free(const Value<uint32_t>& address, detail::Where w = detail::Where::current()) const {
    if (!allocated_) detail::fail("a TMEM allocation freed before it was allocated (call allocate() first)", w);
    if (freed_) detail::fail("this TMEM allocation is freed twice", w);
    freed_ = true;
    detail::tmem_dealloc(address.id(), columns_, group_, w);
  }

 private:
  Pointer<uint32_t> slot_;
  int columns_;
  sm100::CtaGroup group_;
  // What the trace has seen (each call is traced once, whichever threads run it).
  mutable bool allocated_ = false, freed_ = false;
};

/// The TMEM address of lane `lane`, column `column` from `base`: sm100::TmemAddress's encoding
/// (lane in bits 16-31, column in bits 0-15), added at run time.
inline Value<uint32_t> tmem_address(const Value<uint32_t>& base, const Int& lane, int column,
                                    detail::Where w = detail::Where::current()) {
  return base + (cast<uint32_t>(lane) << 16u) + Value<uint32_t>(uint32_t(column));
}

using TmemShape = detail::TmemShape;

namespace detail {
/// 16x32bx2's column offset of its second half: `num` (the halves side by side) unless given.
/// The other shapes keep what was given: -1 (none), or a value tcgen05.ld/st refuses.
inline int tmem_half_offset(TmemShape shape, int num, int half_offset) {
  return shape == TmemShape::s16x32bx2 && half_offset < 0 ? num : half_offset;
}
}  // namespace detail

/// The cells of one tcgen05.ld / st of `shape` repeated `num` times, as a thread-value layout:
/// (thread 0-31 of the warp, register) -> lane + 32 column, relative to the address (lane field
/// L0, column C0). The 32x32b shape spans lanes L0 ... L0 + 31, the others L0 ... L0 + 15 (an
/// address 16 lanes further reaches the other half of the warp's quarter). With q = t / 4 and
/// p = t % 4, thread t's register r is the cell
///   32x32b    (t, r)
///   16x64b    (q + 8 (t % 2), (t / 2) % 2 + 2 r)
///   16x128b   (q + 8 (r % 2), p + 4 (r / 2))
///   16x256b   (q + 8 ((r / 2) % 2), 2 p + r % 2 + 8 (r / 4))         (mma.sync's m16n8 C tile)
///   16x32bx2  (t % 16, r + half_offset (t / 16))
/// These are the maps of the PTX ISA's "Matrix fragments" figures for tcgen05.ld/st, which
/// give them as pictures only; the closed forms come from CUTLASS's TMEM copy traits.
inline Layout tmem_layout_tv(TmemShape shape, int num, int half_offset = -1) {
  const int64_t n = num;
  switch (shape) {
    case TmemShape::s32x32b: return Layout(IntTuple{32, n}, IntTuple{1, 32});
    case TmemShape::s16x64b: return Layout(IntTuple{IntTuple{2, 2, 8}, n}, IntTuple{IntTuple{8, 32, 1}, 64});
    case TmemShape::s16x128b:
      return Layout(IntTuple{IntTuple{4, 8}, IntTuple{2, n}}, IntTuple{IntTuple{32, 1}, IntTuple{8, 128}});
    case TmemShape::s16x256b:
      return Layout(IntTuple{IntTuple{4, 8}, IntTuple{2, 2, n}}, IntTuple{IntTuple{64, 1}, IntTuple{32, 8, 256}});
    case TmemShape::s16x32bx2:
      return Layout(IntTuple{IntTuple{16, 2}, n}, IntTuple{IntTuple{1, 32 * int64_t(detail::tmem_half_offset(shape, num, half_offset))}, 32});
  }
  return {};
}

/// The columns one access spans (for 16x32bx2 with its second half `half_offset` columns on).
inline int tmem_columns(TmemShape shape, int num, int half_offset = -1) {
  switch (shape) {
    case TmemShape::s32x32b: return num;
    case TmemShape::s16x64b: return 2 * num;
    case TmemShape::s16x128b: return 4 * num;
    case TmemShape::s16x256b: return 8 * num;
    case TmemShape::s16x32bx2: return detail::tmem_half_offset(shape, num, half_offset) + num;
  }
  return 0;
}

/// tcgen05.ld.<Shape>.x<Num> (then wait::ld): this thread's registers as f32, register r being
/// the cell tmem_layout_tv(Shape, Num)(lane in the warp, r) from `address`. `half_offset`:
/// 16x32bx2's second half, in columns (default Num: the halves side by side). Warp-collective.
template <TmemShape Shape, int Num>
Tensor<float> tmem_load(const Value<uint32_t>& address, int half_offset = -1, detail::Where w = detail::Where::current()) {
  std::vector<detail::ValueId> bits = detail::tmem_load(Shape, Num, address.id(), w, detail::tmem_half_offset(Shape, Num, half_offset));
  Tensor<float> out = make_rmem_tensor<float>(IntTuple{int64_t(bits.size())}, w);
  for (size_t i = 0; i < bits.size(); ++i) out(int64_t(i)) = bitcast<float>(Value<uint32_t>(bits[i]), w);
  return out;
}
/// tcgen05.st.<Shape>.x<Num> of `values` (as many as tmem_load returns), to the same cells.
template <TmemShape Shape, int Num>
void tmem_store(const Value<uint32_t>& address, const Tensor<float>& values, int half_offset = -1,
                detail::Where w = detail::Where::current()) {
  std::vector<detail::ValueId> registers;
  for (int64_t i = 0; i < size(values.layout()).value(); ++i) registers.push_back(F32(values(IntTuple(i))).id());
  detail::tmem_store(Shape, Num, address.id(), registers, w, detail::tmem_half_offset(Shape, Num, half_offset));
}

/// tcgen05.ld.32x32b.x{Columns} (then wait::ld): this thread's `Columns` f32 values from TMEM
/// lane (address >> 16) + its lane in the warp, columns (address & 0xffff) onwards, as a
/// register tensor. `address`'s lane must be the warp's quarter, 32 (warp % 4). Warp-collective.
template <int Columns>
  requires(Columns >= 1 && Columns <= 128 && std::has_single_bit(unsigned(Columns)))
Tensor<float> tmem_load_32x32b(const Value<uint32_t>& address, detail::Where w = detail::Where::current()) {
  return tmem_load<TmemShape::s32x32b, Columns>(address, -1, w);
}

/// tcgen05.wait::st: this thread's TMEM stores are done (before an MMA reads what they wrote).
inline void tmem_wait_store(detail::Where w = detail::Where::current()) { detail::tmem_wait_store(w); }

/// An M = 128 f32 accumulator in TMEM (what a Tcgen05MmaSS<T, 128, N> writes): row i in lane i,
/// `columns` (N) columns from `address`. Warp w of a warpgroup reads rows 32 (w % 4) ... + 31.
struct TmemAccumulator {
  Value<uint32_t> address;
  int columns;

  /// This thread's row `32 (warp % 4) + lane`, columns [column, column + Count): one
  /// tcgen05.ld.32x32b.x{Count} by the warp. A range outside the accumulator is a trace error.
  template <int Count>
  Tensor<float> load_row(const Int& warp, int column, detail::Where w = detail::Where::current()) const {
    return load<TmemShape::s32x32b, Count>(warp, 0, column, w);
  }

  /// One tcgen05.ld.<Shape>.x<Num> by the warp from its quarter's lanes 32 (warp % 4) +
  /// `lane_offset` (0, or 16 for a 16-lane shape's upper half) and columns from `column`: the
  /// registers of tmem_load. An access outside the accumulator's lanes or columns is a trace error.
  template <TmemShape Shape, int Num>
  Tensor<float> load(const Int& warp, int lane_offset, int column, detail::Where w = detail::Where::current()) const {
    const bool sixteen = Shape != TmemShape::s32x32b;
    if (lane_offset != 0 && !(sixteen && lane_offset == 16))
      detail::fail(std::string("a TMEM load of ") + (sixteen ? "16 lanes starts at lane 0 or 16" : "the 32x32b shape covers all 32 lanes") +
                       " of its warp's quarter, not at lane " + std::to_string(lane_offset),
                   w);
    const int span = tmem_columns(Shape, Num);
    if (column < 0 || column + span > columns)
      detail::fail("a TMEM load of columns " + std::to_string(column) + " to " + std::to_string(column + span - 1) +
                       " reaches outside its accumulator's " + std::to_string(columns) + " columns (0 to " +
                       std::to_string(columns - 1) + ")",
                   w);
    return tmem_load<Shape, Num>(tmem_address(address, (warp % 4) * 32 + lane_offset, column, w), -1, w);
  }
};

}  // namespace cutejit
