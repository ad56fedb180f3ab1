/** \file
 * stmatrix (sm_90 and newer): a warp stores one, two or four 8 x 8 matrices of 16-bit values
 * to shared memory in one instruction, each matrix row a 16-byte write. It is the fast way from
 * MMA fragments to a shared-memory tile (the first half of a TMA-store epilogue):
 *  - register j of lane l holds row l / 4 of matrix j, columns 2 (l % 4) and 2 (l % 4) + 1,
 *    the lower column in the low half (`pack_pair`);
 *  - lane l gives the address of row l % 8 of matrix l / 8 (lanes past 8 x Count: ignored);
 *  - `transposed`: each register's pair goes down a column instead (row and column swap), for a
 *    column-major tile.
 * The rows may be anywhere (a swizzled tile's rows are scattered 16-byte chunks), but each must
 * be 16-byte aligned.
 *
 * `stmatrix_accumulators` stores a block of a wgmma accumulator tile this way: in the wgmma D
 * fragment (wgmma.hpp) the values 4q + 2h and 4q + 2h + 1 of a warp's lanes are exactly the
 * 8 x 8 matrix at rows 8h of the warp's 16, columns 8q, so four consecutive registers of
 * packed pairs are one stmatrix.x4 of a 16 x 16 block.
 */
#pragma once

#include <array>
#include <span>

#include "cutejit/atom/sm90/wgmma.hpp"
#include "cutejit/tensor/tensor.hpp"

namespace cutejit {

/// `Count` (1, 2 or 4) 8 x 8 matrices of a 16-bit type from the warp's registers to shared
/// memory at this lane's row address `row` (see above).
template <Element T, size_t Count>
  requires(sizeof(T) == 2 && (Count == 1 || Count == 2 || Count == 4))
void stmatrix(const Pointer<T>& row, const std::array<Value<uint32_t>, Count>& registers, bool transposed = false,
              detail::Where w = detail::Where::current()) {
  std::array<detail::ValueId, Count> ids;
  for (size_t j = 0; j < Count; ++j) ids[j] = registers[j].id();
  detail::stmatrix(row.id(), ids, transposed, w);
}

/// Stores a warpgroup's block of 64 rows x 16 G columns, held in the wgmma accumulator layout
/// as packed pairs (`packed[p]`: values 2p and 2p + 1 of the block, G * 4 registers), into the
/// shared tile `tile` (64 x 16 G elements of a 16-bit type, any layout whose runs of 8 columns
/// are contiguous and 16-byte aligned: row-major, or swizzled as a TMA box). `t` is the thread's
/// index in the warpgroup. One stmatrix.x4 per 16 columns.
template <Element T>
  requires(sizeof(T) == 2)
void stmatrix_accumulators(const Tensor<T>& tile, std::span<const Value<uint32_t>> packed, const Int& t,
                           detail::Where w = detail::Where::current()) {
  if (packed.size() % 4 != 0)
    detail::fail("stmatrix_accumulators stores blocks of 16 columns: 4 packed registers each, not " + std::to_string(packed.size()),
                 w);
  // A tile of known shape must hold the block: 64 rows, and a column for each value.
  const Layout& l = tile.layout();
  Integer rows = rank(l) == 2 ? size(l, 0) : Integer(0), cols = rank(l) == 2 ? size(l, 1) : Integer(0);
  if (rank(l) != 2 || (rows.is_static() && rows.value() != 64) || (cols.is_static() && cols.value() < int64_t(packed.size()) * 4))
    detail::fail("stmatrix_accumulators stores 64 rows x " + std::to_string(packed.size() * 4) +
                     " columns (4 per packed register) into a rank-2 tile of that shape or wider, not " + to_string(l),
                 w);
  Int lane = t % 32;
  // Lane l addresses row l % 8 of matrix l / 8: matrices 0 and 2 are rows 0-7 of the warp's 16,
  // 1 and 3 rows 8-15; matrices 0 and 1 are the group's first 8 columns, 2 and 3 its last 8.
  Int row = (t / 32) * 16 + ((lane / 8) % 2) * 8 + lane % 8;
  Int column = (lane / 16) * 8;
  for (size_t g = 0; g < packed.size() / 4; ++g) {
    std::array<Value<uint32_t>, 4> regs{packed[4 * g], packed[4 * g + 1], packed[4 * g + 2], packed[4 * g + 3]};
    stmatrix(tile.pointer_at({row, column + int32_t(16 * g)}, w), regs, false, w);
  }
}

}  // namespace cutejit
