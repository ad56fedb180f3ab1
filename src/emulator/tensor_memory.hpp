/** \file
 * Blackwell's Tensor Memory (TMEM) of one CTA, as the PTX ISA describes it ("Tensor Memory",
 * tcgen05 chapter): 128 lanes x 512 columns of 32-bit cells, addressed lane << 16 | column,
 * handed out in power-of-two runs of columns by tcgen05.alloc and returned by tcgen05.dealloc.
 *
 * It exists so the emulator can catch what real hardware silently gets wrong: a read of a cell
 * no instruction wrote, an access to columns the CTA does not own, an allocation after
 * tcgen05.relinquish_alloc_permit, memory still allocated when the kernel ends. Every such use
 * throws Fault with the lane and column. tcgen05.alloc blocks on hardware while the columns are
 * taken; here it answers "not yet" so the interpreter can park the warp and retry.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "emulator/fault.hpp"

namespace cutejit::emulator {

/// A TMEM address split into its fields (bits 31-16 lane, 15-0 column).
struct TmemAddress {
  uint32_t lane = 0;
  uint32_t column = 0;
};
inline TmemAddress split_tmem_address(uint32_t address) { return {address >> 16, address & 0xFFFFu}; }
inline uint32_t tmem_address(uint32_t lane, uint32_t column) { return lane << 16 | column; }

class TensorMemory {
 public:
  static constexpr int lanes = 128;
  static constexpr int columns = 512;

  TensorMemory();

  /// Takes `ncols` columns (a power of two from 32 to 512) if a run of them is free; returns
  /// the run's address (lane 0), or nothing when the warp must wait for a tcgen05.dealloc.
  /// Throws Fault for a bad count, after relinquish_alloc_permit, or when `ncols` exceeds the
  /// previous allocation's (the ISA: the count must not increase between allocations).
  std::optional<uint32_t> try_allocate(uint32_t ncols);
  /// Claims exactly [column, column + ncols) (the peer CTA's half of a pair allocation).
  void allocate_at(uint32_t column, uint32_t ncols);
  /// True when [column, column + ncols) is free.
  bool is_free(uint32_t column, uint32_t ncols) const;
  /// Checks what try_allocate checks, without allocating.
  void check_allocation(uint32_t ncols) const;
  /// Returns the allocation that starts at `address` and has `ncols` columns; the cells become
  /// uninitialised. Throws Fault when no such allocation exists.
  void deallocate(uint32_t address, uint32_t ncols);
  void relinquish_alloc_permit() { relinquished_ = true; }
  /// Whether every allocation was returned (checked when the kernel exits).
  bool all_freed() const { return used_units_ == 0; }

  /// A cell's value. Throws Fault outside TMEM, outside an allocation, or for a cell never
  /// written since its columns were allocated.
  uint32_t read(uint32_t lane, uint32_t column) const;
  /// Writes a cell. Throws Fault outside TMEM or outside an allocation.
  void write(uint32_t lane, uint32_t column, uint32_t value);
  bool is_initialised(uint32_t lane, uint32_t column) const;
  bool is_allocated(uint32_t column) const;

 private:
  void check_cell(uint32_t lane, uint32_t column, const char* access) const;

  static constexpr int unit = 32;  ///< the allocation granule, in columns
  std::vector<uint32_t> cells_;    ///< lane-major: cells_[lane * columns + column]
  std::vector<uint8_t> written_;   ///< 1 where the cell holds a value
  uint16_t used_units_ = 0;        ///< bit u: columns [32u, 32u + 32) are allocated
  uint16_t start_units_ = 0;       ///< bit u: an allocation starts at unit u
  uint8_t size_units_[columns / unit] = {};  ///< at a start unit: the allocation's units
  uint32_t last_ncols_ = 0;
  bool relinquished_ = false;
};

/// tcgen05.alloc.cta_group::N.sync.aligned.shared::cta.b32 [dst], ncols, for the N CTAs in
/// `tmem` (1, or the pair: even CTA first) with their shared memories and `dst` words: the same
/// columns are taken in every CTA and the address is stored to each CTA's `dst`. Returns false
/// (nothing changed) while the columns are not free in all of them: the warps wait and retry.
bool tcgen05_alloc(std::span<TensorMemory* const> tmem, std::span<Memory* const> shared, std::span<const uint64_t> dst,
                   uint32_t ncols);
/// tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, ncols.
void tcgen05_dealloc(std::span<TensorMemory* const> tmem, uint32_t taddr, uint32_t ncols);
/// tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned.
void tcgen05_relinquish_alloc_permit(std::span<TensorMemory* const> tmem);

/// The lanes warp `warp_id` may reach with tcgen05.ld / st: 32 (warp_id % 4) ... + 31 (the ISA's
/// access restriction: each warp of a warpgroup owns one quarter of the lanes). Throws Fault for
/// [first_lane, first_lane + count) outside that quarter.
void check_lane_quarter(uint32_t warp_id, uint32_t first_lane, uint32_t count, const char* instruction);

}  // namespace cutejit::emulator
