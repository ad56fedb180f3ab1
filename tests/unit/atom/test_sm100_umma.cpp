// The tcgen05.mma operand descriptors a tile's layout gives (atom/sm100/umma.hpp), checked
// against the values the PTX ISA's canonical layouts call for (written out here), and the
// layouts the tensor core cannot read refused at trace time.
#include <catch2/catch.hpp>

#include "cutejit/atom/sm100/umma.hpp"
#include "cutejit/core/error.hpp"

using namespace cutejit;
using Catch::Contains;
using sm100::Major;
using sm100::SmemSwizzle;

namespace {
detail::SmemOperandPlan plan(const Layout& l, std::optional<Swizzle> sw, int bytes, int mn) {
  return detail::plan_smem_operand(l, sw, 0, bytes, mn, 32 / bytes, "tcgen05.mma's A", detail::Where::current());
}
}  // namespace

TEST_CASE("a K-major 128-byte-swizzled tile (a TMA box's) gives SBO 1024 and K steps of 32 bytes", "[unit]") {
  // 128 rows of 64 bf16 (128 bytes), Sw<3,3,3>: the layout gemm_sm100 reads A in.
  auto p = plan(make_layout({128, 64}, LayoutRight{}), Swizzle(3, 3, 3), 2, 128);
  CHECK(p.major == Major::k);
  CHECK(p.fields.swizzle == SmemSwizzle::bytes128);
  CHECK(p.fields.stride_byte_offset == 1024);  // 8 rows of 128 bytes
  CHECK(p.fields.leading_byte_offset == 16);   // unused for swizzled K-major tiles ("assumed 1")
  CHECK(p.step_bytes == std::vector<uint32_t>{0, 32, 64, 96});
  CHECK(p.alignment == 1024);
  // FP8: 128 bytes are 128 elements, four steps of 32.
  auto f = plan(make_layout({256, 128}, LayoutRight{}), Swizzle(3, 4, 3), 1, 256);
  CHECK(f.fields.swizzle == SmemSwizzle::bytes128);
  CHECK(f.step_bytes == std::vector<uint32_t>{0, 32, 64, 96});
  // 64-byte rows with the 64-byte swizzle: SBO 512, two steps.
  auto s64 = plan(make_layout({128, 32}, LayoutRight{}), Swizzle(2, 3, 3), 2, 128);
  CHECK(s64.fields.swizzle == SmemSwizzle::bytes64);
  CHECK(s64.fields.stride_byte_offset == 512);
  CHECK(s64.step_bytes == std::vector<uint32_t>{0, 32});
  CHECK(s64.alignment == 512);
  // K across two 128-byte swizzle atoms (two TMA boxes side by side, 16 KB apart).
  Layout two_atoms(IntTuple{128, IntTuple{64, 2}}, IntTuple{64, IntTuple{1, 128 * 64}});
  auto wide = plan(two_atoms, Swizzle(3, 3, 3), 2, 128);
  CHECK(wide.step_bytes == std::vector<uint32_t>{0, 32, 64, 96, 16384, 16416, 16448, 16480});
}

TEST_CASE("MN-major and unswizzled core-matrix tiles give the ISA's LBO and SBO", "[unit]") {
  // MN-major, 128-byte swizzle: chunks of 64 M (128 bytes) by 64 K rows, the second chunk 8 KB
  // on: LBO = 8192 (chunk to chunk), SBO = 1024 (8 K rows of 128 bytes), a K step = 16 rows.
  Layout mn_major(IntTuple{IntTuple{64, 2}, 64}, IntTuple{IntTuple{1, 64 * 64}, 64});
  auto p = plan(mn_major, Swizzle(3, 3, 3), 2, 128);
  CHECK(p.major == Major::mn);
  CHECK(p.fields.leading_byte_offset == 8192);
  CHECK(p.fields.stride_byte_offset == 1024);
  CHECK(p.step_bytes == std::vector<uint32_t>{0, 2048, 4096, 6144});
  // K-major without a swizzle: 8 x 16-byte core matrices (64 contiguous bf16), K-adjacent ones
  // 128 bytes apart (LBO), 8-row groups 1024 bytes apart (SBO).
  Layout core(IntTuple{IntTuple{8, 16}, IntTuple{8, 8}}, IntTuple{IntTuple{8, 512}, IntTuple{1, 64}});
  auto c = plan(core, std::nullopt, 2, 128);
  CHECK(c.major == Major::k);
  CHECK(c.fields.swizzle == SmemSwizzle::none);
  CHECK(c.fields.leading_byte_offset == 128);
  CHECK(c.fields.stride_byte_offset == 1024);
  CHECK(c.step_bytes == std::vector<uint32_t>{0, 256, 512, 768});
  CHECK(c.alignment == 16);
}

TEST_CASE("tiles the tensor core cannot read are trace-time errors naming the element", "[unit]") {
  // Row-major without a swizzle: rows of 128 bytes are not 16-byte core matrices.
  CHECK_THROWS_WITH(plan(make_layout({128, 64}, LayoutRight{}), std::nullopt, 2, 128),
                    Contains("tcgen05.mma's A tile (128,64):(64,1) is not in a layout the tensor core reads: element (1, 0) is at "
                             "byte 128 of the tile, but the descriptor (K-major, no swizzle"));
  // The 128-byte swizzle on 256-byte rows: the hardware's rows are 128 bytes.
  CHECK_THROWS_WITH(plan(make_layout({128, 128}, LayoutRight{}), Swizzle(3, 3, 3), 2, 128),
                    Contains("is not in a layout the tensor core reads: element (1, 0) is at byte 288"));
  // A swizzle the descriptor has no mode for (Sw<3,4,3> is the FP8 one).
  CHECK_THROWS_WITH(plan(make_layout({128, 64}, LayoutRight{}), Swizzle(3, 4, 3), 2, 128),
                    Contains("has the swizzle Sw<3,4,3>, which the tensor core cannot read; for 2-byte elements it reads Sw<3,3,3>"));
  CHECK_THROWS_WITH(plan(make_layout({64, 64}, LayoutRight{}), Swizzle(3, 3, 3), 2, 128),
                    Contains("has 64 rows, but the atom reads 128"));
  CHECK_THROWS_WITH(plan(make_layout({128, 24}, LayoutRight{}), Swizzle(1, 3, 3), 2, 128),
                    Contains("24 elements of K, not a multiple of the 16 one MMA reads"));
  CHECK_THROWS_WITH(plan(Layout(IntTuple{128, 64}, IntTuple{128, 2}), Swizzle(3, 3, 3), 2, 128),
                    Contains("has neither K nor MN contiguous"));
}

TEST_CASE("the tcgen05 atoms' instruction descriptors", "[unit]") {
  // bf16 128 x 256 K-major: the value the ISA's table gives (test_sm100_descriptors.cpp).
  CHECK(SM100_MMA_F16BF16_SS<bf16, 128, 256>::instruction_descriptor() == 0x0840'0490u);
  // f16, 128 x 128, B MN-major: A f16 = 0, transpose B in bit 16, N >> 3 = 16.
  CHECK(SM100_MMA_F16BF16_SS<f16, 128, 128, UmmaMajor::k, UmmaMajor::mn>::instruction_descriptor() ==
        (1u << 4 | 1u << 16 | 16u << 17 | 8u << 24));
  // e4m3 (kind::f8f6f4, code 0), 128 x 64.
  CHECK(SM100_MMA_F8F6F4_SS<f8e4m3, 128, 64>::instruction_descriptor() == (1u << 4 | 8u << 17 | 8u << 24));
  CHECK(SM100_MMA_F8F6F4_SS<f8e5m2, 128, 64>::kind() == sm100::MmaKind::f8f6f4);
  CHECK(SM100_MMA_F16BF16_SS<bf16, 128, 8>::instruction_descriptor() == (1u << 4 | 1u << 7 | 1u << 10 | 1u << 17 | 8u << 24));  // N = 8
  // kind::tf32 (the ISA's first table): D f32 = 1 in bits 4-5, A and B tf32 = 2 in 7-9 and
  // 10-12; 128 x 64. K is 8 elements: 32 bytes of f32.
  CHECK(SM100_MMA_TF32_SS<128, 64>::instruction_descriptor() == (1u << 4 | 2u << 7 | 2u << 10 | 8u << 17 | 8u << 24));
  CHECK(SM100_MMA_TF32_SS<128, 64>::kind() == sm100::MmaKind::tf32);
  CHECK(SM100_MMA_TF32_SS<128, 64>::k == 8);
  // kind::i8: D s32 = 2 in bits 4-5, A and B s8 = 1 (u8 = 0); K is 32.
  CHECK(SM100_MMA_S8_SS<int8_t, 128, 64>::instruction_descriptor() == (2u << 4 | 1u << 7 | 1u << 10 | 8u << 17 | 8u << 24));
  CHECK(SM100_MMA_S8_SS<uint8_t, 128, 128>::instruction_descriptor() == (2u << 4 | 16u << 17 | 8u << 24));
  CHECK(SM100_MMA_S8_SS<int8_t, 128, 64>::kind() == sm100::MmaKind::i8);
  CHECK(SM100_MMA_S8_SS<int8_t, 128, 64>::k == 32);
}
