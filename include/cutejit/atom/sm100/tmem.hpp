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
 */
#pragma once

#include <bit>
#include <string>

#include "cutejit/arch/sm100/tcgen05.hpp"
#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/tensor/fragment.hpp"
#include "cutejit/tensor/pointer.hpp"

namespace cutejit {

/// `columns` TMEM columns (a power of two from 32 to 512) whose address the allocation writes
/// to the 32-bit shared-memory word `slot`.
class TmemAllocation {
 public:
  TmemAllocation(const Pointer<uint32_t>& slot, int columns, detail::Where w = detail::Where::current())
      : slot_(slot), columns_(columns) {
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
    detail::tmem_alloc(slot_.id(), columns_, w);
    detail::tmem_relinquish_alloc_permit(w);
  }
  /// The allocation's address (lane 0, first column), once a barrier has followed allocate().
  Value<uint32_t> address(detail::Where w = detail::Where::current()) const { return (*slot_).read(w); }
  /// Warp-collective, by the warp that allocated: frees the columns at `address`.
  void free(const Value<uint32_t>& address, detail::Where w = detail::Where::current()) const {
    if (!allocated_) detail::fail("a TMEM allocation freed before it was allocated (call allocate() first)", w);
    if (freed_) detail::fail("this TMEM allocation is freed twice", w);
    freed_ = true;
    detail::tmem_dealloc(address.id(), columns_, w);
  }

 private:
  Pointer<uint32_t> slot_;
  int columns_;
  // What the trace has seen (each call is traced once, whichever threads run it).
  mutable bool allocated_ = false, freed_ = false;
};

/// The TMEM address of lane `lane`, column `column` from `base`: sm100::TmemAddress's encoding
/// (lane in bits 16-31, column in bits 0-15), added at run time.
inline Value<uint32_t> tmem_address(const Value<uint32_t>& base, const Int& lane, int column,
                                    detail::Where w = detail::Where::current()) {
  return base + (cast<uint32_t>(lane) << 16u) + Value<uint32_t>(uint32_t(column));
}

/// tcgen05.ld.32x32b.x{Columns} (then wait::ld): this thread's `Columns` f32 values from TMEM
/// lane (address >> 16) + its lane in the warp, columns (address & 0xffff) onwards, as a
/// register tensor. `address`'s lane must be the warp's quarter, 32 (warp % 4). Warp-collective.
template <int Columns>
  requires(Columns >= 1 && Columns <= 128 && std::has_single_bit(unsigned(Columns)))
Tensor<float> tmem_load_32x32b(const Value<uint32_t>& address, detail::Where w = detail::Where::current()) {
  std::vector<detail::ValueId> bits = detail::tmem_load(detail::TmemShape::s32x32b, Columns, address.id(), w);
  Tensor<float> out = make_rmem_tensor<float>(IntTuple{Columns}, w);
  for (int i = 0; i < Columns; ++i) out(i) = bitcast<float>(Value<uint32_t>(bits[size_t(i)]), w);
  return out;
}

/// An M = 128 f32 accumulator in TMEM (what a Tcgen05MmaSS<T, 128, N> writes): row i in lane i,
/// `columns` (N) columns from `address`. Warp w of a warpgroup reads rows 32 (w % 4) ... + 31.
struct TmemAccumulator {
  Value<uint32_t> address;
  int columns;

  /// This thread's row `32 (warp % 4) + lane`, columns [column, column + Count): one
  /// tcgen05.ld.32x32b.x{Count} by the warp. A range outside the accumulator is a trace error.
  template <int Count>
  Tensor<float> load_row(const Int& warp, int column, detail::Where w = detail::Where::current()) const {
    if (column < 0 || column + Count > columns)
      detail::fail("a TMEM load of columns " + std::to_string(column) + " to " + std::to_string(column + Count - 1) +
                       " reaches outside its accumulator's " + std::to_string(columns) + " columns (0 to " +
                       std::to_string(columns - 1) + ")",
                   w);
    return tmem_load_32x32b<Count>(tmem_address(address, (warp % 4) * 32, column, w), w);
  }
};

}  // namespace cutejit
