// The block-scaled tcgen05.mma atom's scale path (atom/sm100/umma_block_scaled.hpp): the copies
// and MMA steps a scale tile's layout gives, against values written out here, and tiles in
// other layouts refused at trace time with the scale and both bytes named.
#include <catch2/catch.hpp>

#include "cutejit/atom/sm100/umma_block_scaled.hpp"
#include "cutejit/core/error.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
using Plan = detail::UmmaScalePlan;
Plan plan(const Layout& l, int mn, int scales_per_mma) {
  return detail::plan_umma_scale_factors(l, mn, scales_per_mma, "SFA", detail::Where::current());
}
std::vector<std::pair<uint32_t, uint32_t>> copies(const Plan& p) {
  std::vector<std::pair<uint32_t, uint32_t>> v;
  for (const Plan::Copy& c : p.copies) v.emplace_back(c.byte, c.column);
  return v;
}
std::vector<std::pair<uint32_t, int>> steps(const Plan& p) {
  std::vector<std::pair<uint32_t, int>> v;
  for (const Plan::Step& s : p.steps) v.emplace_back(s.column, s.id);
  return v;
}
}  // namespace

TEST_CASE("a stage of NVFP4 scales (128 rows x 16 blocks): four copies, four MMA steps of four scales each", "[unit]") {
  // Four 512-byte chunks to columns 0, 4, 8 and 12; each MMA step (64 FP4 of K, 4 scales per
  // row) reads all 4 bytes of its own group of columns.
  Plan p = plan(blocked_scale_layout(128, 16), 128, 4);
  CHECK(copies(p) == std::vector<std::pair<uint32_t, uint32_t>>{{0, 0}, {512, 4}, {1024, 8}, {1536, 12}});
  CHECK(steps(p) == std::vector<std::pair<uint32_t, int>>{{0, 0}, {4, 0}, {8, 0}, {12, 0}});
  CHECK(p.columns == 16);
  // The copy's source: 32 rows of 16 bytes, K-major without swizzle (bits 46-48 hold 0b001).
  CHECK(p.copy_fields.stride_byte_offset == 128);
  CHECK(p.copy_fields.swizzle == sm100::SmemSwizzle::none);
  CHECK(p.copy_fields.encode() == (uint64_t(1) << 46 | uint64_t(128 >> 4) << 32 | uint64_t(16 >> 4) << 16));
}

TEST_CASE("MXFP8 and MXFP4 scales: one or two scales per step, the scale-factor id walking the column's bytes", "[unit]") {
  // MXFP8: 4 blocks of 32 per 128-byte stage, one scale per MMA step (32 elements): one chunk,
  // four steps in the same 4 columns, ids 0-3.
  Plan mx8 = plan(blocked_scale_layout(128, 4), 128, 1);
  CHECK(copies(mx8) == std::vector<std::pair<uint32_t, uint32_t>>{{0, 0}});
  CHECK(steps(mx8) == std::vector<std::pair<uint32_t, int>>{{0, 0}, {0, 1}, {0, 2}, {0, 3}});
  CHECK(mx8.columns == 4);
  // MXFP4: 8 blocks of 32 per 256 FP4, two per step: ids 0 and 2 in each group.
  Plan mx4 = plan(blocked_scale_layout(128, 8), 128, 2);
  CHECK(steps(mx4) == std::vector<std::pair<uint32_t, int>>{{0, 0}, {0, 2}, {4, 0}, {4, 2}});
  // B of 256 columns: two chunks per group of 4 blocks, rows 128-255 in columns 4-7, 8 columns
  // per group.
  Plan b256 = plan(blocked_scale_layout(256, 8), 256, 1);
  CHECK(copies(b256) == std::vector<std::pair<uint32_t, uint32_t>>{{0, 0}, {1024, 4}, {512, 8}, {1536, 12}});
  CHECK(steps(b256)[4] == std::pair<uint32_t, int>{8, 0});
  CHECK(b256.columns == 16);
}

TEST_CASE("scale tiles in layouts the copies do not produce are refused, naming the scale and both bytes", "[unit]") {
  // Row-major bytes (4 per row): scale (1, 0) is at byte 4, but the MMA reads it where the copy
  // put byte 16 of the tile.
  CHECK_THROWS_WITH(plan(make_layout({128, 4}, LayoutRight{}), 128, 1),
                    Contains("scale (1, 0) is at byte 4 of the tile, but MMA step 0 reads it at TMEM lane 1, column 0, byte 0, "
                             "which tcgen05.cp fills from byte 16"));
  // Column-major: rows contiguous.
  CHECK_THROWS_WITH(plan(make_layout({128, 4}), 128, 1), Contains("scale (1, 0) is at byte 1 of the tile"));
  // The chunks' groups swapped (rows 32-63 in the bytes of rows 0-31's neighbours).
  CHECK_THROWS_WITH(plan(Layout(IntTuple{IntTuple{32, 4}, 4}, IntTuple{IntTuple{4, 128}, 1}), 128, 1),
                    Contains("is not in a layout the MMA reads its scales in"));
  CHECK_THROWS_WITH(plan(blocked_scale_layout(128, 4), 256, 1), Contains("has 128 rows, but the atom reads 256"));
  CHECK_THROWS_WITH(plan(make_layout({128, 6}, LayoutRight{}), 128, 1), Contains("has 6 K blocks; tcgen05.cp moves them 4 at a time"));
  CHECK_THROWS_WITH(plan(make_layout({64, 4}, LayoutRight{}), 64, 1), Contains("covers 128 or 256 rows here, not 64"));
}

TEST_CASE("the block-scaled atoms' instruction descriptors, and a wrong scale tile refused at the user's line", "[unit]") {
  // NVFP4 128 x 128: E2M1 codes 1 (bits 7, 10), N >> 3 = 16 at 17, UE4M3 (bit 23 clear), M >> 7
  // = 1 at 27: 0x08200480.
  CHECK(SM100_MMA_MXF4NVF4_SS<128, 128>::instruction_descriptor(0, 0) == 0x08200480u);
  // MXFP8 e4m3 (code 0) 128 x 128, UE8M0 (bit 23), ids 3 and 1 at 29-30 and 4-5.
  CHECK(SM100_MMA_MXF8F6F4_SS<f8e4m3, 128, 128>::instruction_descriptor(3, 1) == (0x08A00000u | 3u << 29 | 1u << 4));
  CHECK(SM100_MMA_MXF4NVF4_SS<128, 128>::scales == 4);
  CHECK(SM100_MMA_MXF4_SS<128, 256>::scales == 2);
  CHECK(SM100_MMA_MXF8F6F4_SS<f8e5m2, 128, 256>::scales == 1);

  Kernel k{"umma_scale_tile_row_major", [](Tensor<u32> out) {
    Pointer<uint8_t> smem = dynamic_shared_aligned<uint8_t>(1024);
    UmmaScaleFactors sfa(make_tensor(smem, make_layout({128, 16})), 128, 4, "SFA");  // column-major
    sfa.copy_to_tmem(out(0));
  }};
  CHECK_THROWS_WITH(k.compile(Target::parse("sm_100a"), test::vector_arg<uint32_t>()),
                    Contains("test_sm100_umma_block_scaled.cpp:89") && Contains("scale (1, 0) is at byte 1 of the tile"));
}
