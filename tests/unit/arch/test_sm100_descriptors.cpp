// The tcgen05 descriptors against the PTX ISA's tables ("Matrix Descriptors": the shared-memory
// descriptor layout and the instruction descriptor for kind::tf32/f16/f8f6f4/i8). The expected
// bits are written out here from those tables, field by field, not computed by the encoder.
#include <catch2/catch.hpp>

#include "cutejit/arch/sm100/descriptors.hpp"
#include "cutejit/core/error.hpp"

using namespace cutejit::sm100;
using Catch::Contains;

TEST_CASE("the sm_100 shared-memory descriptor encodes each field where the ISA puts it", "[unit]") {
  // start 1024 B -> 64 in bits 0-13; LBO 16 B -> 1 in 16-29; SBO 1024 B -> 64 in 32-45;
  // 0b001 in 46-48; 128-byte swizzle = 2 in 61-63.
  SmemDescriptor d{.start_address = 1024, .leading_byte_offset = 16, .stride_byte_offset = 1024, .swizzle = SmemSwizzle::bytes128};
  CHECK(d.encode() == 0x4000'4040'0001'0040ull);
  CHECK(SmemDescriptor::decode(0x4000'4040'0001'0040ull) == d);

  // Every field at its maximum, one at a time, lands in its own bits only.
  CHECK(SmemDescriptor{.start_address = 0x3fff0}.encode() == (0x3fffull | 1ull << 46));
  CHECK(SmemDescriptor{.leading_byte_offset = 0x3fff0}.encode() == (0x3fffull << 16 | 1ull << 46));
  CHECK(SmemDescriptor{.stride_byte_offset = 0x3fff0}.encode() == (0x3fffull << 32 | 1ull << 46));
  CHECK(SmemDescriptor{.base_offset = 7}.encode() == (7ull << 49 | 1ull << 46));
  CHECK(SmemDescriptor{.leading_absolute = true}.encode() == (1ull << 52 | 1ull << 46));
  const std::pair<SmemSwizzle, uint64_t> modes[] = {{SmemSwizzle::none, 0},  {SmemSwizzle::bytes128_atom32, 1},
                                                    {SmemSwizzle::bytes128, 2}, {SmemSwizzle::bytes64, 4},
                                                    {SmemSwizzle::bytes32, 6}};
  for (auto [mode, code] : modes) {
    INFO(to_string(mode));
    SmemDescriptor s{.swizzle = mode};
    CHECK(s.encode() == (code << 61 | 1ull << 46));
    CHECK(SmemDescriptor::decode(s.encode()) == s);
  }
}

TEST_CASE("shared-memory descriptors out of range or malformed are refused", "[unit]") {
  CHECK_THROWS_WITH(SmemDescriptor{.start_address = 8}.encode(), Contains("start address is a multiple of 16 below 2^18 bytes, not 8"));
  CHECK_THROWS_WITH(SmemDescriptor{.stride_byte_offset = 1u << 18}.encode(), Contains("stride byte offset"));
  CHECK_THROWS_WITH(SmemDescriptor{.base_offset = 8}.encode(), Contains("base offset is 0 to 7, not 8"));
  CHECK_THROWS_WITH(SmemDescriptor::decode(0), Contains("bits 46-48 must be 0b001, not 0"));
  CHECK_THROWS_WITH(SmemDescriptor::decode(1ull << 46 | 1ull << 14), Contains("reserved bits"));
  CHECK_THROWS_WITH(SmemDescriptor::decode(1ull << 46 | 1ull << 55), Contains("reserved bits"));
  for (uint64_t bad : {3, 5, 7}) CHECK_THROWS_WITH(SmemDescriptor::decode(1ull << 46 | bad << 61), Contains("swizzle mode is 0, 1, 2, 4 or 6"));
}

namespace {
/// CuTe's Swizzle<B,4,3> of a byte address: bits [4, 4+B) ^= bits [7, 7+B).
uint32_t swizzle_address(int b, uint32_t a) { return a ^ (((a >> 7) & ((1u << b) - 1)) << 4); }
}  // namespace

TEST_CASE("the descriptor model reproduces the ISA's canonical-layout examples", "[unit]") {
  // Each exact layout below is the ISA's worked example (in elements), with its LBO and SBO.
  SECTION("K-major, no swizzle, tf32: ((8,2),(4,4)):((4,32),(1,64)), LBO 256 B, SBO 128 B") {
    SmemDescriptor d{.leading_byte_offset = 256, .stride_byte_offset = 128};
    for (int mn = 0; mn < 16; ++mn)
      for (int k = 0; k < 16; ++k) {
        uint32_t element = 4 * (mn % 8) + 32 * (mn / 8) + (k % 4) + 64 * (k / 4);
        CHECK(operand_address(d, Major::k, 32, mn, k) == 4 * element);
      }
  }
  SECTION("K-major, 32-byte swizzle, tf32: ((8,2),(4,4)):((8,64),(1,4)), SBO 256 B (one MMA's 32 bytes of K)") {
    SmemDescriptor d{.leading_byte_offset = 16, .stride_byte_offset = 256, .swizzle = SmemSwizzle::bytes32};
    for (int mn = 0; mn < 16; ++mn)
      for (int k = 0; k < 8; ++k) {
        uint32_t element = 8 * (mn % 8) + 64 * (mn / 8) + (k % 4) + 4 * (k / 4);
        CHECK(operand_address(d, Major::k, 32, mn, k) == swizzle_address(1, 4 * element));
      }
  }
  SECTION("MN-major, no swizzle, bf16: ((8,1,2),(8,2)):((1,8,64),(8,128)), LBO 256 B, SBO 128 B") {
    SmemDescriptor d{.leading_byte_offset = 256, .stride_byte_offset = 128};
    for (int mn = 0; mn < 16; ++mn)
      for (int k = 0; k < 16; ++k) {
        uint32_t element = (mn % 8) + 64 * (mn / 8) + 8 * (k % 8) + 128 * (k / 8);
        CHECK(operand_address(d, Major::mn, 16, mn, k) == 2 * element);
      }
  }
  SECTION("MN-major, 32-byte swizzle, bf16: ((8,2,2),(8,2)):((1,8,128),(16,256)), LBO 256 B, SBO 512 B") {
    SmemDescriptor d{.leading_byte_offset = 256, .stride_byte_offset = 512, .swizzle = SmemSwizzle::bytes32};
    for (int mn = 0; mn < 32; ++mn)
      for (int k = 0; k < 16; ++k) {
        uint32_t element = (mn % 8) + 8 * (mn / 8 % 2) + 128 * (mn / 16) + 16 * (k % 8) + 256 * (k / 8);
        CHECK(operand_address(d, Major::mn, 16, mn, k) == swizzle_address(1, 2 * element));
      }
  }
  SECTION("MN-major, 64-byte swizzle, bf16: ((8,4,2),(8,2)):((1,8,256),(32,512)), LBO 512 B, SBO 1024 B") {
    SmemDescriptor d{.leading_byte_offset = 512, .stride_byte_offset = 1024, .swizzle = SmemSwizzle::bytes64};
    for (int mn = 0; mn < 64; ++mn)
      for (int k = 0; k < 16; ++k) {
        uint32_t element = (mn % 8) + 8 * (mn / 8 % 4) + 256 * (mn / 32) + 32 * (k % 8) + 512 * (k / 8);
        CHECK(operand_address(d, Major::mn, 16, mn, k) == swizzle_address(2, 2 * element));
      }
  }
  SECTION("the model swizzles the absolute address, so a K step inside a 128-byte row is 32 bytes on") {
    // The model's premise (the ISA implies it with the base-offset field; it is what lets a K
    // loop add 32 bytes to the start address): K-major bf16 rows of 128 bytes, 8-row groups
    // 1024 B apart, the tile at 2048. MMA step s starts 32 s bytes in and reads what a
    // 128-byte-swizzled tile holds at (mn, 16 s + k).
    for (uint32_t s = 0; s < 4; ++s) {
      SmemDescriptor d{.start_address = 2048 + 32 * s, .leading_byte_offset = 16, .stride_byte_offset = 1024,
                       .swizzle = SmemSwizzle::bytes128};
      for (int mn = 0; mn < 128; ++mn)
        for (int k = 0; k < 16; ++k)
          CHECK(operand_address(d, Major::k, 16, mn, k) == 2048 + swizzle_address(3, 128 * mn + 2 * (16 * s + k)));
    }
  }
}

TEST_CASE("the descriptor model refuses what it does not cover", "[unit]") {
  CHECK_THROWS_WITH(operand_address(SmemDescriptor{.base_offset = 1}, Major::k, 16, 0, 0), Contains("base offset 1"));
  CHECK_THROWS_WITH(operand_address(SmemDescriptor{.swizzle = SmemSwizzle::bytes128_atom32}, Major::k, 16, 0, 0),
                    Contains("32-byte atoms"));
  CHECK_THROWS_WITH(operand_address(SmemDescriptor{}, Major::k, 12, 0, 0), Contains("4, 6, 8, 16 or 32 bits, not 12"));
  CHECK_THROWS_WITH(operand_address(SmemDescriptor{}, Major::k, 4, 0, 1), Contains("does not start on a byte"));
  CHECK_THROWS_WITH(operand_address(SmemDescriptor{.swizzle = SmemSwizzle::bytes32}, Major::k, 16, 0, 16),
                    Contains("byte 32 of K is past the 32-byte swizzled row"));
}

TEST_CASE("the tcgen05 instruction descriptor encodes each field where the ISA puts it", "[unit]") {
  // bf16 x bf16 -> f32, 128 x 256, both K-major: D f32 = 1 in 4-5; A, B bf16 = 1 in 7-9 and
  // 10-12; N >> 3 = 32 in 17-22; M >> 4 = 8 in 24-28.
  InstrDescriptor bf16{.kind = MmaKind::f16, .a = OperandType::bf16, .b = OperandType::bf16, .d = AccumulatorType::f32,
                       .m = 128, .n = 256};
  CHECK(bf16.encode() == 0x0840'0490u);
  CHECK(InstrDescriptor::decode(0x0840'0490u, MmaKind::f16) == bf16);

  // e4m3 x e5m2 -> f16, 64 x 8, A MN-major: B e5m2 = 1 in 10-12; transpose A in 15; N 1 in 17; M 4 in 24.
  InstrDescriptor fp8{.kind = MmaKind::f8f6f4, .a = OperandType::e4m3, .b = OperandType::e5m2, .d = AccumulatorType::f16,
                      .a_major = Major::mn, .m = 64, .n = 8};
  CHECK(fp8.encode() == 0x0402'8400u);
  CHECK(InstrDescriptor::decode(0x0402'8400u, MmaKind::f8f6f4) == fp8);

  // s8 x u8 -> s32 saturating, 128 x 16: saturate in 3, D s32 = 2 in 4-5, A s8 = 1 in 7.
  InstrDescriptor i8{.kind = MmaKind::i8, .a = OperandType::s8, .b = OperandType::u8, .d = AccumulatorType::s32, .saturate = true,
                     .m = 128, .n = 16};
  CHECK(i8.encode() == 0x0804'00a8u);
  CHECK(InstrDescriptor::decode(0x0804'00a8u, MmaKind::i8) == i8);

  // The FP6/FP4 codes (E2M3 3, E3M2 4, E2M1 5), tf32 2, negation and B's transpose.
  InstrDescriptor mixed{.kind = MmaKind::f8f6f4, .a = OperandType::e2m1, .b = OperandType::e3m2, .d = AccumulatorType::f32,
                        .negate_a = true, .m = 128, .n = 64};
  CHECK(mixed.encode() == (1u << 4 | 5u << 7 | 4u << 10 | 1u << 13 | 8u << 17 | 8u << 24));
  InstrDescriptor tf32{.kind = MmaKind::tf32, .a = OperandType::tf32, .b = OperandType::tf32, .d = AccumulatorType::f32,
                       .b_major = Major::mn, .negate_b = true, .m = 64, .n = 128};
  CHECK(tf32.encode() == (1u << 4 | 2u << 7 | 2u << 10 | 1u << 14 | 1u << 16 | 16u << 17 | 4u << 24));
  CHECK(InstrDescriptor::decode(tf32.encode(), MmaKind::tf32) == tf32);
  InstrDescriptor e2m3{.kind = MmaKind::f8f6f4, .a = OperandType::e2m3, .b = OperandType::e2m3, .m = 128, .n = 128};
  CHECK(InstrDescriptor::decode(e2m3.encode(), MmaKind::f8f6f4).a == OperandType::e2m3);
}

TEST_CASE("instruction descriptors a kind does not allow are refused", "[unit]") {
  auto with = [](InstrDescriptor d) { return d; };
  CHECK_THROWS_WITH(with({.kind = MmaKind::f16, .a = OperandType::e4m3}).encode(), Contains("kind::f16 MMA does not take e4m3"));
  CHECK_THROWS_WITH(with({.kind = MmaKind::tf32, .a = OperandType::tf32, .b = OperandType::tf32, .d = AccumulatorType::f16}).encode(),
                    Contains("does not accumulate into f16"));
  CHECK_THROWS_WITH(with({.kind = MmaKind::i8, .a = OperandType::s8, .b = OperandType::s8, .d = AccumulatorType::f32}).encode(),
                    Contains("does not accumulate into f32"));
  CHECK_THROWS_WITH(with({.saturate = true}).encode(), Contains("saturation is for kind::i8 only"));
  CHECK_THROWS_WITH(with({.kind = MmaKind::i8, .a = OperandType::s8, .b = OperandType::s8, .d = AccumulatorType::s32, .negate_a = true})
                        .encode(),
                    Contains("cannot be negated"));
  CHECK_THROWS_WITH(with({.kind = MmaKind::f8f6f4, .a = OperandType::e2m1, .b = OperandType::e4m3, .a_major = Major::mn}).encode(),
                    Contains("4-bit operand A is read K-major only"));
  CHECK_THROWS_WITH(with({.m = 136}).encode(), Contains("M is a multiple of 16 below 512, not 136"));
  CHECK_THROWS_WITH(with({.n = 12}).encode(), Contains("N is a multiple of 8 below 512, not 12"));
  CHECK_THROWS_WITH(InstrDescriptor::decode(1u, MmaKind::f16), Contains("sparse"));
  CHECK_THROWS_WITH(InstrDescriptor::decode(1u << 23, MmaKind::f16), Contains("reserved bits"));
  CHECK_THROWS_WITH(InstrDescriptor::decode(2u << 7, MmaKind::f16), Contains("type code 2 of A is not a kind::f16 type"));
  CHECK_THROWS_WITH(InstrDescriptor::decode(3u << 4, MmaKind::f16), Contains("D type code"));
  // Fields that decode but that the kind forbids: saturation outside i8, an M of 0.
  CHECK_THROWS_WITH(InstrDescriptor::decode(0x0840'0498u, MmaKind::f16), Contains("saturation is for kind::i8 only"));
  CHECK_THROWS_WITH(InstrDescriptor::decode(1u << 4 | 1u << 7 | 1u << 10 | 32u << 17, MmaKind::f16), Contains("M is a multiple of 16"));
}

TEST_CASE("the block-scaled instruction descriptor encodes each field where the ISA puts it", "[unit]") {
  // kind::mxf8f6f4, e4m3 x e4m3 (codes 0), UE8M0 (bit 23), N >> 3 = 32 in 17-22, M >> 7 = 1 in 27-28.
  BlockScaledInstrDescriptor mx8{.kind = BlockScaledKind::mxf8f6f4, .a = OperandType::e4m3, .b = OperandType::e4m3, .m = 128, .n = 256};
  CHECK(mx8.encode() == 0x08C0'0000u);
  CHECK(BlockScaledInstrDescriptor::decode(0x08C0'0000u, BlockScaledKind::mxf8f6f4) == mx8);
  // kind::mxf4nvf4: E2M1 is 1 in both type fields, UE4M3 is 0 in bit 23, scale-factor ids 2 in
  // 29-30 (A) and 4-5 (B), N 128.
  BlockScaledInstrDescriptor nv4{.kind = BlockScaledKind::mxf4nvf4, .a = OperandType::e2m1, .b = OperandType::e2m1,
                                 .scale = ScaleType::ue4m3, .scale_a_id = 2, .scale_b_id = 2, .m = 128, .n = 128};
  CHECK(nv4.encode() == 0x4820'04A0u);
  CHECK(BlockScaledInstrDescriptor::decode(0x4820'04A0u, BlockScaledKind::mxf4nvf4) == nv4);
  // kind::mxf4, M 256 (2 in 27-28), N 64, K = 96 (bit 31).
  BlockScaledInstrDescriptor mx4{.kind = BlockScaledKind::mxf4, .a = OperandType::e2m1, .b = OperandType::e2m1, .m = 256, .n = 64,
                                 .k96 = true};
  CHECK(mx4.encode() == 0x9090'0480u);
  CHECK(BlockScaledInstrDescriptor::decode(0x9090'0480u, BlockScaledKind::mxf4) == mx4);
  // FP6 codes in kind::mxf8f6f4 (E2M3 3, E3M2 4) and A's transpose.
  BlockScaledInstrDescriptor mixed{.kind = BlockScaledKind::mxf8f6f4, .a = OperandType::e5m2, .b = OperandType::e3m2,
                                   .scale_a_id = 3, .a_major = Major::mn, .m = 128, .n = 8};
  CHECK(mixed.encode() == (1u << 7 | 4u << 10 | 1u << 15 | 1u << 17 | 1u << 23 | 1u << 27 | 3u << 29));
}

TEST_CASE("block-scaled instruction descriptors a kind does not allow are refused", "[unit]") {
  auto with = [](BlockScaledInstrDescriptor d) { return d; };
  CHECK_THROWS_WITH(with({.kind = BlockScaledKind::mxf4, .a = OperandType::e4m3, .b = OperandType::e2m1}).encode(),
                    Contains("kind::mxf4 MMA does not take e4m3"));
  CHECK_THROWS_WITH(with({.scale = ScaleType::ue4m3}).encode(), Contains("UE4M3 scale factors are for kind::mxf4nvf4 only"));
  CHECK_THROWS_WITH(with({.kind = BlockScaledKind::mxf4, .a = OperandType::e2m1, .b = OperandType::e2m1, .scale_a_id = 1}).encode(),
                    Contains("scale-factor id is 0 or 2 for kind::mxf4, not 1"));
  CHECK_THROWS_WITH(with({.a = OperandType::e2m1, .a_major = Major::mn}).encode(), Contains("4-bit operand A of kind::mxf8f6f4 is read K-major only"));
  CHECK_THROWS_WITH(with({.m = 64}).encode(), Contains("M is 128 or 256, not 64"));
  CHECK_THROWS_WITH(with({.k96 = true}).encode(), Contains("K = 96 is for the FP4 kinds only"));
  CHECK_THROWS_WITH(BlockScaledInstrDescriptor::decode(1u << 2, BlockScaledKind::mxf8f6f4), Contains("sparse"));
  CHECK_THROWS_WITH(BlockScaledInstrDescriptor::decode(1u << 25, BlockScaledKind::mxf8f6f4), Contains("reserved bits"));
  CHECK_THROWS_WITH(BlockScaledInstrDescriptor::decode(0u, BlockScaledKind::mxf4), Contains("type codes are 1 (E2M1)"));
  // The decoder refuses what the encoder refuses: M = 0, an odd scale-factor id of an FP4 kind.
  CHECK_THROWS_WITH(BlockScaledInstrDescriptor::decode(1u << 17 | 1u << 23, BlockScaledKind::mxf8f6f4), Contains("M is 128 or 256, not 0"));
  CHECK_THROWS_WITH(BlockScaledInstrDescriptor::decode(1u << 7 | 1u << 10 | 1u << 17 | 1u << 23 | 1u << 27 | 1u << 4, BlockScaledKind::mxf4),
                    Contains("scale-factor id is 0 or 2"));
}

TEST_CASE("TMEM addresses: the lane in bits 16-31, the column in bits 0-15", "[unit]") {
  CHECK(TmemAddress{.lane = 5, .column = 7}.encode() == 0x0005'0007u);
  CHECK(TmemAddress{.lane = 96, .column = 256}.encode() == 0x0060'0100u);  // the last epilogue quarter, the second accumulator
  CHECK(TmemAddress::decode(0x007F'01FFu) == TmemAddress{127, 511});
  CHECK_THROWS_WITH(TmemAddress{.lane = 128}.encode(), Contains("lane 0-127 and column 0-511, not lane 128"));
  CHECK_THROWS_WITH(TmemAddress{.column = 512}.encode(), Contains("column 512"));
  CHECK_THROWS_WITH(TmemAddress::decode(0x0000'0200u), Contains("column 512"));
}
