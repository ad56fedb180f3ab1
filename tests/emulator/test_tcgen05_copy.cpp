// tcgen05.ld / st / cp against independent derivations: the register-to-cell maps evaluated from
// CUTLASS's CuTe copy traits (thread-value layouts over the bits of lanes, the ISA's figures in
// CuTe's notation) by a generic layout evaluator here, and tcgen05.cp's source placed in shared
// memory by the ISA's canonical K-major layout written out in this file.
#include <catch2/catch.hpp>

#include "shared_bytes.hpp"

#include <cstring>
#include <vector>

#include "emulator/tcgen05_copy.hpp"

using namespace cutejit::emulator;

namespace {
using test::SharedBytes;

/// A flat CuTe mode: index -> sum of (coordinate x stride), coordinates colexicographic.
struct Mode {
  std::vector<int> shape, stride;
  int operator()(int i) const {
    int off = 0;
    for (size_t d = 0; d < shape.size(); ++d) off += (i % shape[d]) * stride[d], i /= shape[d];
    return off;
  }
};

/// CuTe's DstLayout of a TMEM load: (thread, value bit) -> bit index over lanes of `row_bits`.
struct CuteTv {
  const char* opcode;
  uint32_t half_offset;
  Mode thread, value;
  int row_bits;
};

// Transcribed from cute/atom/copy_traits_sm100.hpp (SM100_TMEM_LOAD_*: DstLayout and ValID).
const CuteTv cute_maps[] = {
    {"tcgen05.ld.sync.aligned.32x32b.x1.b32", 0, {{32}, {32}}, {{32}, {1}}, 32},
    {"tcgen05.ld.sync.aligned.32x32b.x2.b32", 0, {{32}, {64}}, {{64}, {1}}, 64},
    {"tcgen05.ld.sync.aligned.32x32b.x4.b32", 0, {{32}, {128}}, {{128}, {1}}, 128},
    {"tcgen05.ld.sync.aligned.16x64b.x1.b32", 0, {{2, 2, 8}, {512, 32, 64}}, {{32}, {1}}, 64},
    {"tcgen05.ld.sync.aligned.16x64b.x2.b32", 0, {{2, 2, 8}, {1024, 32, 128}}, {{32, 2}, {1, 64}}, 128},
    {"tcgen05.ld.sync.aligned.16x64b.x4.b32", 0, {{2, 2, 8}, {2048, 32, 256}}, {{32, 4}, {1, 64}}, 256},
    {"tcgen05.ld.sync.aligned.16x128b.x1.b32", 0, {{4, 8}, {32, 128}}, {{32, 2}, {1, 1024}}, 128},
    {"tcgen05.ld.sync.aligned.16x128b.x2.b32", 0, {{4, 8}, {32, 256}}, {{32, 2, 2}, {1, 2048, 128}}, 256},
    {"tcgen05.ld.sync.aligned.16x128b.x4.b32", 0, {{4, 8}, {32, 512}}, {{32, 2, 4}, {1, 4096, 128}}, 512},
    {"tcgen05.ld.sync.aligned.16x256b.x1.b32", 0, {{4, 8}, {64, 256}}, {{64, 2}, {1, 2048}}, 256},
    {"tcgen05.ld.sync.aligned.16x256b.x2.b32", 0, {{4, 8}, {64, 512}}, {{64, 2, 2}, {1, 4096, 256}}, 512},
    {"tcgen05.ld.sync.aligned.16x256b.x4.b32", 0, {{4, 8}, {64, 1024}}, {{64, 2, 4}, {1, 8192, 256}}, 1024},
    // CuTe issues 16x32bx2 with its second half right after the first (immHalfSplitoff = num).
    {"tcgen05.ld.sync.aligned.16x32bx2.x1.b32", 1, {{16, 2}, {64, 32}}, {{32}, {1}}, 64},
    {"tcgen05.ld.sync.aligned.16x32bx2.x2.b32", 2, {{16, 2}, {128, 64}}, {{64}, {1}}, 128},
    {"tcgen05.ld.sync.aligned.16x32bx2.x4.b32", 4, {{16, 2}, {256, 128}}, {{128}, {1}}, 256},
};

struct Cell {
  uint32_t lane, column;
};
Cell cute_cell(const CuteTv& m, int t, int r) {
  const int bit = m.thread(t) + m.value(32 * r);
  return {uint32_t(bit / m.row_bits), uint32_t(bit % m.row_bits / 32)};
}

uint32_t tag(uint32_t lane, uint32_t column) { return lane << 16 | column | 0x80000000u; }

TensorMemory& allocated(TensorMemory& t, uint32_t ncols) {
  REQUIRE(t.try_allocate(ncols).has_value());
  return t;
}
}  // namespace

TEST_CASE("tcgen05.ld puts each cell in the register CuTe's traits name", "[emulator][tcgen05]") {
  for (const CuteTv& m : cute_maps) {
    INFO(m.opcode);
    TensorMemory t;
    allocated(t, 64);
    for (uint32_t lane = 0; lane < 128; ++lane)
      for (uint32_t col = 0; col < 64; ++col) t.write(lane, col, tag(lane, col));
    const Tcgen05LdSt op = parse_tcgen05_ld_st(m.opcode);
    const uint32_t regs = tmem_registers(op.shape, op.num);
    std::vector<uint32_t> out(32 * regs);
    // Warp 6 is warp 2 of its warpgroup: lanes 64-95; start 16 lanes in for the 16-lane shapes.
    const uint32_t lane0 = op.shape == TmemShape::s32x32b ? 64 : 80, col0 = 8;
    tcgen05_ld(op, lane0 << 16 | col0, 6, t, out, m.half_offset);
    for (int th = 0; th < 32; ++th)
      for (uint32_t r = 0; r < regs; ++r) {
        const Cell c = cute_cell(m, th, int(r));
        INFO("thread " << th << " register " << r);
        CHECK(out[th * regs + r] == tag(lane0 + c.lane, col0 + c.column));
      }
  }
}

TEST_CASE("tcgen05.st writes each register to the cell CuTe's traits name", "[emulator][tcgen05]") {
  for (const CuteTv& m : cute_maps) {
    INFO(m.opcode);
    std::string st = m.opcode;
    st.replace(st.find(".ld."), 4, ".st.");
    const Tcgen05LdSt op = parse_tcgen05_ld_st(st);
    REQUIRE(op.store);
    const uint32_t regs = tmem_registers(op.shape, op.num);
    TensorMemory t;
    allocated(t, 64);
    std::vector<uint32_t> in(32 * regs);
    for (uint32_t i = 0; i < in.size(); ++i) in[i] = 1000 + i;
    tcgen05_st(op, 0u << 16 | 4, 0, t, in, m.half_offset);
    for (int th = 0; th < 32; ++th)
      for (uint32_t r = 0; r < regs; ++r) {
        const Cell c = cute_cell(m, th, int(r));
        CHECK(t.read(c.lane, 4 + c.column) == 1000 + th * regs + r);
      }
  }
}

TEST_CASE("16x32bx2 places its second half immHalfSplitoff columns on", "[emulator][tcgen05]") {
  // The ISA: threads 0-15 access the 16 lanes at the address, threads 16-31 the same lanes
  // immHalfSplitoff columns further.
  TensorMemory t;
  allocated(t, 32);
  const Tcgen05LdSt op = parse_tcgen05_ld_st("tcgen05.st.sync.aligned.16x32bx2.x2.b32");
  std::vector<uint32_t> in(64);
  for (uint32_t i = 0; i < 64; ++i) in[i] = i;
  tcgen05_st(op, 16u << 16 | 0, 0, t, in, 10);
  CHECK(t.read(16, 0) == 0);    // thread 0, register 0
  CHECK(t.read(16, 1) == 1);    // thread 0, register 1
  CHECK(t.read(31, 1) == 31);   // thread 15, register 1
  CHECK(t.read(16, 10) == 32);  // thread 16, register 0
  CHECK(t.read(31, 11) == 63);  // thread 31, register 1
  CHECK_FALSE(t.is_initialised(16, 2));
}

TEST_CASE("tcgen05.ld / st: lane quarters, uninitialised cells and bad opcodes are faults", "[emulator][tcgen05]") {
  TensorMemory t;
  allocated(t, 32);
  const Tcgen05LdSt st = parse_tcgen05_ld_st("tcgen05.st.sync.aligned.32x32b.x1.b32");
  const Tcgen05LdSt ld = parse_tcgen05_ld_st("tcgen05.ld.sync.aligned.32x32b.x1.b32");
  std::vector<uint32_t> regs(32, 7);
  CHECK_THROWS_WITH(tcgen05_st(st, 0, 1, t, regs), Catch::Contains("lanes 32-63"));  // warp 1 at lane 0
  CHECK_NOTHROW(tcgen05_st(st, 32u << 16, 5, t, regs));                             // warp 5 = warp 1 of its group
  CHECK_THROWS_WITH(tcgen05_ld(ld, 0, 0, t, regs), Catch::Contains("read of uninitialised TMEM at lane 0 column 0"));
  CHECK_THROWS_AS(tcgen05_ld(ld, 32u << 16 | 40, 1, t, regs), Fault);  // column 40 is not allocated
  std::vector<uint32_t> few(31);
  CHECK_THROWS_AS(tcgen05_ld(ld, 32u << 16, 1, t, few), Fault);
  const Tcgen05LdSt x = parse_tcgen05_ld_st("tcgen05.ld.sync.aligned.16x256b.x32.b32");
  CHECK(tmem_registers(x.shape, x.num) == 128);
  CHECK_THROWS_AS(parse_tcgen05_ld_st("tcgen05.ld.sync.aligned.16x256b.x64.b32"), Fault);
  CHECK_THROWS_AS(parse_tcgen05_ld_st("tcgen05.ld.sync.aligned.16x128b.x128.b32"), Fault);
  CHECK_THROWS_AS(parse_tcgen05_ld_st("tcgen05.ld.sync.aligned.32x32b.x3.b32"), Fault);
  CHECK_THROWS_WITH(parse_tcgen05_ld_st("tcgen05.ld.sync.aligned.32x32b.x2.pack::16b.b32"), Catch::Contains("not modelled"));
}

namespace {
/// A K-major matrix of `rows` x `bytes` bytes in shared memory by the ISA's canonical layout:
/// no swizzle ((8,m),(T,2k)):((1T,SBO),(1,LBO)) or 128-byte swizzle ((8,m),(T,2k)):((8T,SBO),(1,T))
/// with address bits [4,7) ^= [7,10), T = 16 one-byte elements.
uint32_t canonical_k_major(bool swizzle128, uint32_t start, uint32_t sbo, uint32_t lbo, uint32_t r, uint32_t b) {
  if (!swizzle128) return start + (r % 8) * 16 + (r / 8) * sbo + (b / 16) * lbo + b % 16;
  const uint32_t a = start + (r % 8) * 128 + (r / 8) * sbo + b;
  return a ^ (((a >> 7) & 7) << 4);
}
uint64_t smem_desc(uint32_t start, uint32_t lbo, uint32_t sbo, uint64_t swizzle_mode) {
  return uint64_t(start >> 4) | uint64_t(lbo >> 4) << 16 | uint64_t(sbo >> 4) << 32 | uint64_t(1) << 46 | swizzle_mode << 61;
}
uint8_t source_byte(uint32_t cta, uint32_t r, uint32_t b) { return uint8_t(r * 37 + b * 5 + cta * 101 + 3); }
uint32_t source_word(uint32_t cta, uint32_t r, uint32_t w) {
  return uint32_t(source_byte(cta, r, 4 * w)) | uint32_t(source_byte(cta, r, 4 * w + 1)) << 8 |
         uint32_t(source_byte(cta, r, 4 * w + 2)) << 16 | uint32_t(source_byte(cta, r, 4 * w + 3)) << 24;
}
}  // namespace

TEST_CASE("tcgen05.cp copies a canonical K-major matrix row by row into lanes", "[emulator][tcgen05]") {
  struct Case {
    const char* opcode;
    uint32_t rows, bytes;
  };
  const Case cases[] = {{"tcgen05.cp.cta_group::1.128x256b", 128, 32},
                        {"tcgen05.cp.cta_group::1.128x128b", 128, 16},
                        {"tcgen05.cp.cta_group::1.4x256b", 4, 32},
                        {"tcgen05.cp.cta_group::1.32x128b.warpx4", 32, 16},
                        {"tcgen05.cp.cta_group::1.64x128b.warpx2::02_13", 64, 16},
                        {"tcgen05.cp.cta_group::1.64x128b.warpx2::01_23", 64, 16}};
  for (const bool sw : {false, true})
    for (const Case& c : cases) {
      INFO(c.opcode << (sw ? " (128B swizzle)" : " (no swizzle)"));
      SharedBytes s(32768);
      const uint32_t start = 2048, sbo = sw ? 1024 : 128, lbo = sw ? 16 : 2048;
      for (uint32_t r = 0; r < c.rows; ++r)
        for (uint32_t b = 0; b < c.bytes; ++b) s.bytes[canonical_k_major(sw, start, sbo, lbo, r, b)] = source_byte(0, r, b);
      TensorMemory t;
      allocated(t, 32);
      TensorMemory* tm[] = {&t};
      Memory* sh[] = {&s};
      tcgen05_cp(parse_tcgen05_cp(c.opcode), 0u << 16 | 20, smem_desc(start, lbo, sbo, sw ? 2 : 0), sh, tm);
      const std::string op = c.opcode;
      for (uint32_t r = 0; r < c.rows; ++r) {
        // Which lanes receive row r: 128 rows one each; 4x256b one row per lane quarter (CuTe's
        // UTCCP traits); warpx4 every warp's quarter; warpx2 the pair's two quarters, each pair
        // receiving half the rows (02_13: warps 0 and 2 rows 0-31, warps 1 and 3 rows 32-63).
        std::vector<uint32_t> lanes;
        if (c.rows == 128) lanes = {r};
        else if (c.rows == 4) lanes = {32 * r};
        else if (c.rows == 32) lanes = {r, r + 32, r + 64, r + 96};
        else if (op.ends_with("02_13")) lanes = r < 32 ? std::vector<uint32_t>{r, 64 + r} : std::vector<uint32_t>{32 + r - 32, 96 + r - 32};
        else lanes = r < 32 ? std::vector<uint32_t>{r, 32 + r} : std::vector<uint32_t>{64 + r - 32, 96 + r - 32};
        for (const uint32_t lane : lanes)
          for (uint32_t w = 0; w < c.bytes / 4; ++w) {
            INFO("row " << r << " lane " << lane << " word " << w);
            CHECK(t.read(lane, 20 + w) == source_word(0, r, w));
          }
      }
    }
}

TEST_CASE("tcgen05.cp.cta_group::2 fills each CTA of the pair from its own shared memory", "[emulator][tcgen05]") {
  SharedBytes s0(8192), s1(8192);
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t b = 0; b < 16; ++b) {
      s0.bytes[canonical_k_major(false, 0, 128, 512, r, b)] = source_byte(0, r, b);
      s1.bytes[canonical_k_major(false, 0, 128, 512, r, b)] = source_byte(1, r, b);
    }
  TensorMemory t0, t1;
  allocated(t0, 32);
  allocated(t1, 32);
  TensorMemory* tm[] = {&t0, &t1};
  Memory* sh[] = {&s0, &s1};
  tcgen05_cp(parse_tcgen05_cp("tcgen05.cp.cta_group::2.32x128b.warpx4"), 0, smem_desc(0, 512, 128, 0), sh, tm);
  CHECK(t0.read(96 + 7, 2) == source_word(0, 7, 2));
  CHECK(t1.read(96 + 7, 2) == source_word(1, 7, 2));
}

TEST_CASE("tcgen05.cp: what is refused", "[emulator][tcgen05]") {
  CHECK_THROWS_AS(parse_tcgen05_cp("tcgen05.cp.cta_group::1.64x128b"), Fault);
  CHECK_THROWS_AS(parse_tcgen05_cp("tcgen05.cp.cta_group::1.128x256b.warpx4"), Fault);
  CHECK_THROWS_AS(parse_tcgen05_cp("tcgen05.cp.cta_group::3.128x256b"), Fault);
  CHECK_THROWS_WITH(parse_tcgen05_cp("tcgen05.cp.cta_group::2.128x128b.b8x16.b6x16_p32"), Catch::Contains("not modelled"));
  SharedBytes s(4096);
  TensorMemory t;
  allocated(t, 32);
  TensorMemory* tm[] = {&t};
  Memory* sh[] = {&s};
  const Tcgen05Cp op = parse_tcgen05_cp("tcgen05.cp.cta_group::1.128x128b");
  CHECK_THROWS_AS(tcgen05_cp(op, 0, smem_desc(0, 2048, 128, 0) & ~(uint64_t(1) << 46), sh, tm), Fault);  // version bits
  CHECK_THROWS_AS(tcgen05_cp(op, 0, smem_desc(0, 2048, 128, 3), sh, tm), Fault);                        // swizzle mode 3
  CHECK_THROWS_AS(tcgen05_cp(op, 0, smem_desc(0, 16, 512, 0), sh, tm), Fault);  // 16 groups of 8 rows 512 bytes apart: past 4 KB
  CHECK_THROWS_AS(tcgen05_cp(op, 1u << 16, smem_desc(0, 16, 128, 0), sh, tm), Fault);  // lane 1
}
