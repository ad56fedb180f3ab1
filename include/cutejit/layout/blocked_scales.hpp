/** \file
 * The 128x4 "blocked" layout of block-scaled operands' scale factors, the one cuBLAS, CUTLASS
 * and PyTorch use for MXFP8, MXFP4 and NVFP4 (cuBLAS's "1D block scaling factors layout"):
 * 512-byte chunks of 128 rows x 4 K blocks, chunk (row / 128, block / 4) at
 * ((row / 128) (blocks / 4) + block / 4) 512, and in a chunk (row % 32) 16 + ((row / 32) % 4) 4
 * + block % 4. Every Blackwell block-scaled GEMM of cutejit takes its scales so: the sm_100 ones
 * copy whole chunks to TMEM, the sm_120 ones read a row's scales of an MMA step as one word.
 */
#pragma once

#include "cutejit/layout/layout.hpp"

namespace cutejit {

/// The blocked layout of a scale tensor of `rows` rows (a multiple of 128: the rows of a
/// matrix padded to it) and `blocks` K blocks (a multiple of 4), (row, block) -> byte:
/// ((32,4,rows/128),(4,blocks/4)) : ((16,4,128 blocks),(1,512)). A tile of whole chunks, as a
/// TMA box leaves it in shared memory, has the same layout at the tile's extents.
inline Layout blocked_scale_layout(const Integer& rows, const Integer& blocks) {
  return Layout(IntTuple{IntTuple{32, 4, rows / 128}, IntTuple{4, blocks / 4}}, IntTuple{IntTuple{16, 4, blocks * 128}, IntTuple{1, 512}});
}

}  // namespace cutejit
