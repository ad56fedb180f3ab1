/** \file
 * Where the scale factors of a block-scaled tcgen05.mma live, as host functions (sm_100
 * family, cta_group::1): a model of each step of their path, so tests can check that what a
 * kernel copies is what the MMA reads, without a GPU.
 *
 *   global memory   the 128x4 "blocked" layout cuBLAS, CUTLASS and PyTorch use for MXFP8 and
 *                   NVFP4: 512-byte chunks of 128 rows x 4 K blocks (`blocked_scale_offset`);
 *   shared memory   a TMA box copies chunks unchanged;
 *   TMEM            tcgen05.cp.32x128b.warpx4 copies a chunk, 32 rows of 16 bytes, to 4 columns
 *                   of every lane quarter (`copy_32x128b_warpx4`);
 *   the MMA         reads row r's scales of its K blocks from one byte lane of one column
 *                   (`scale_factor_read`).
 *
 * The ISA gives the last two only as figures: the maps here are read off CUTLASS's TMEM scale
 * factor fragments (`tmem_sf_frg` with its 4-by-1 duplication) and copy traits, by hand. They
 * are this path's premises; a Blackwell GPU has not confirmed them.
 */
#pragma once

#include <array>
#include <cstdint>

#include "cutejit/arch/sm100/descriptors.hpp"

namespace cutejit::sm100 {

/// A byte of Tensor Memory: its lane (0-127), 32-bit column, and byte in the column (0 holds
/// bits 0-7).
struct TmemByte {
  int lane = 0;
  int column = 0;
  int byte = 0;
  auto operator<=>(const TmemByte&) const = default;
};

/// The byte offset of the scale of `row`, K block `block`, in a scale-factor tensor of
/// `blocks` K blocks per row in the 128x4 blocked layout: rows padded to 128 and blocks to 4,
/// chunk (row / 128, block / 4) at ((row / 128) ceil(blocks / 4) + block / 4) 512, and in a
/// chunk (row % 32) 16 + ((row / 32) % 4) 4 + block % 4 (cuBLAS's "1D block scaling factors
/// layout"). Throws Error for a coordinate outside the tensor.
int64_t blocked_scale_offset(int64_t row, int64_t block, int64_t blocks);

/// tcgen05.cp.cta_group::1.32x128b.warpx4: byte `byte` (0-15) of source row `row` (0-31)
/// lands in column byte / 4, byte byte % 4, of lane row + 32 q for each lane quarter q
/// (columns relative to the copy's address, whose lane is 0).
std::array<TmemByte, 4> copy_32x128b_warpx4(int row, int byte);

/// Scale factors one MMA step reads per row: K / vector (mxf8f6f4 1, mxf4 2, mxf4nvf4 with 16
/// elements per scale 4, with 32 2). Throws Error for a vector size the kind does not take.
int scales_per_mma(BlockScaledKind kind, int vector);

/// Where the MMA reads the scale of row (of A) or column (of B) `mn` for the `j`-th K block of
/// its step, relative to the scale operand's TMEM address, when the operand has `extent` rows
/// (M of A, 128; N of B, 128 or 256) and the instruction descriptor's scale-factor id is `id`:
/// byte id + j of column mn / 32, in lane mn % 32 of every lane quarter (the quarters hold
/// the same bytes: which one the hardware reads is not modelled, so a copy must fill all four).
/// Throws Error for an extent other than 128 or 256, or bytes past the column (id + j > 3).
std::array<TmemByte, 4> scale_factor_read(int extent, int id, int mn, int j);

}  // namespace cutejit::sm100
