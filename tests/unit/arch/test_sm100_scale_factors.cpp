// The models of a block-scaled tcgen05.mma's scale factors (arch/sm100/scale_factors.hpp):
// the 128x4 blocked layout against an independent construction of it, and the copy and read
// maps against cells written out by hand.
#include <catch2/catch.hpp>

#include <vector>

#include "cutejit/arch/sm100/scale_factors.hpp"
#include "cutejit/atom/sm100/umma_block_scaled.hpp"
#include "cutejit/core/error.hpp"

using namespace cutejit;
using Catch::Contains;
using sm100::TmemByte;

namespace {
/// The blocked layout built the way its users describe it, as array reshapes: a (rows, blocks)
/// matrix viewed as (rows / 128, 128, blocks / 4, 4), permuted to (rows / 128, blocks / 4, 128,
/// 4), each 128 x 4 block viewed as (4, 32, 4) and transposed to (32, 4, 4), all flattened.
/// Returns, for each (row, block), the position it lands at.
std::vector<int64_t> blocked_by_reshapes(int64_t rows, int64_t blocks) {
  std::vector<int64_t> at(size_t(rows * blocks));
  int64_t position = 0;
  for (int64_t rb = 0; rb < rows / 128; ++rb)
    for (int64_t kb = 0; kb < blocks / 4; ++kb)
      for (int64_t i = 0; i < 32; ++i)      // (4, 32, 4) transposed: the 32 first
        for (int64_t q = 0; q < 4; ++q)     // then the 4 row groups
          for (int64_t j = 0; j < 4; ++j) { // then the 4 blocks
            const int64_t row = rb * 128 + q * 32 + i, block = kb * 4 + j;
            at[size_t(row * blocks + block)] = position++;
          }
  return at;
}
}  // namespace

TEST_CASE("the 128x4 blocked scale layout: hand-written offsets and the reshapes that define it", "[unit]") {
  CHECK(sm100::blocked_scale_offset(0, 0, 8) == 0);
  CHECK(sm100::blocked_scale_offset(0, 1, 8) == 1);     // the next block of a row: the next byte
  CHECK(sm100::blocked_scale_offset(1, 0, 8) == 16);    // the next row: 16 bytes on
  CHECK(sm100::blocked_scale_offset(32, 0, 8) == 4);    // row 32 shares row 0's 16 bytes
  CHECK(sm100::blocked_scale_offset(0, 4, 8) == 512);   // blocks 4-7: the next chunk
  CHECK(sm100::blocked_scale_offset(128, 0, 8) == 1024);  // rows 128-255 after both chunks of 0-127
  CHECK(sm100::blocked_scale_offset(33, 6, 8) == 512 + 16 + 4 + 2);
  CHECK(sm100::blocked_scale_offset(0, 0, 3) == 0);
  CHECK(sm100::blocked_scale_offset(128, 0, 3) == 512);  // 3 blocks pad to one chunk per 128 rows
  CHECK_THROWS_WITH(sm100::blocked_scale_offset(0, 8, 8), Contains("outside a scale tensor of 8 blocks"));

  const int64_t rows = 384, blocks = 12;
  const std::vector<int64_t> want = blocked_by_reshapes(rows, blocks);
  const Layout l = blocked_scale_layout(rows, blocks);
  CHECK(to_string(l) == "((32,4,3),(4,3)):((16,4,1536),(1,512))");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      INFO(r << ", " << b);
      REQUIRE(sm100::blocked_scale_offset(r, b, blocks) == want[size_t(r * blocks + b)]);
      REQUIRE(l(IntTuple{r, b}).value() == want[size_t(r * blocks + b)]);
    }
}

TEST_CASE("tcgen05.cp.32x128b.warpx4 puts a 16-byte row into 4 columns of its lane in every quarter", "[unit]") {
  using Cells = std::array<TmemByte, 4>;
  CHECK(sm100::copy_32x128b_warpx4(0, 0) == Cells{TmemByte{0, 0, 0}, {32, 0, 0}, {64, 0, 0}, {96, 0, 0}});
  CHECK(sm100::copy_32x128b_warpx4(5, 7) == Cells{TmemByte{5, 1, 3}, {37, 1, 3}, {69, 1, 3}, {101, 1, 3}});
  CHECK(sm100::copy_32x128b_warpx4(31, 15) == Cells{TmemByte{31, 3, 3}, {63, 3, 3}, {95, 3, 3}, {127, 3, 3}});
  CHECK_THROWS_WITH(sm100::copy_32x128b_warpx4(32, 0), Contains("rows 0-31 of 16 bytes"));
  CHECK_THROWS_WITH(sm100::copy_32x128b_warpx4(0, 16), Contains("rows 0-31 of 16 bytes"));
}

TEST_CASE("the block-scaled MMA reads row r's scales from column r / 32 of lane r % 32, a byte per K block", "[unit]") {
  using Cells = std::array<TmemByte, 4>;
  // Row 33 of A, the step's third block, id 0: column 1, byte 2, lane 1 of each quarter.
  CHECK(sm100::scale_factor_read(128, 0, 33, 2) == Cells{TmemByte{1, 1, 2}, {33, 1, 2}, {65, 1, 2}, {97, 1, 2}});
  // Column 200 of a 256-wide B, id 2, second block: column 6, byte 3.
  CHECK(sm100::scale_factor_read(256, 2, 200, 1) == Cells{TmemByte{8, 6, 3}, {40, 6, 3}, {72, 6, 3}, {104, 6, 3}});
  CHECK_THROWS_WITH(sm100::scale_factor_read(128, 2, 0, 2), Contains("would be byte 4 of a 4-byte column"));
  CHECK_THROWS_WITH(sm100::scale_factor_read(64, 0, 0, 0), Contains("128 or 256 rows, not 64"));
  CHECK_THROWS_WITH(sm100::scale_factor_read(128, 0, 128, 0), Contains("outside the operand's 128"));

  CHECK(sm100::scales_per_mma(sm100::BlockScaledKind::mxf8f6f4, 32) == 1);
  CHECK(sm100::scales_per_mma(sm100::BlockScaledKind::mxf4, 32) == 2);
  CHECK(sm100::scales_per_mma(sm100::BlockScaledKind::mxf4nvf4, 32) == 2);
  CHECK(sm100::scales_per_mma(sm100::BlockScaledKind::mxf4nvf4, 16) == 4);
  CHECK_THROWS_WITH(sm100::scales_per_mma(sm100::BlockScaledKind::mxf8f6f4, 16), Contains("every 32 elements of K, not 16"));
  CHECK_THROWS_WITH(sm100::scales_per_mma(sm100::BlockScaledKind::mxf4, 16), Contains("every 32 elements of K, not 16"));
}
