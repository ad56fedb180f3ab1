/** \file
 * The 128x4 "blocked" layout of block-scaled operands' scale factors, the one cuBLAS, CUTLASS
 * and PyTorch use for MXFP8, MXFP4 and NVFP4 (cuBLAS's "1D block scaling factors layout"):
 * 512-byte chunks of 128 rows x 4 K blocks, chunk (row / 128, block / 4) at
 * ((row / 128) (blocks / 4) + block / 4) 512, and in a chunk (row % 32) 16 + ((row / 32) % 4) 4
 * + block % 4. Every Blackwell block-scaled GEMM of cutejit takes its scales so: the sm_100 ones
 * copy whole chunks to TMEM, the sm_120 ones read a thread's scales of an MMA step from one
 * 16-byte group (for NVFP4, four atoms' words in one load).
 */
#pragma once

#include <cstdint>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "cutejit/core/error.hpp"
#include "cutejit/layout/layout.hpp"

namespace cutejit {

/// The blocked layout of a scale tensor of `rows` rows (a multiple of 128: the rows of a
/// matrix padded to it) and `blocks` K blocks (a multiple of 4), (row, block) -> byte:
/// ((32,4,rows/128),(4,blocks/4)) : ((16,4,128 blocks),(1,512)). A tile of whole chunks, as a
/// TMA box leaves it in shared memory, has the same layout at the tile's extents.
inline Layout blocked_scale_layout(const Integer& rows, const Integer& blocks) {
  return Layout(IntTuple{IntTuple{32, 4, rows / 128}, IntTuple{4, blocks / 4}}, IntTuple{IntTuple{16, 4, blocks * 128}, IntTuple{1, 512}});
}

/// The bytes of a scale tensor of `rows` rows and `blocks` K blocks in the blocked layout: rows
/// padded to 128, blocks to 4.
inline int64_t blocked_scale_bytes(int64_t rows, int64_t blocks) { return (rows + 127) / 128 * 128 * ((blocks + 3) / 4 * 4); }

/// Scale factors given row by row (`rows` x `blocks` bytes, row-major, as a quantiser writes
/// them) in the blocked layout, rows padded to 128 and blocks to 4 with `padding`: what the
/// block-scaled GEMMs take for SFA (rows = M) and SFB (rows = N).
inline std::vector<uint8_t> blocked_scales(std::span<const uint8_t> row_major, int64_t rows, int64_t blocks, uint8_t padding = 0,
                                           const std::source_location& where = std::source_location::current()) {
  if (rows < 1 || blocks < 1 || int64_t(row_major.size()) != rows * blocks)
    throw Error("blocked_scales needs rows x blocks scale bytes row by row, not " + std::to_string(row_major.size()) + " bytes for " +
                    std::to_string(rows) + " x " + std::to_string(blocks),
                where);
  const Layout blocked = blocked_scale_layout((rows + 127) / 128 * 128, (blocks + 3) / 4 * 4);
  std::vector<uint8_t> out(size_t(blocked_scale_bytes(rows, blocks)), padding);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) out[size_t(blocked(r, b).value())] = row_major[size_t(r * blocks + b)];
  return out;
}

}  // namespace cutejit
