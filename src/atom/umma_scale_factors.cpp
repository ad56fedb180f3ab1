// A block-scaled tcgen05.mma's scale tile: its copies into TMEM and each MMA step's scale
// operand, derived from the tile's layout and checked by the models of
// arch/sm100/scale_factors.hpp at every scale the MMAs read.
#include <map>
#include <string>

#include "cutejit/atom/sm100/umma_block_scaled.hpp"
#include "cutejit/layout/algebra.hpp"
#include "layout/index_table.hpp"

namespace cutejit::detail {

namespace {
std::string cell(const sm100::TmemByte& c) {
  return "lane " + std::to_string(c.lane) + ", column " + std::to_string(c.column) + ", byte " + std::to_string(c.byte);
}
}  // namespace

UmmaScalePlan plan_umma_scale_factors(const Layout& layout, int mn, int scales_per_mma, const char* which, Where w) {
  const std::string name = std::string("the MMA's ") + which + " tile " + to_string(layout);
  if (rank(layout) != 2) fail(name + " is (MN, K blocks), of rank 2", w);
  const int64_t rows = size(mode(layout, 0)).value(), blocks = size(mode(layout, 1)).value();
  if (mn != 128 && mn != 256) fail(std::string("the block-scaled MMA's ") + which + " covers 128 or 256 rows here, not " + std::to_string(mn), w);
  if (rows != mn) fail(name + " has " + std::to_string(rows) + " rows, but the atom reads " + std::to_string(mn), w);
  if (blocks == 0 || blocks % 4 != 0 || blocks % scales_per_mma != 0)
    fail(name + " has " + std::to_string(blocks) + " K blocks; tcgen05.cp moves them 4 at a time (a multiple of 4)", w);
  const std::vector<int64_t> row_at = index_table(mode(layout, 0)), block_at = index_table(mode(layout, 1));
  auto byte_of = [&](int64_t r, int64_t b) { return row_at[size_t(r)] + block_at[size_t(b)]; };

  UmmaScalePlan plan;
  // The copy's source: 32 rows of 16 bytes, one after the other (no swizzle, K-major, 8-row
  // groups 128 bytes apart; one 16-byte core matrix along K, so LBO is not read: 16 as CUTLASS).
  plan.copy_fields = {.leading_byte_offset = 16, .stride_byte_offset = 128};
  // Each K-block group of 4 takes mn / 32 columns: 4 per 128 rows.
  const int group_columns = mn / 32;
  plan.columns = int(blocks / 4) * group_columns;
  // What the copies leave in TMEM: the tile's byte in each cell they fill.
  std::map<sm100::TmemByte, int64_t> filled;
  for (int64_t g = 0; g < blocks / 4; ++g)
    for (int nb = 0; nb < mn / 128; ++nb) {
      const int64_t start = byte_of(128 * nb, 4 * g);
      if (start < 0 || start % 16 != 0)
        fail(name + ": the chunk of rows " + std::to_string(128 * nb) + "... and blocks " + std::to_string(4 * g) + "... starts at byte " +
                 std::to_string(start) + ", not a multiple of 16 (tcgen05.cp's descriptor counts 16-byte units)",
             w);
      const UmmaScalePlan::Copy copy{.byte = uint32_t(start), .column = uint32_t(g * group_columns + 4 * nb)};
      sm100::SmemDescriptor d = plan.copy_fields;
      d.start_address = copy.byte;
      for (int r = 0; r < 32; ++r)
        for (int k = 0; k < 16; ++k)
          for (sm100::TmemByte c : sm100::copy_32x128b_warpx4(r, k)) {
            c.column += int(copy.column);
            filled[c] = sm100::operand_address(d, sm100::Major::k, 8, r, k);
          }
      plan.copies.push_back(copy);
    }
  for (int64_t s = 0; s < blocks / scales_per_mma; ++s) {
    const int64_t first = s * scales_per_mma;
    plan.steps.push_back({.column = uint32_t((first / 4) * group_columns), .id = int(first % 4)});
  }
  // Every scale each MMA step reads must be where the copies put that scale's byte.
  for (int64_t b = 0; b < blocks; ++b) {
    const UmmaScalePlan::Step& step = plan.steps[size_t(b / scales_per_mma)];
    for (int r = 0; r < mn; ++r)
      for (sm100::TmemByte c : sm100::scale_factor_read(mn, step.id, r, int(b % scales_per_mma))) {
        c.column += int(step.column);
        auto it = filled.find(c);
        const int64_t want = byte_of(r, b);
        if (it == filled.end() || it->second != want)
          fail(name + " is not in a layout the MMA reads its scales in: scale (" + std::to_string(r) + ", " + std::to_string(b) +
                   ") is at byte " + std::to_string(want) + " of the tile, but MMA step " + std::to_string(b / scales_per_mma) +
                   " reads it at TMEM " + cell(c) +
                   (it == filled.end() ? std::string(", which no tcgen05.cp fills")
                                       : ", which tcgen05.cp fills from byte " + std::to_string(it->second)) +
                   "; the layout the copies take is 512-byte chunks of 128 rows x 4 blocks, ((32,4),4):((16,4),1) each",
               w);
      }
  }
  return plan;
}

}  // namespace cutejit::detail
