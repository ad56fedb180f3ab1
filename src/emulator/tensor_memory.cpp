#include "emulator/tensor_memory.hpp"

#include <bit>
#include <string>

namespace cutejit::emulator {

namespace {
std::string cell_name(uint32_t lane, uint32_t column) {
  return "lane " + std::to_string(lane) + " column " + std::to_string(column);
}
}  // namespace

TensorMemory::TensorMemory() : cells_(size_t(lanes) * columns), written_(size_t(lanes) * columns) {}

void TensorMemory::check_allocation(uint32_t ncols) const {
  if (ncols < 32 || ncols > 512 || !std::has_single_bit(ncols))
    throw Fault("tcgen05.alloc of " + std::to_string(ncols) + " columns: the count must be a power of two from 32 to 512");
  if (relinquished_) throw Fault("tcgen05.alloc after this CTA executed tcgen05.relinquish_alloc_permit");
  if (last_ncols_ != 0 && ncols > last_ncols_)
    throw Fault("tcgen05.alloc of " + std::to_string(ncols) + " columns after one of " + std::to_string(last_ncols_) +
                ": the number of columns allocated must not increase between allocations of a CTA");
}

bool TensorMemory::is_free(uint32_t column, uint32_t ncols) const {
  if (column % unit != 0 || column + ncols > uint32_t(columns)) return false;
  const uint32_t mask = ((1u << (ncols / unit)) - 1u) << (column / unit);
  return (used_units_ & mask) == 0;
}

std::optional<uint32_t> TensorMemory::try_allocate(uint32_t ncols) {
  check_allocation(ncols);
  // A run aligned to its own size: the allocator's choice is invisible to a correct kernel,
  // which reads the address back from shared memory.
  for (uint32_t column = 0; column + ncols <= uint32_t(columns); column += ncols)
    if (is_free(column, ncols)) {
      allocate_at(column, ncols);
      return tmem_address(0, column);
    }
  return std::nullopt;
}

void TensorMemory::allocate_at(uint32_t column, uint32_t ncols) {
  check_allocation(ncols);
  if (!is_free(column, ncols))
    throw Fault("tcgen05.alloc: columns " + std::to_string(column) + "-" + std::to_string(column + ncols - 1) + " are not free");
  const uint32_t first = column / unit, count = ncols / unit;
  used_units_ |= uint16_t(((1u << count) - 1u) << first);
  start_units_ |= uint16_t(1u << first);
  size_units_[first] = uint8_t(count);
  last_ncols_ = ncols;
  for (uint32_t lane = 0; lane < uint32_t(lanes); ++lane)
    for (uint32_t c = column; c < column + ncols; ++c) written_[size_t(lane) * columns + c] = 0;
}

void TensorMemory::deallocate(uint32_t address, uint32_t ncols) {
  const TmemAddress a = split_tmem_address(address);
  const bool starts = a.lane == 0 && a.column < uint32_t(columns) && a.column % unit == 0 && (start_units_ >> (a.column / unit) & 1u);
  if (!starts || size_units_[a.column / unit] * uint32_t(unit) != ncols)
    throw Fault("tcgen05.dealloc of " + std::to_string(ncols) + " columns at lane " + std::to_string(a.lane) + " column " +
                std::to_string(a.column) + ": no allocation of that many columns starts there");
  const uint32_t first = a.column / unit, count = ncols / unit;
  used_units_ &= uint16_t(~(((1u << count) - 1u) << first));
  start_units_ &= uint16_t(~(1u << first));
  size_units_[first] = 0;
  for (uint32_t lane = 0; lane < uint32_t(lanes); ++lane)
    for (uint32_t c = a.column; c < a.column + ncols; ++c) written_[size_t(lane) * columns + c] = 0;
}

bool TensorMemory::is_allocated(uint32_t column) const { return column < uint32_t(columns) && (used_units_ >> (column / unit) & 1u); }

bool TensorMemory::is_initialised(uint32_t lane, uint32_t column) const {
  return lane < uint32_t(lanes) && column < uint32_t(columns) && written_[size_t(lane) * columns + column];
}

void TensorMemory::check_cell(uint32_t lane, uint32_t column, const char* access) const {
  if (lane >= uint32_t(lanes) || column >= uint32_t(columns))
    throw Fault(std::string(access) + " of TMEM outside its 128 lanes x 512 columns, at " + cell_name(lane, column));
  if (!is_allocated(column)) throw Fault(std::string(access) + " of unallocated TMEM at " + cell_name(lane, column));
}

uint32_t TensorMemory::read(uint32_t lane, uint32_t column) const {
  check_cell(lane, column, "read");
  const size_t i = size_t(lane) * columns + column;
  if (!written_[i]) throw Fault("read of uninitialised TMEM at " + cell_name(lane, column));
  return cells_[i];
}

void TensorMemory::write(uint32_t lane, uint32_t column, uint32_t value) {
  check_cell(lane, column, "write");
  const size_t i = size_t(lane) * columns + column;
  cells_[i] = value;
  written_[i] = 1;
}

bool tcgen05_alloc(std::span<TensorMemory* const> tmem, std::span<Memory* const> shared, std::span<const uint64_t> dst,
                   uint32_t ncols) {
  if (tmem.empty() || tmem.size() > 2 || shared.size() != tmem.size() || dst.size() != tmem.size())
    throw Fault("tcgen05.alloc takes one CTA or a CTA pair, each with its shared memory and destination word");
  for (const uint64_t d : dst)
    if (d % 4 != 0) throw Fault("tcgen05.alloc's destination " + std::to_string(d) + " in shared memory is not 4-byte aligned");
  for (TensorMemory* t : tmem) t->check_allocation(ncols);
  // The pair's warps allocate together: the same columns in both CTAs.
  for (uint32_t column = 0; column + ncols <= uint32_t(TensorMemory::columns); column += ncols) {
    bool free = true;
    for (TensorMemory* t : tmem) free = free && t->is_free(column, ncols);
    if (!free) continue;
    for (size_t i = 0; i < tmem.size(); ++i) {
      tmem[i]->allocate_at(column, ncols);
      shared[i]->store<uint32_t>(dst[i], tmem_address(0, column));
    }
    return true;
  }
  return false;
}

void tcgen05_dealloc(std::span<TensorMemory* const> tmem, uint32_t taddr, uint32_t ncols) {
  if (ncols < 32 || ncols > 512 || !std::has_single_bit(ncols))
    throw Fault("tcgen05.dealloc of " + std::to_string(ncols) + " columns: the count must be a power of two from 32 to 512");
  for (TensorMemory* t : tmem) t->deallocate(taddr, ncols);
}

void tcgen05_relinquish_alloc_permit(std::span<TensorMemory* const> tmem) {
  for (TensorMemory* t : tmem) t->relinquish_alloc_permit();
}

void check_lane_quarter(uint32_t warp_id, uint32_t first_lane, uint32_t count, const char* instruction) {
  const uint32_t quarter = warp_id % 4;
  if (first_lane / 32 != quarter || first_lane + count > 32 * (quarter + 1))
    throw Fault(std::string(instruction) + " by warp " + std::to_string(warp_id) + " (warp " + std::to_string(quarter) +
                " of its warpgroup, which may access lanes " + std::to_string(32 * quarter) + "-" + std::to_string(32 * quarter + 31) +
                ") touches lanes " + std::to_string(first_lane) + "-" + std::to_string(first_lane + count - 1));
}

}  // namespace cutejit::emulator
