// wgmma.mma_async against independent derivations: descriptor fields as literal numbers composed
// by hand from the ISA's "Matrix Descriptor Format" table; operands placed in shared memory by the
// ISA's canonical layouts, evaluated here as CuTe layouts (shape:stride, colexicographic) composed
// with CuTe's Swizzle<B,4,3> definition; A registers and D read back by the ISA's fragment
// formulas, themselves checked against CuTe's CLayout / ALayout of mma_traits_sm90_gmma.hpp;
// values encoded by this file's own format encoder and small enough that every expected sum is
// exact, so D must equal the double product computed here bit for bit.
#include <catch2/catch.hpp>

#include "shared_bytes.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "emulator/wgmma.hpp"

using namespace cutejit::emulator;

namespace {

using test::SharedBytes;

// ---- formats from their definitions: e exponent bits, m mantissa bits, bias ----
struct Format {
  int e, m, bias;
};
const Format f16{5, 10, 15}, bf16{8, 7, 127}, e4m3{4, 3, 7}, e5m2{5, 2, 15};

/// The code of `v`, which must be exactly representable as a normal number or zero.
uint32_t encode(double v, Format f) {
  const uint32_t sign = std::signbit(v) ? 1u << (f.e + f.m) : 0u;
  const double a = std::fabs(v);
  if (a == 0) return sign;
  const int ex = int(std::floor(std::log2(a)));
  const double q = std::ldexp(a, f.m - ex) - std::ldexp(1.0, f.m);
  REQUIRE(q == std::floor(q));
  REQUIRE(ex + f.bias > 0);
  return sign | uint32_t(ex + f.bias) << f.m | uint32_t(q);
}

uint32_t bits_of(WgmmaType t, double v) {
  switch (t) {
    case WgmmaType::f16: return encode(v, f16);
    case WgmmaType::bf16: return encode(v, bf16);
    case WgmmaType::tf32: return std::bit_cast<uint32_t>(float(v)) | 0x1234u;  // low 13 bits: ignored by the MMA
    case WgmmaType::e4m3: return encode(v, e4m3);
    case WgmmaType::e5m2: return encode(v, e5m2);
    default: return uint32_t(int32_t(v)) & 0xFFu;
  }
}
uint32_t bytes_of(WgmmaType t) { return t == WgmmaType::f16 || t == WgmmaType::bf16 ? 2 : t == WgmmaType::tf32 ? 4 : 1; }

/// Small values: quarters from -2 to 2 for floats, -9 .. 9 (0 .. 18 unsigned) for integers.
double sample(WgmmaType t, uint32_t i) {
  const int h = int((i * 2654435761u >> 7) % 17);
  if (t == WgmmaType::s8) return h - 8;
  if (t == WgmmaType::u8) return h + 2;
  return double(h - 8) / 4;
}

// ---- CuTe layouts: ((shape, stride), ...) modes, colexicographic ----
struct Mode {
  uint32_t shape, stride;
};
uint32_t eval(std::initializer_list<Mode> modes, uint32_t c) {
  uint32_t offset = 0;
  for (const Mode& m : modes) offset += (c % m.shape) * m.stride, c /= m.shape;
  return offset;
}
/// CuTe's Swizzle<B,M,S>: offset ^ ((offset & (((1 << B) - 1) << (M + S))) >> S).
uint32_t cute_swizzle(int b, int m, int s, uint32_t o) { return o ^ ((o & (((1u << b) - 1) << (m + s))) >> s); }

/// Where the canonical layouts (the ISA's table, in T-element units, swizzle width W = 16 w
/// bytes) put element (mn, k); lbo and sbo in bytes.
struct Placement {
  bool mn_major;
  uint32_t w;  ///< 16-byte chunks per swizzle row: 1 (none), 2, 4, 8
  uint32_t start, lbo, sbo;
};
uint32_t address_of(const Placement& p, uint32_t mn, uint32_t k, uint32_t eb) {
  const uint32_t t = 16 / eb, l = p.lbo / eb, s = p.sbo / eb, big = 1u << 20;
  uint32_t offset;
  if (!p.mn_major && p.w == 1) offset = eval({{8, t}, {big, s}}, mn) + eval({{t, 1}, {big, l}}, k);  // ((8,m),(T,2k)):((1T,SBO),(1,LBO))
  else if (!p.mn_major) offset = eval({{8, p.w * t}, {big, s}}, mn) + eval({{t, 1}, {big, t}}, k);  // ((8,m),(T,2k)):((wT,SBO),(1,T))
  else if (p.w == 1) offset = eval({{t, 1}, {1, t}, {big, s}}, mn) + eval({{8, t}, {big, l}}, k);  // ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
  else offset = eval({{t, 1}, {p.w, t}, {big, l}}, mn) + eval({{8, p.w * t}, {big, s}}, k);        // ((T,w,m),(8,k)):((1,T,LBO),(wT,SBO))
  const int b = p.w == 8 ? 3 : p.w == 4 ? 2 : p.w == 2 ? 1 : 0;
  return cute_swizzle(b, 4, 3, p.start + offset * eb);
}
/// The descriptor: address, LBO and SBO >> 4 at bits 0, 16 and 32; layout type at 62 (0 none,
/// 1 128B, 2 64B, 3 32B).
uint64_t descriptor(const Placement& p) {
  const uint64_t mode = p.w == 8 ? 1 : p.w == 4 ? 2 : p.w == 2 ? 3 : 0;
  return uint64_t(p.start >> 4) | uint64_t(p.lbo >> 4) << 16 | uint64_t(p.sbo >> 4) << 32 | mode << 62;
}
/// Canonical strides for `rows` x K: K-major rows of W bytes (no swizzle: the K chunks `rows`
/// core matrices apart); MN-major 8-row atoms of K, W bytes of MN each.
Placement placement(bool mn_major, uint32_t w, uint32_t start, uint32_t rows, uint32_t k, uint32_t eb) {
  if (!mn_major) return w == 1 ? Placement{false, 1, start, rows / 8 * 128, 128} : Placement{false, w, start, 16, 8 * 16 * w};
  if (w == 1) return Placement{true, 1, start, rows * eb / 16 * 128, 128};
  return Placement{true, w, start, (k + 7) / 8 * 8 * 16 * w, 8 * 16 * w};
}

void put(SharedBytes& s, uint32_t address, uint32_t bits, uint32_t eb) { std::memcpy(s.bytes.data() + address, &bits, eb); }

// ---- fragments, by the ISA's figures (warp w holds rows 16w .. 16w + 15; g = lane / 4, t = lane % 4) ----
struct RowCol {
  uint32_t row, col;
};
RowCol d_element(uint32_t thread, uint32_t i) {
  const uint32_t w = thread / 32, g = thread % 32 / 4, t = thread % 4;
  return {16 * w + g + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * t + i % 2};
}
/// Element i (of 8, 4 or 16) of A's register fragment for 16-bit, 32-bit and 8-bit types.
RowCol a_element(uint32_t thread, uint32_t i, uint32_t bytes) {
  const uint32_t w = thread / 32, g = thread % 32 / 4, t = thread % 4;
  if (bytes == 2) return {16 * w + g + 8 * ((i / 2) % 2), 2 * t + i % 2 + 8 * (i / 4)};
  if (bytes == 4) return {16 * w + g + 8 * (i % 2), t + 4 * (i / 2)};
  return {16 * w + g + 8 * ((i / 4) % 2), 4 * t + i % 4 + 16 * (i / 8)};
}

struct Problem {
  Wgmma op;
  std::vector<double> a, b;  ///< 64 x K and N x K, row-major
};
Problem make_problem(const char* opcode, uint32_t seed) {
  Problem p{parse_wgmma(opcode), {}, {}};
  p.a.resize(64 * p.op.k);
  p.b.resize(p.op.n * p.op.k);
  for (uint32_t i = 0; i < p.a.size(); ++i) p.a[i] = sample(p.op.a, i + seed);
  for (uint32_t i = 0; i < p.b.size(); ++i) p.b[i] = sample(p.op.b, 7 * i + seed + 3);
  return p;
}
void place(SharedBytes& s, const Placement& pl, const std::vector<double>& m, uint32_t rows, uint32_t k, WgmmaType t) {
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < k; ++c) put(s, address_of(pl, r, c, bytes_of(t)), bits_of(t, m[r * k + c]), bytes_of(t));
}
std::vector<uint32_t> register_a(const Problem& p) {
  std::vector<uint32_t> regs(128 * 4, 0);
  const uint32_t eb = bytes_of(p.op.a), per = 4 / eb;
  for (uint32_t th = 0; th < 128; ++th)
    for (uint32_t i = 0; i < 4 * per; ++i) {
      const RowCol rc = a_element(th, i, eb);
      regs[th * 4 + i / per] |= bits_of(p.op.a, p.a[rc.row * p.op.k + rc.col]) << (8 * eb * (i % per));
    }
  return regs;
}
double product(const Problem& p, uint32_t row, uint32_t col, double sa = 1, double sb = 1) {
  double sum = 0;
  for (uint32_t k = 0; k < p.op.k; ++k) sum += sa * p.a[row * p.op.k + k] * sb * p.b[col * p.op.k + k];
  return sum;
}
/// Checks f32 D against A x B (+ the D that every element held before, `old`).
void check_f32(const Problem& p, const std::vector<uint32_t>& d, double old = 0, double sa = 1, double sb = 1) {
  for (uint32_t th = 0; th < 128; ++th)
    for (uint32_t i = 0; i < p.op.n / 2; ++i) {
      const RowCol rc = d_element(th, i);
      INFO("thread " << th << ", register " << i << ": row " << rc.row << ", column " << rc.col);
      REQUIRE(d[th * (p.op.n / 2) + i] == std::bit_cast<uint32_t>(float(product(p, rc.row, rc.col, sa, sb) + old)));
    }
}

}  // namespace

TEST_CASE("the fragment formulas used here are CuTe's CLayout and ALayout", "[wgmma]") {
  // CuTe maps (thread, value) to m + 64 k (column-major 64 x K, or 64 x N for C).
  auto cute = [](std::initializer_list<Mode> thread_modes, std::initializer_list<Mode> value_modes, uint32_t t, uint32_t v) {
    return eval(thread_modes, t) + eval(value_modes, v);
  };
  for (uint32_t th = 0; th < 128; ++th) {
    for (uint32_t v = 0; v < 128; ++v) {  // CLayout_64x256: ((4,8,4),(2,2,32)):((128,1,16),(64,8,512))
      const RowCol rc = d_element(th, v);
      REQUIRE(cute({{4, 128}, {8, 1}, {4, 16}}, {{2, 64}, {2, 8}, {32, 512}}, th, v) == rc.row + 64 * rc.col);
    }
    for (uint32_t v = 0; v < 8; ++v) {  // ALayout_64x16 = CLayout_64x16
      const RowCol rc = a_element(th, v, 2);
      REQUIRE(cute({{4, 128}, {8, 1}, {4, 16}}, {{2, 64}, {2, 8}, {2, 512}}, th, v) == rc.row + 64 * rc.col);
    }
    for (uint32_t v = 0; v < 4; ++v) {  // ALayout_64x8: ((4,8,4),(2,2)):((64,1,16),(8,256))
      const RowCol rc = a_element(th, v, 4);
      REQUIRE(cute({{4, 64}, {8, 1}, {4, 16}}, {{2, 8}, {2, 256}}, th, v) == rc.row + 64 * rc.col);
    }
    for (uint32_t v = 0; v < 16; ++v) {  // ALayout_64x32: ((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))
      const RowCol rc = a_element(th, v, 1);
      REQUIRE(cute({{4, 256}, {8, 1}, {4, 16}}, {{4, 64}, {2, 8}, {2, 1024}}, th, v) == rc.row + 64 * rc.col);
    }
  }
}

TEST_CASE("wgmma matrix descriptors decode by the ISA's bit fields", "[wgmma]") {
  // start 0x2400 (field 0x240), LBO 256 (0x10), SBO 1024 (0x40), base offset 0, 128B swizzle (1 << 62).
  const WgmmaMatrixDescriptor d = decode_wgmma_descriptor(0x4000004000100240ull);
  CHECK(d.start_address == 0x2400);
  CHECK(d.leading_byte_offset == 256);
  CHECK(d.stride_byte_offset == 1024);
  CHECK(d.base_offset == 0);
  CHECK(d.swizzle == WgmmaSwizzle::b128);
  CHECK(decode_wgmma_descriptor(2ull << 62).swizzle == WgmmaSwizzle::b64);
  CHECK(decode_wgmma_descriptor(3ull << 62).swizzle == WgmmaSwizzle::b32);
  CHECK(decode_wgmma_descriptor(0x3FFFull).start_address == 0x3FFF0);
  CHECK(decode_wgmma_descriptor(5ull << 49).base_offset == 5);
  CHECK_THROWS_AS(decode_wgmma_descriptor(1ull << 46), Fault);  // Blackwell's fixed 0b001 has no place here
  CHECK_THROWS_AS(decode_wgmma_descriptor(1ull << 14), Fault);  // a carry out of the start address
  CHECK_THROWS_AS(decode_wgmma_descriptor(1ull << 61), Fault);
  CHECK_THROWS_AS(wgmma_chunk_address(decode_wgmma_descriptor(1ull << 49 | 1ull << 62), false, 0, 0, 8), Fault);
}

TEST_CASE("wgmma opcodes follow the ISA's shape and type tables", "[wgmma]") {
  Wgmma w = parse_wgmma("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16");
  CHECK((w.n == 128 && w.k == 16 && w.d == WgmmaAccumulator::f32 && w.a == WgmmaType::bf16 && w.b == WgmmaType::bf16));
  CHECK(wgmma_d_registers(w) == 64);
  w = parse_wgmma("wgmma.mma_async.sync.aligned.m64n72k16.f16.f16.f16");
  CHECK((w.d == WgmmaAccumulator::f16 && wgmma_d_registers(w) == 18));
  w = parse_wgmma("wgmma.mma_async.sync.aligned.m64n24k32.s32.s8.u8.satfinite");
  CHECK((w.satfinite && w.a == WgmmaType::s8 && w.b == WgmmaType::u8 && w.k == 32));
  w = parse_wgmma("wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e5m2");
  CHECK((w.a == WgmmaType::e4m3 && w.b == WgmmaType::e5m2 && w.d == WgmmaAccumulator::f16));
  CHECK(parse_wgmma("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32").k == 8);
  for (const char* bad : {"wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8",   // integers: 8, 16, 24, then multiples of 16
                          "wgmma.mma_async.sync.aligned.m64n64k16.f16.bf16.bf16", // bf16 accumulates in f32 only
                          "wgmma.mma_async.sync.aligned.m64n64k8.f16.tf32.tf32",
                          "wgmma.mma_async.sync.aligned.m64n64k32.f32.bf16.bf16",
                          "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.bf16",
                          "wgmma.mma_async.sync.aligned.m64n264k16.f32.f16.f16",
                          "wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16",
                          "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.s8",
                          "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16.satfinite",
                          "wgmma.mma_async.sync.m64n64k16.f32.f16.f16",
                          "wgmma.mma_async.sync.aligned.m128n64k16.f32.f16.f16",
                          "wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.f16.f16",
                          "wgmma.mma_async.sync.aligned.m64n64k256.s32.b1.b1.and.popc"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_wgmma(bad), Fault);
  }
}

TEST_CASE("wgmma from shared memory: every canonical layout and swizzle", "[wgmma]") {
  struct Case {
    const char* opcode;
    bool mn_major;
  };
  const Case cases[] = {
      {"wgmma.mma_async.sync.aligned.m64n24k16.f32.bf16.bf16", false}, {"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", true},
      {"wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16", false},   {"wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16", true},
      {"wgmma.mma_async.sync.aligned.m64n24k8.f32.tf32.tf32", false},  {"wgmma.mma_async.sync.aligned.m64n40k32.f32.e4m3.e5m2", false},
      {"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", false}, {"wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", true},
  };
  for (const Case& c : cases)
    for (uint32_t w : {1u, 2u, 4u, 8u}) {
      INFO(c.opcode << (c.mn_major ? ", MN-major" : ", K-major") << ", swizzle " << 16 * w << " bytes");
      const Problem p = make_problem(c.opcode, w);
      const uint32_t ea = bytes_of(p.op.a), eb = bytes_of(p.op.b);
      // K-major swizzled operands take the last 32-byte K slice of their rows (the start address
      // off the pattern's boundary, as a K loop advances it).
      const uint32_t slice = c.mn_major || w == 1 ? 0 : 16 * w - 32;
      const Placement pa = placement(c.mn_major, w, 0 + slice, 64, p.op.k, ea);
      const Placement pb = placement(c.mn_major, w, 65536 + slice, p.op.n, p.op.k, eb);
      SharedBytes shared(2 * 65536);
      place(shared, pa, p.a, 64, p.op.k, p.op.a);
      place(shared, pb, p.b, p.op.n, p.op.k, p.op.b);
      WgmmaOperands x;
      x.a_desc = descriptor(pa);
      x.b_desc = descriptor(pb);
      x.transpose_a = x.transpose_b = c.mn_major;
      x.scale_d = false;
      std::vector<uint32_t> d(128 * wgmma_d_registers(p.op), 0x7FC00001u);  // ignored with scale-d false
      wgmma_execute(p.op, x, shared, d);
      check_f32(p, d);
    }
}

TEST_CASE("wgmma canonical layouts at the ISA's own examples", "[wgmma]") {
  // "MN-Major, 64B swizzling and bf16": Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512)),
  // LBO = 256 * 2 bytes, SBO = 512 * 2 bytes: B of N = 64, K = 16.
  // "K-Major, no-swizzling and tf32": ((8,2),(4,4)):((4,32),(1,64)), LBO = 64 * 4, SBO = 32 * 4:
  // A's rows 0-15 over two K = 8 MMAs; the second starts LBO * 2 bytes further.
  const Problem p = make_problem("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", 5);
  SharedBytes shared(65536);
  for (uint32_t n = 0; n < 64; ++n)
    for (uint32_t k = 0; k < 16; ++k) {
      const uint32_t e = eval({{8, 1}, {4, 8}, {2, 256}}, n) + eval({{8, 32}, {2, 512}}, k);
      put(shared, cute_swizzle(2, 4, 3, 16384 + 2 * e), bits_of(WgmmaType::bf16, p.b[n * 16 + k]), 2);
    }
  const Placement pa = placement(false, 8, 0, 64, 16, 2);
  place(shared, pa, p.a, 64, 16, WgmmaType::bf16);
  WgmmaOperands x;
  x.a_desc = descriptor(pa);
  x.b_desc = uint64_t(16384 >> 4) | uint64_t(512 >> 4) << 16 | uint64_t(1024 >> 4) << 32 | 2ull << 62;
  x.transpose_b = true;
  std::vector<uint32_t> d(128 * 32, 0);
  wgmma_execute(p.op, x, shared, d);
  check_f32(p, d);

  const Problem q = make_problem("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32", 9);
  SharedBytes s2(65536);
  // A: 64 rows x 16 K (two MMAs), the ISA's example repeated over rows: ((8,8),(4,4)):((4,32),(1,256)).
  std::vector<double> a16(64 * 16);
  for (uint32_t i = 0; i < a16.size(); ++i) a16[i] = sample(WgmmaType::tf32, 3 * i + 1);
  for (uint32_t m = 0; m < 64; ++m)
    for (uint32_t k = 0; k < 16; ++k) put(s2, 4 * (eval({{8, 4}, {8, 32}}, m) + eval({{4, 1}, {4, 256}}, k)), bits_of(WgmmaType::tf32, a16[m * 16 + k]), 4);
  const Placement pb = placement(false, 8, 8192, 8, 8, 4);
  place(s2, pb, q.b, 8, 8, WgmmaType::tf32);
  for (uint32_t step = 0; step < 2; ++step) {
    Problem qs = q;
    for (uint32_t m = 0; m < 64; ++m)
      for (uint32_t k = 0; k < 8; ++k) qs.a[m * 8 + k] = a16[m * 16 + 8 * step + k];
    WgmmaOperands y;
    y.a_desc = uint64_t((step * 2 * 1024) >> 4) | uint64_t(1024 >> 4) << 16 | uint64_t(128 >> 4) << 32;
    y.b_desc = descriptor(pb);
    std::vector<uint32_t> d2(128 * 4, 0);
    wgmma_execute(qs.op, y, s2, d2);
    check_f32(qs, d2);
  }
}

TEST_CASE("wgmma with A from registers", "[wgmma]") {
  for (const char* opcode : {"wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16", "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32",
                             "wgmma.mma_async.sync.aligned.m64n24k32.f32.e5m2.e4m3", "wgmma.mma_async.sync.aligned.m64n48k16.f32.f16.f16"}) {
    INFO(opcode);
    const Problem p = make_problem(opcode, 11);
    SharedBytes shared(65536);
    const Placement pb = placement(false, 8, 1024, p.op.n, p.op.k, bytes_of(p.op.b));
    place(shared, pb, p.b, p.op.n, p.op.k, p.op.b);
    const std::vector<uint32_t> regs = register_a(p);
    WgmmaOperands x;
    x.a_in_registers = true;
    x.a_registers = regs;
    x.b_desc = descriptor(pb);
    // D = A x B + D, D holding 0.5 everywhere; A negated.
    std::vector<uint32_t> d(128 * wgmma_d_registers(p.op), std::bit_cast<uint32_t>(0.5f));
    x.scale_a = -1;
    wgmma_execute(p.op, x, shared, d);
    check_f32(p, d, 0.5, -1, 1);
    x.transpose_a = true;
    CHECK_THROWS_AS(wgmma_execute(p.op, x, shared, d), Fault);
  }
}

TEST_CASE("wgmma into f16 accumulators", "[wgmma]") {
  for (const char* opcode : {"wgmma.mma_async.sync.aligned.m64n24k16.f16.f16.f16", "wgmma.mma_async.sync.aligned.m64n16k32.f16.e4m3.e4m3"}) {
    INFO(opcode);
    const Problem p = make_problem(opcode, 3);
    SharedBytes shared(65536);
    const uint32_t eb = bytes_of(p.op.a);
    const Placement pa = placement(false, 4, 0, 64, p.op.k, eb), pb = placement(false, 2, 8192, p.op.n, p.op.k, eb);
    place(shared, pa, p.a, 64, p.op.k, p.op.a);
    place(shared, pb, p.b, p.op.n, p.op.k, p.op.b);
    WgmmaOperands x;
    x.a_desc = descriptor(pa);
    x.b_desc = descriptor(pb);
    x.scale_b = -1;
    // Each register holds two elements, the even one in the low half; both start at -1.25 (0xbd00).
    std::vector<uint32_t> d(128 * wgmma_d_registers(p.op), 0xBD00BD00u);
    wgmma_execute(p.op, x, shared, d);
    for (uint32_t th = 0; th < 128; ++th)
      for (uint32_t i = 0; i < p.op.n / 2; ++i) {
        const RowCol rc = d_element(th, i);
        const uint32_t half = d[th * (p.op.n / 4) + i / 2] >> (16 * (i % 2)) & 0xFFFFu;
        REQUIRE(half == encode(product(p, rc.row, rc.col, 1, -1) - 1.25, f16));
      }
  }
}

TEST_CASE("integer wgmma wraps or saturates", "[wgmma]") {
  const Wgmma op = parse_wgmma("wgmma.mma_async.sync.aligned.m64n8k32.s32.u8.u8");
  const Wgmma sat = parse_wgmma("wgmma.mma_async.sync.aligned.m64n8k32.s32.u8.u8.satfinite");
  SharedBytes shared(16384);
  std::vector<double> a(64 * 32), b(8 * 32);
  for (uint32_t i = 0; i < a.size(); ++i) a[i] = 255 - i % 3;
  for (uint32_t i = 0; i < b.size(); ++i) b[i] = 250 + i % 5;
  const Placement pa = placement(false, 2, 0, 64, 32, 1), pb = placement(false, 2, 4096, 8, 32, 1);
  place(shared, pa, a, 64, 32, WgmmaType::u8);
  place(shared, pb, b, 8, 32, WgmmaType::u8);
  WgmmaOperands x;
  x.a_desc = descriptor(pa);
  x.b_desc = descriptor(pb);
  const int64_t old = INT32_MAX - 1000;
  for (const Wgmma& w : {op, sat}) {
    std::vector<uint32_t> d(128 * 4, uint32_t(old));
    wgmma_execute(w, x, shared, d);
    for (uint32_t th = 0; th < 128; ++th)
      for (uint32_t i = 0; i < 4; ++i) {
        const RowCol rc = d_element(th, i);
        int64_t sum = old;
        for (uint32_t k = 0; k < 32; ++k) sum += int64_t(a[rc.row * 32 + k]) * int64_t(b[rc.col * 32 + k]);
        REQUIRE(sum > INT32_MAX);
        REQUIRE(d[th * 4 + i] == (w.satfinite ? uint32_t(INT32_MAX) : uint32_t(uint64_t(sum))));
      }
  }
  x.scale_a = -1;
  std::vector<uint32_t> d(128 * 4);
  CHECK_THROWS_WITH(wgmma_execute(op, x, shared, d), Catch::Contains("imm-scale"));
}

TEST_CASE("wgmma refuses immediates and operands the ISA does not allow", "[wgmma]") {
  const Wgmma tf32 = parse_wgmma("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32");
  SharedBytes shared(65536);
  WgmmaOperands x;
  std::vector<uint32_t> d(128 * 4);
  x.transpose_b = true;
  CHECK_THROWS_WITH(wgmma_execute(tf32, x, shared, d), Catch::Contains("imm-trans"));
  x.transpose_b = false;
  x.scale_a = 2;
  CHECK_THROWS_WITH(wgmma_execute(tf32, x, shared, d), Catch::Contains("1 or -1"));
  x.scale_a = 1;
  std::vector<uint32_t> short_d(128 * 3);
  CHECK_THROWS_AS(wgmma_execute(tf32, x, shared, short_d), Fault);
  x.a_in_registers = true;
  std::vector<uint32_t> regs(100);
  x.a_registers = regs;
  CHECK_THROWS_AS(wgmma_execute(tf32, x, shared, d), Fault);
}
