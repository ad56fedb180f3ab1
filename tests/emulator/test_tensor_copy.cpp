// Tensor maps and the bulk tensor copies against independent derivations: the swizzle against the
// ISA's "Swizzling Modes" tables copied here cell by cell and against CuTe's Swizzle<B,M,S>
// definition (cute/swizzle.hpp) written out here; the constraints against the CUDA driver's
// documented list for cuTensorMapEncodeTiled; loads, stores and reductions against the ISA's
// tiled-mode rules (box, traversal stride, out-of-bound fill) evaluated here element by element;
// reduction results as literal bit patterns worked out by hand from the formats' definitions.
#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cstring>
#include <vector>

#include "emulator/tensor_copy.hpp"
#include "emulator/tensor_map.hpp"

using namespace cutejit::emulator;

namespace {

/// Bytes at [base, base + size), bounds checked.
class Bytes final : public Memory {
 public:
  Bytes(uint64_t base, size_t size, uint8_t fill = 0) : base(base), bytes(size, fill) {}
  void read(uint64_t a, void* out, size_t n) override {
    if (a < base || a + n > base + bytes.size()) throw Fault("read out of bounds");
    std::memcpy(out, bytes.data() + (a - base), n);
  }
  void write(uint64_t a, const void* in, size_t n) override {
    if (a < base || a + n > base + bytes.size()) throw Fault("write out of bounds");
    std::memcpy(bytes.data() + (a - base), in, n);
  }
  template <class T>
  T at(uint64_t a) {
    return load<T>(a);
  }
  uint64_t base;
  std::vector<uint8_t> bytes;
};

/// CuTe's Swizzle<B,M,S> (S > 0): offset ^ ((offset & (((1 << B) - 1) << (M + S))) >> S).
uint64_t cute_swizzle(int b, int m, int s, uint64_t o) { return o ^ ((o & (((uint64_t(1) << b) - 1) << (m + s))) >> s); }

struct SwizzleParams {
  TensorSwizzle mode;
  int b, m, s;
};
const SwizzleParams swizzles[] = {{TensorSwizzle::b32, 1, 4, 3},
                                  {TensorSwizzle::b64, 2, 4, 3},
                                  {TensorSwizzle::b128, 3, 4, 3},
                                  {TensorSwizzle::b128_atom32, 2, 5, 2},
                                  {TensorSwizzle::b128_atom64, 1, 6, 1}};

uint64_t expected_swizzle(TensorSwizzle mode, uint64_t a) {
  for (const SwizzleParams& p : swizzles)
    if (p.mode == mode) return cute_swizzle(p.b, p.m, p.s, a);
  return a;
}

/// A valid 2D map of `type`: `cols` x `rows` elements, rows `stride` bytes apart.
TensorMapDescription map_2d(TensorDataType type, uint64_t address, uint64_t cols, uint64_t rows, uint64_t stride, uint32_t box0,
                            uint32_t box1, TensorSwizzle sw = TensorSwizzle::none) {
  TensorMapDescription d;
  d.data_type = type;
  d.rank = 2;
  d.global_address = address;
  d.global_dims = {cols, rows, 0, 0, 0};
  d.global_strides = {stride, 0, 0, 0};
  d.box_dims = {box0, box1, 0, 0, 0};
  d.swizzle = sw;
  return d;
}

}  // namespace

TEST_CASE("the TMA swizzle is the ISA's tables", "[tensor_copy]") {
  // Each table row is one 128-byte line; the cell at position c names the 16-byte chunk (of the
  // unswizzled data) that lands there. The pattern starts on the table's alignment and repeats.
  const int t32[2][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}};
  const int t64[4][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4}};
  const int t128[8][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4},
                          {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2}, {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};
  // The 32-byte-atom table's cells are pairs of chunks, the 64-byte-atom table's are quadruples.
  const int atom32[4][4] = {{0, 1, 2, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}};
  const int atom64[2][2] = {{0, 1}, {1, 0}};
  auto check = [](TensorSwizzle mode, int lines, int cells, int chunks_per_cell, auto table, uint64_t base) {
    for (int repeat = 0; repeat < 3; ++repeat)
      for (int r = 0; r < lines; ++r)
        for (int pos = 0; pos < cells; ++pos)
          for (int j = 0; j < chunks_per_cell; ++j) {
            const uint64_t line = base + 128 * uint64_t(repeat * lines + r);
            const uint64_t from = line + 16 * uint64_t(table[r][pos] * chunks_per_cell + j);
            const uint64_t to = line + 16 * uint64_t(pos * chunks_per_cell + j);
            for (uint64_t byte : {0, 5, 15}) REQUIRE(tensor_swizzle_address(mode, from + byte) == to + byte);
          }
  };
  check(TensorSwizzle::b32, 2, 8, 1, t32, 256 * 7);
  check(TensorSwizzle::b64, 4, 8, 1, t64, 512 * 3);
  check(TensorSwizzle::b128, 8, 8, 1, t128, 1024 * 5);
  check(TensorSwizzle::b128_atom32, 4, 4, 2, atom32, 512 * 9);
  check(TensorSwizzle::b128_atom64, 2, 2, 4, atom64, 256 * 11);
  CHECK(tensor_swizzle_address(TensorSwizzle::none, 0x1234) == 0x1234);
  CHECK_THROWS_AS(tensor_swizzle_address(TensorSwizzle::b128_atom32_flip8, 0), Fault);
}

TEST_CASE("the TMA swizzle is CuTe's Swizzle<B,M,S> on byte addresses", "[tensor_copy]") {
  for (const SwizzleParams& p : swizzles)
    for (uint64_t a = 0; a < 8192; a += 3) REQUIRE(tensor_swizzle_address(p.mode, a) == cute_swizzle(p.b, p.m, p.s, a));
}

TEST_CASE("tensor maps round-trip through their 128 bytes", "[tensor_copy]") {
  TensorMapDescription d;
  d.data_type = TensorDataType::bfloat16;
  d.rank = 5;
  d.global_address = 0x7f0012345600;
  d.global_dims = {100, 7, 3, 2, 9};
  d.global_strides = {208, 208 * 7, 208 * 21, 208 * 42};
  d.box_dims = {64, 8, 1, 2, 3};
  d.element_strides = {1, 2, 1, 1, 3};
  d.swizzle = TensorSwizzle::b128;
  d.l2_promotion = TensorL2Promotion::b256;
  d.oob_fill = TensorOobFill::nan_request_zero_fma;
  std::array<uint8_t, 128> bytes{};
  encode_tensor_map(d, bytes);
  const TensorMapDescription e = decode_tensor_map(bytes);
  CHECK(e.data_type == d.data_type);
  CHECK(e.rank == d.rank);
  CHECK(e.global_address == d.global_address);
  CHECK(e.global_dims == d.global_dims);
  CHECK(e.global_strides == d.global_strides);
  CHECK(e.box_dims == d.box_dims);
  CHECK(e.element_strides == d.element_strides);
  CHECK(e.interleave == d.interleave);
  CHECK(e.swizzle == d.swizzle);
  CHECK(e.l2_promotion == d.l2_promotion);
  CHECK(e.oob_fill == d.oob_fill);

  std::array<uint8_t, 128> zeros{};
  CHECK_THROWS_WITH(decode_tensor_map(zeros), Catch::Contains("not made by the emulated device"));
  std::array<uint8_t, 128> changed = bytes;
  changed[96] = 0;  // box dimension 0's low byte: 64 -> 0
  CHECK_THROWS_WITH(decode_tensor_map(changed), Catch::Contains("box dimension 0"));
  d.box_dims[0] = 72;  // 144 bytes, wider than the 128-byte swizzle
  CHECK_THROWS_WITH(encode_tensor_map(d, bytes), Catch::Contains("swizzle span"));
}

TEST_CASE("tensor map checks are cuTensorMapEncodeTiled's documented constraints", "[tensor_copy]") {
  const TensorMapDescription ok = map_2d(TensorDataType::float16, 0x10000, 100, 50, 256, 64, 32, TensorSwizzle::b128);
  REQUIRE(tensor_map_error(ok) == "");
  struct Case {
    const char* what;
    void (*change)(TensorMapDescription&);
    const char* words;
  };
  const Case cases[] = {
      {"rank 0", [](TensorMapDescription& d) { d.rank = 0; }, "rank 0"},
      {"rank 6", [](TensorMapDescription& d) { d.rank = 6; }, "rank 6"},
      {"interleave below rank 3", [](TensorMapDescription& d) { d.interleave = TensorInterleave::b16; }, "rank 3 or more"},
      {"an 8-byte aligned address", [](TensorMapDescription& d) { d.global_address += 8; }, "16-byte aligned"},
      {"a zero dimension", [](TensorMapDescription& d) { d.global_dims[1] = 0; }, "global dimension 1"},
      {"a dimension past 2^32", [](TensorMapDescription& d) { d.global_dims[0] = (uint64_t(1) << 32) + 1; }, "global dimension 0"},
      {"a stride of 264", [](TensorMapDescription& d) { d.global_strides[0] = 264; }, "multiple of 16"},
      {"a stride of 2^40", [](TensorMapDescription& d) { d.global_strides[0] = uint64_t(1) << 40; }, "below 2^40"},
      {"a box of 257", [](TensorMapDescription& d) { d.box_dims[1] = 257; }, "box dimension 1"},
      {"a box row of 20 bytes", [](TensorMapDescription& d) { d.box_dims[0] = 10; }, "multiple of 16"},
      {"a box row wider than the swizzle", [](TensorMapDescription& d) { d.swizzle = TensorSwizzle::b64; }, "swizzle span"},
      {"element stride 0", [](TensorMapDescription& d) { d.element_strides[1] = 0; }, "element stride 1"},
      {"element stride 9", [](TensorMapDescription& d) { d.element_strides[0] = 9; }, "element stride 0"},
      {"swizzle 7", [](TensorMapDescription& d) { d.swizzle = TensorSwizzle(7); }, "CUtensorMapSwizzle"},
      {"data type 16", [](TensorMapDescription& d) { d.data_type = TensorDataType(16); }, "CUtensorMapDataType"},
      {"NaN fill of integers", [](TensorMapDescription& d) { d.data_type = TensorDataType::uint16, d.oob_fill = TensorOobFill::nan_request_zero_fma; },
       "floating-point"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    TensorMapDescription d = ok;
    c.change(d);
    CHECK_THAT(tensor_map_error(d), Catch::Contains(c.words));
  }
  TensorMapDescription d = map_2d(TensorDataType::uint16, 0x10010, 64, 8, 128, 16, 4);
  d.rank = 3, d.global_dims[2] = 2, d.global_strides[1] = 1024, d.box_dims[2] = 1;
  d.interleave = TensorInterleave::b32;
  d.swizzle = TensorSwizzle::b32;
  CHECK_THAT(tensor_map_error(d), Catch::Contains("32-byte aligned"));
  d.global_address = 0x10040;
  CHECK(tensor_map_error(d) == "");
  d.swizzle = TensorSwizzle::b64;
  CHECK_THAT(tensor_map_error(d), Catch::Contains("needs SWIZZLE_32B"));
}

TEST_CASE("a TMA load of a ragged box fills what lies outside the tensor and swizzles the rest", "[tensor_copy]") {
  // A bf16 tensor of 7 rows of 40 elements, rows 96 bytes apart; element (y, x) holds y * 64 + x + 1.
  const uint64_t gbase = 0x20000;
  Bytes global(gbase, 96 * 7);
  for (uint16_t y = 0; y < 7; ++y)
    for (uint16_t x = 0; x < 40; ++x) global.store<uint16_t>(gbase + 96 * y + 2 * x, uint16_t(y * 64 + x + 1));
  struct Case {
    TensorSwizzle sw;
    uint32_t box0;
    uint64_t dst;
  };
  const Case cases[] = {{TensorSwizzle::none, 24, 4096 + 128},
                        {TensorSwizzle::b32, 16, 4096 + 256},
                        {TensorSwizzle::b64, 32, 4096 + 512},
                        {TensorSwizzle::b128, 64, 4096},
                        {TensorSwizzle::b128, 64, 4096 + 384}};  // off the 1024-byte pattern start
  for (const Case& c : cases)
    for (const std::array<int32_t, 2> coords : {std::array<int32_t, 2>{int32_t(40 - c.box0 / 2), -2}, std::array<int32_t, 2>{-3, 1},
                                                std::array<int32_t, 2>{0, 0}}) {
      INFO("swizzle " << int(c.sw) << ", destination " << c.dst << ", coordinates " << coords[0] << ", " << coords[1]);
      Bytes shared(0, 16384, 0xAB);
      const TensorMapDescription map = map_2d(TensorDataType::bfloat16, gbase, 40, 7, 96, c.box0, 8, c.sw);
      REQUIRE(tensor_load(map, coords, global, shared, c.dst) == c.box0 * 8 * 2);
      for (int32_t r = 0; r < 8; ++r)
        for (int32_t e = 0; e < int32_t(c.box0); ++e) {
          const int32_t x = coords[0] + e, y = coords[1] + r;
          const bool inside = x >= 0 && x < 40 && y >= 0 && y < 7;
          const uint64_t at = expected_swizzle(c.sw, c.dst + 2 * uint64_t(r * c.box0 + e));
          REQUIRE(shared.at<uint16_t>(at) == (inside ? uint16_t(y * 64 + x + 1) : 0));
        }
      // Nothing outside the box's bytes was written.
      for (uint64_t a = 0; a < shared.bytes.size(); ++a)
        if (a < c.dst || a >= c.dst + c.box0 * 16) REQUIRE(shared.bytes[a] == 0xAB);
    }
}

TEST_CASE("a TMA load with the OOB-NaN fill and traversal strides", "[tensor_copy]") {
  // f32, 3D: 8 x 5 x 6 elements, element (z, y, x) = 1000 z + 10 y + x.
  const uint64_t gbase = 0x40000;
  Bytes global(gbase, 32 * 5 * 6);
  for (int z = 0; z < 6; ++z)
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 8; ++x) global.store<float>(gbase + 4 * (x + 8 * (y + 5 * z)), float(1000 * z + 10 * y + x));
  TensorMapDescription map;
  map.data_type = TensorDataType::float32;
  map.rank = 3;
  map.global_address = gbase;
  map.global_dims = {8, 5, 6, 0, 0};
  map.global_strides = {32, 160, 0, 0};
  map.box_dims = {8, 3, 4, 0, 0};
  map.element_strides = {4, 2, 3, 1, 1};  // dimension 0's is ignored: 8, ceil(3 / 2) = 2, ceil(4 / 3) = 2
  map.oob_fill = TensorOobFill::nan_request_zero_fma;
  REQUIRE(tensor_map_error(map) == "");
  CHECK(tensor_box_bytes(map) == 8 * 2 * 2 * 4);
  Bytes shared(0, 1024);
  const int32_t c[3] = {-2, 3, 2};
  REQUIRE(tensor_load(map, c, global, shared, 256) == 128);
  for (int j2 = 0; j2 < 2; ++j2)
    for (int j1 = 0; j1 < 2; ++j1)
      for (int e = 0; e < 8; ++e) {
        const int x = c[0] + e, y = c[1] + 2 * j1, z = c[2] + 3 * j2;
        const bool inside = x >= 0 && x < 8 && y >= 0 && y < 5 && z >= 0 && z < 6;
        const uint32_t bits = shared.at<uint32_t>(256 + 4 * uint64_t(e + 8 * (j1 + 2 * j2)));
        INFO("x " << x << ", y " << y << ", z " << z);
        REQUIRE(bits == (inside ? std::bit_cast<uint32_t>(float(1000 * z + 10 * y + x)) : 0x7FFFFFFFu));
      }
}

TEST_CASE("a TMA store writes only the elements inside the tensor", "[tensor_copy]") {
  // u32, 10 columns x 6 rows, rows 48 bytes apart (8 bytes of padding each).
  const uint64_t gbase = 0x30000;
  for (TensorSwizzle sw : {TensorSwizzle::none, TensorSwizzle::b32}) {
    Bytes global(gbase, 48 * 6, 0xEE);
    Bytes shared(0, 4096);
    const TensorMapDescription map = map_2d(TensorDataType::uint32, gbase, 10, 6, 48, 8, 4, sw);
    const uint64_t src = 1152;  // bit 7 set: the 32-byte swizzle swaps chunks
    for (uint32_t r = 0; r < 4; ++r)
      for (uint32_t e = 0; e < 8; ++e) shared.store<uint32_t>(expected_swizzle(sw, src + 4 * (r * 8 + e)), 100 * r + e);
    const int32_t coords[2] = {6, 3};
    tensor_store(map, coords, shared, src, global);
    for (uint32_t y = 0; y < 6; ++y)
      for (uint32_t b = 0; b < 48; b += 4) {
        const uint32_t x = b / 4;
        const bool in_box = x < 10 && x >= 6 && y >= 3 && y < 7;
        REQUIRE(global.at<uint32_t>(gbase + 48 * y + b) == (in_box ? 100 * (y - 3) + (x - 6) : 0xEEEEEEEEu));
      }
    const int32_t negative[2] = {-1, 0};
    CHECK_THROWS_WITH(tensor_store(map, negative, shared, src, global), Catch::Contains("non-negative"));
    CHECK_THROWS_WITH(tensor_store(map, coords, shared, src + 64, global), Catch::Contains("128-byte aligned"));
  }
}

TEST_CASE("TMA reduction element operations", "[tensor_copy]") {
  using T = TensorDataType;
  using O = TensorReduceOp;
  CHECK(tensor_reduce_element(O::add, T::uint32, 0xFFFFFFFFu, 2) == 1);
  CHECK(tensor_reduce_element(O::min, T::int32, uint32_t(-5), 3) == uint32_t(-5));
  CHECK(tensor_reduce_element(O::min, T::uint32, uint32_t(-5), 3) == 3);
  CHECK(tensor_reduce_element(O::max, T::int64, uint64_t(-5), 3) == 3);
  CHECK(tensor_reduce_element(O::inc, T::uint32, 5, 5) == 0);
  CHECK(tensor_reduce_element(O::inc, T::uint32, 4, 5) == 5);
  CHECK(tensor_reduce_element(O::dec, T::uint32, 0, 7) == 7);
  CHECK(tensor_reduce_element(O::dec, T::uint32, 9, 7) == 7);
  CHECK(tensor_reduce_element(O::dec, T::uint32, 3, 7) == 2);
  CHECK(tensor_reduce_element(O::bit_xor, T::uint64, 0xF0F0000000000000ull, 0xFF00000000000001ull) == 0x0FF0000000000001ull);
  // f32: 1.5 + 0.25 = 1.75 (0x3fe00000); 1 + 2^-24 is the midpoint of 1 and 1 + 2^-23: even, 1.
  CHECK(tensor_reduce_element(O::add, T::float32, 0x3FC00000u, 0x3E800000u) == 0x3FE00000u);
  CHECK(tensor_reduce_element(O::add, T::float32, 0x3F800000u, 0x33800000u) == 0x3F800000u);
  // bf16: 1 (0x3f80) + 2^-8 (0x3b80) ties to 0x3f80; 1 + 2^-7 (0x3f81) + 2^-8 ties up to 0x3f82.
  CHECK(tensor_reduce_element(O::add, T::bfloat16, 0x3F80, 0x3B80) == 0x3F80);
  CHECK(tensor_reduce_element(O::add, T::bfloat16, 0x3F81, 0x3B80) == 0x3F82);
  // f16: two least subnormals (0x0001, 2^-24) make 0x0002; 65504 + 65504 overflows to infinity.
  CHECK(tensor_reduce_element(O::add, T::float16, 0x0001, 0x0001) == 0x0002);
  CHECK(tensor_reduce_element(O::add, T::float16, 0x7BFF, 0x7BFF) == 0x7C00);
  CHECK(tensor_reduce_element(O::min, T::float16, 0x7E00, 0x3C00) == 0x3C00);
  CHECK(tensor_reduce_element(O::min, T::float16, 0x8000, 0x0000) == 0x8000);
  CHECK(tensor_reduce_element(O::max, T::float16, 0x8000, 0x0000) == 0x0000);
  CHECK(tensor_reduce_element(O::max, T::bfloat16, 0x4000, 0xC000) == 0x4000);
  CHECK(tensor_reduce_element(O::min, T::bfloat16, 0x4000, 0xC000) == 0xC000);
  CHECK_THROWS_AS(tensor_reduce_element(O::inc, T::int32, 0, 0), Fault);
  CHECK_THROWS_AS(tensor_reduce_element(O::add, T::int64, 0, 0), Fault);
  CHECK_THROWS_AS(tensor_reduce_element(O::bit_xor, T::float32, 0, 0), Fault);
  CHECK_THROWS_AS(tensor_reduce_element(O::add, T::uint8, 0, 0), Fault);
  CHECK_THROWS_AS(tensor_reduce_element(O::max, T::float32, 0, 0), Fault);
}

TEST_CASE("a TMA reduction adds into the elements inside the tensor", "[tensor_copy]") {
  const uint64_t gbase = 0x50000;
  Bytes global(gbase, 64 * 3);
  for (uint32_t y = 0; y < 3; ++y)
    for (uint32_t x = 0; x < 16; ++x) global.store<float>(gbase + 64 * y + 4 * x, float(y * 16 + x));
  Bytes shared(0, 2048);
  const TensorMapDescription map = map_2d(TensorDataType::float32, gbase, 12, 3, 64, 8, 2, TensorSwizzle::b32);
  for (uint32_t i = 0; i < 16; ++i) shared.store<float>(expected_swizzle(TensorSwizzle::b32, 640 + 4 * i), 0.5f * float(i + 1));
  UnsynchronizedReduce target(global);
  const int32_t coords[2] = {8, 2};
  tensor_reduce(TensorReduceOp::add, map, coords, shared, 640, target);
  for (uint32_t y = 0; y < 3; ++y)
    for (uint32_t x = 0; x < 16; ++x) {
      const bool inside = x >= 8 && x < 12 && y == 2;  // columns 12-15 are the row's padding, outside dimension 0
      const float expected = float(y * 16 + x) + (inside ? 0.5f * float((x - 8) + 1) : 0.f);
      REQUIRE(global.at<float>(gbase + 64 * y + 4 * x) == expected);
    }
  CHECK_THROWS_AS(tensor_reduce(TensorReduceOp::inc, map, coords, shared, 640, target), Fault);
}

TEST_CASE("cp.async.bulk copies whole 16-byte multiples", "[tensor_copy]") {
  Bytes from(0x1000, 256), to(0, 256);
  for (size_t i = 0; i < 256; ++i) from.bytes[i] = uint8_t(i * 7);
  bulk_copy(from, 0x1010, to, 32, 48);
  for (size_t i = 0; i < 256; ++i) REQUIRE(to.bytes[i] == (i >= 32 && i < 80 ? uint8_t((i - 32 + 16) * 7) : 0));
  CHECK_THROWS_AS(bulk_copy(from, 0x1008, to, 32, 48), Fault);
  CHECK_THROWS_AS(bulk_copy(from, 0x1010, to, 40, 48), Fault);
  CHECK_THROWS_AS(bulk_copy(from, 0x1010, to, 32, 40), Fault);
}

TEST_CASE("bulk tensor opcodes", "[tensor_copy]") {
  BulkTensorCopy c = parse_bulk_tensor("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster");
  CHECK((c.to_shared && c.shared_cluster && c.rank == 2 && c.multicast && !c.reduce && c.cta_group == 1 && !c.cache_hint));
  c = parse_bulk_tensor("cp.async.bulk.tensor.3d.shared::cta.global.mbarrier::complete_tx::bytes.cta_group::2.L2::cache_hint");
  CHECK((c.to_shared && !c.shared_cluster && c.rank == 3 && c.cta_group == 2 && c.cache_hint));
  c = parse_bulk_tensor("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group");
  CHECK((!c.to_shared && c.rank == 5 && !c.reduce));
  c = parse_bulk_tensor("cp.reduce.async.bulk.tensor.1d.global.shared::cta.xor.tile.bulk_group");
  CHECK((!c.to_shared && c.rank == 1 && c.reduce && c.op == TensorReduceOp::bit_xor));
  CHECK_THROWS_WITH(parse_bulk_tensor("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"),
                    Catch::Contains("not modelled"));
  CHECK_THROWS_AS(parse_bulk_tensor("cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes.multicast::cluster"), Fault);
  CHECK_THROWS_AS(parse_bulk_tensor("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.multicast::cluster"), Fault);
  CHECK_THROWS_AS(parse_bulk_tensor("cp.async.bulk.tensor.2d.shared::cta.global.bulk_group"), Fault);
  CHECK_THROWS_AS(parse_bulk_tensor("cp.reduce.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"), Fault);
  CHECK_THROWS_AS(parse_bulk_tensor("cp.async.bulk.tensor.6d.global.shared::cta.tile.bulk_group"), Fault);
}
