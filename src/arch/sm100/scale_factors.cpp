#include "cutejit/arch/sm100/scale_factors.hpp"

#include <string>

#include "cutejit/core/error.hpp"

namespace cutejit::sm100 {

int64_t blocked_scale_offset(int64_t row, int64_t block, int64_t blocks) {
  if (row < 0 || block < 0 || block >= blocks)
    throw Error("scale (" + std::to_string(row) + ", " + std::to_string(block) + ") is outside a scale tensor of " + std::to_string(blocks) +
                " blocks per row");
  const int64_t chunks_per_row = (blocks + 3) / 4;
  const int64_t chunk = (row / 128) * chunks_per_row + block / 4;
  return chunk * 512 + (row % 32) * 16 + ((row / 32) % 4) * 4 + block % 4;
}

std::array<TmemByte, 4> copy_32x128b_warpx4(int row, int byte) {
  if (row < 0 || row >= 32 || byte < 0 || byte >= 16)
    throw Error("tcgen05.cp.32x128b copies rows 0-31 of 16 bytes, not byte " + std::to_string(byte) + " of row " + std::to_string(row));
  std::array<TmemByte, 4> cells;
  for (int q = 0; q < 4; ++q) cells[size_t(q)] = {.lane = row + 32 * q, .column = byte / 4, .byte = byte % 4};
  return cells;
}

int scales_per_mma(BlockScaledKind kind, int vector) {
  // One MMA step reads 32 bytes of K: 32 FP8/FP6 elements (one byte each) or 64 FP4 ones.
  const int k = kind == BlockScaledKind::mxf8f6f4 ? 32 : 64;
  const bool ok = vector == 32 || (vector == 16 && kind == BlockScaledKind::mxf4nvf4);
  if (!ok)
    throw Error(to_string(kind) + " scales every 32 elements of K" + std::string(kind == BlockScaledKind::mxf4nvf4 ? " or every 16" : "") +
                ", not " + std::to_string(vector));
  return k / vector;
}

std::array<TmemByte, 4> scale_factor_read(int extent, int id, int mn, int j) {
  if (extent != 128 && extent != 256)
    throw Error("this model covers scale operands of 128 or 256 rows, not " + std::to_string(extent));
  if (mn < 0 || mn >= extent) throw Error("row " + std::to_string(mn) + " is outside the operand's " + std::to_string(extent));
  if (id < 0 || j < 0 || id + j > 3)
    throw Error("scale " + std::to_string(j) + " of an MMA step with scale-factor id " + std::to_string(id) +
                " would be byte " + std::to_string(id + j) + " of a 4-byte column");
  std::array<TmemByte, 4> cells;
  for (int q = 0; q < 4; ++q) cells[size_t(q)] = {.lane = mn % 32 + 32 * q, .column = mn / 32, .byte = id + j};
  return cells;
}

}  // namespace cutejit::sm100
