// mma.sync against independent derivations: each fragment layout is the PTX ISA's table for that
// shape and type written out here as the ISA states it (conditions on the element index i,
// groupID and threadID_in_group), not the module's general formula; element codes are built from
// the format definitions (sign, exponent field, mantissa field) by this file; D is compared, bit
// for bit, with a double-precision product of the matrices computed here. Values are drawn so that
// every sum is exact in double, so the expected result is the exact sum rounded once.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "emulator/warp_mma.hpp"

using namespace cutejit::emulator;

namespace {

struct RowCol {
  int row, col;
};
using Table = RowCol (*)(int lane, int i);

int gid(int lane) { return lane >> 2; }
int tig(int lane) { return lane % 4; }

// ---- the ISA's fragment tables ("Matrix Fragments for mma.mMnNkK") ----
RowCol c_m16n8(int l, int i) { return {i < 2 ? gid(l) : gid(l) + 8, tig(l) * 2 + (i & 1)}; }
RowCol c_m8n8(int l, int i) { return {gid(l), tig(l) * 2 + i}; }
RowCol a_16808_f16(int l, int i) { return {i < 2 ? gid(l) : gid(l) + 8, tig(l) * 2 + (i & 1)}; }
RowCol b_16808_f16(int l, int i) { return {tig(l) * 2 + i, gid(l)}; }
RowCol a_16816_f16(int l, int i) { return {(i < 2 || (i >= 4 && i < 6)) ? gid(l) : gid(l) + 8, tig(l) * 2 + (i & 1) + (i >= 4 ? 8 : 0)}; }
RowCol b_16816_f16(int l, int i) { return {tig(l) * 2 + (i & 1) + (i >= 2 ? 8 : 0), gid(l)}; }
RowCol a_16804_32(int l, int i) { return {i == 0 ? gid(l) : gid(l) + 8, tig(l)}; }  // .tf32 and .f64
RowCol b_16804_32(int l, int) { return {tig(l), gid(l)}; }
RowCol a_16808_32(int l, int i) { return {i % 2 == 0 ? gid(l) : gid(l) + 8, i < 2 ? tig(l) : tig(l) + 4}; }
RowCol b_16808_32(int l, int i) { return {i == 0 ? tig(l) : tig(l) + 4, gid(l)}; }
RowCol a_16816_f64(int l, int i) { return {i % 2 == 0 ? gid(l) : gid(l) + 8, i % 2 == 0 ? i * 2 + tig(l) : i * 2 - 2 + tig(l)}; }
RowCol b_16816_f64(int l, int i) { return {tig(l) + i * 4, gid(l)}; }
RowCol a_884_f64(int l, int) { return {gid(l), tig(l)}; }
RowCol b_884_f64(int l, int) { return {tig(l), gid(l)}; }
RowCol a_8816_i8(int l, int i) { return {gid(l), tig(l) * 4 + i}; }
RowCol b_8816_i8(int l, int i) { return {tig(l) * 4 + i, gid(l)}; }
RowCol a_8832_i4(int l, int i) { return {gid(l), tig(l) * 8 + i}; }
RowCol b_8832_i4(int l, int i) { return {tig(l) * 8 + i, gid(l)}; }
RowCol a_88128_b1(int l, int i) { return {gid(l), tig(l) * 32 + i}; }
RowCol b_88128_b1(int l, int i) { return {tig(l) * 32 + i, gid(l)}; }
RowCol a_16816_i8(int l, int i) { return {i < 4 ? gid(l) : gid(l) + 8, tig(l) * 4 + (i & 3)}; }  // also .e4m3/.e5m2
RowCol b_16816_i8(int l, int i) { return {tig(l) * 4 + i, gid(l)}; }
RowCol a_16832_i8(int l, int i) { return {(i < 4 || (i >= 8 && i < 12)) ? gid(l) : gid(l) + 8, tig(l) * 4 + (i & 3) + (i >= 8 ? 16 : 0)}; }
RowCol b_16832_i8(int l, int i) { return {tig(l) * 4 + (i & 3) + (i >= 4 ? 16 : 0), gid(l)}; }
RowCol a_16832_i4(int l, int i) { return {i < 8 ? gid(l) : gid(l) + 8, tig(l) * 8 + (i & 7)}; }
RowCol b_16832_i4(int l, int i) { return {tig(l) * 8 + (i & 7), gid(l)}; }
RowCol a_16864_4b(int l, int i) { return {(i < 8 || (i >= 16 && i < 24)) ? gid(l) : gid(l) + 8, tig(l) * 8 + (i & 7) + (i >= 16 ? 32 : 0)}; }
RowCol b_16864_4b(int l, int i) { return {tig(l) * 8 + (i & 7) + (i >= 8 ? 32 : 0), gid(l)}; }
RowCol a_168128_b1(int l, int i) { return {i < 32 ? gid(l) : gid(l) + 8, tig(l) * 32 + (i & 0x1f)}; }
RowCol b_168128_b1(int l, int i) { return {tig(l) * 32 + i, gid(l)}; }
// The ISA prints "(threadID_in_group * 32) + i for ai where i < 64", which would put a32..a63
// outside row groupID + 8's first 128 columns; i & 0x1F (as for i >= 64) is the consistent reading.
RowCol a_168256_b1(int l, int i) { return {(i < 32 || (i >= 64 && i < 96)) ? gid(l) : gid(l) + 8, tig(l) * 32 + (i & 0x1f) + (i >= 64 ? 128 : 0)}; }
RowCol b_168256_b1(int l, int i) { return {tig(l) * 32 + (i & 0x1f) + (i >= 32 ? 128 : 0), gid(l)}; }

// ---- element codes from the format definitions ----
struct Format {
  int e, m, bias;
};
const Format f16{5, 10, 15}, bf16{8, 7, 127}, f32{8, 23, 127}, e4m3{4, 3, 7}, e5m2{5, 2, 15}, e3m2{3, 2, 3}, e2m3{2, 3, 1}, e2m1{2, 1, 1};

struct Element {
  uint64_t code;
  double value;
};

std::mt19937 rng(20260517);
int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

/// A random finite element with its exponent field in [lo, hi] ((-1)^s 1.m 2^(E - bias), or
/// 0.m 2^(1 - bias) at E = 0) and only the top `kept` mantissa bits (all by default) nonzero.
Element element(Format f, int lo, int hi, int kept = -1) {
  const int drop = kept < 0 ? 0 : f.m - kept;
  int ex, man;
  do {
    ex = uniform(lo, hi), man = uniform(0, (1 << (f.m - drop)) - 1) << drop;
  } while (f.e == 4 && f.m == 3 && ex == 15 && man == 7);  // e4m3's NaN
  const int s = uniform(0, 1);
  double v = ex == 0 ? std::ldexp(man, 1 - f.bias - f.m) : std::ldexp((1 << f.m) + man, ex - f.bias - f.m);
  return {uint64_t(s) << (f.e + f.m) | uint64_t(ex) << f.m | uint64_t(man), s ? -v : v};
}
Element whole_range(Format f) { return element(f, 0, (1 << f.e) - 1 - (f.e == 5 || f.e == 8 ? 1 : 0)); }

/// The f16 code of `v`, which must be exact in f16.
uint64_t f16_code(double v) {
  const uint64_t s = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (a == 0) return s;
  int ex = std::max(int(std::floor(std::log2(a))), -14);
  const double q = std::ldexp(a, 10 - ex);
  REQUIRE(q == std::floor(q));
  return s | (ex == -14 && q < 1024 ? uint64_t(q) : uint64_t(ex + 15) << 10 | (uint64_t(q) - 1024));
}

// ---- the warp's registers ----
struct Fragment {
  int regs, per_reg, bits;  // registers per lane, elements per register, bits each element's slot takes
  Table at;
};

struct Matrix {
  int rows, cols;
  std::vector<Element> e;
  Element& operator()(int r, int c) { return e[size_t(r * cols + c)]; }
};

Matrix random_matrix(int rows, int cols, const std::function<Element()>& draw) {
  Matrix m{rows, cols, {}};
  for (int i = 0; i < rows * cols; ++i) m.e.push_back(draw());
  return m;
}

/// The registers holding `m` by the fragment table (element i in register i / per_reg, low bits first).
std::vector<uint64_t> registers(const Fragment& f, Matrix& m) {
  std::vector<uint64_t> r(size_t(32 * f.regs), 0);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < f.regs * f.per_reg; ++i) {
      const RowCol at = f.at(lane, i);
      const uint64_t mask = f.bits == 64 ? ~0ull : (1ull << f.bits) - 1;
      r[size_t(lane * f.regs + i / f.per_reg)] |= (m(at.row, at.col).code & mask) << (f.bits * (i % f.per_reg));
    }
  return r;
}

uint64_t read(const Fragment& f, const std::vector<uint64_t>& r, int lane, int i) {
  const uint64_t mask = f.bits == 64 ? ~0ull : (1ull << f.bits) - 1;
  return r[size_t(lane * f.regs + i / f.per_reg)] >> (f.bits * (i % f.per_reg)) & mask;
}

uint64_t f32_bits(double v) { return std::bit_cast<uint32_t>(float(v)); }

/// Runs `opcode` on random A, B, C and checks every D element against `expect(C + sum_k A B)`.
/// With `quad_pairs` (m8n8k4 f16), the matrices stack four 8x8x4 MMAs block-diagonally: D's
/// element in MMA c = row / 8 sums over MMA c's own K, 4c .. 4c+3.
void check_mma(const char* opcode, int m, int n, int k, Fragment fa, Fragment fb, Fragment fc, Fragment fd,
               const std::function<Element()>& da, const std::function<Element()>& db, const std::function<Element()>& dc,
               const std::function<uint64_t(double)>& expect, const MmaScaleOperands& scales = {},
               const std::function<double(int, int)>& scale_a = nullptr, const std::function<double(int, int)>& scale_b = nullptr,
               bool quad_pairs = false) {
  INFO(opcode);
  const std::optional<MmaSync> op = parse_mma_sync(opcode);
  REQUIRE(op);
  REQUIRE((op->a_regs == fa.regs && op->b_regs == fb.regs && op->c_regs == fc.regs && op->d_regs == fd.regs));
  Matrix a = random_matrix(m, k, da), b = random_matrix(k, n, db), c = random_matrix(m, n, dc);
  const std::vector<uint64_t> ra = registers(fa, a), rb = registers(fb, b), rc = registers(fc, c);
  std::vector<uint64_t> rd(size_t(32 * fd.regs), 0xdeadbeef);
  mma_sync(*op, ra, rb, rc, rd, scales);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < fd.regs * fd.per_reg; ++i) {
      const RowCol at = fd.at(lane, i);
      double sum = c(at.row, at.col).value;
      const int k0 = quad_pairs ? 4 * (at.row / 8) : 0;
      for (int x = k0; x < (quad_pairs ? k0 + 4 : k); ++x)
        sum += a(at.row, x).value * (scale_a ? scale_a(at.row, x) : 1) * b(x, at.col).value * (scale_b ? scale_b(x, at.col) : 1);
      INFO("lane " << lane << " d" << i << " (row " << at.row << ", col " << at.col << ")");
      REQUIRE(read(fd, rd, lane, i) == expect(sum));
    }
}

const Fragment c16x8_f32{4, 1, 32, c_m16n8}, c16x8_f16{2, 2, 16, c_m16n8}, c16x8_s32{4, 1, 32, c_m16n8};
auto f32_c() { return element(f32, 123, 131); }
auto small_f16() { return element(f16, 11, 19); }

}  // namespace

TEST_CASE("mma.sync f16 and bf16 against a double product", "[warp_mma]") {
  check_mma("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, 8, 16, {4, 2, 16, a_16816_f16}, {2, 2, 16, b_16816_f16}, c16x8_f32,
            c16x8_f32, small_f16, small_f16, f32_c, f32_bits);
  check_mma("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 16, 8, 8, {2, 2, 16, a_16808_f16}, {1, 2, 16, b_16808_f16}, c16x8_f32,
            c16x8_f32, small_f16, small_f16, f32_c, f32_bits);
  auto bf = [] { return element(bf16, 123, 131); };
  check_mma("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, 8, 16, {4, 2, 16, a_16816_f16}, {2, 2, 16, b_16816_f16}, c16x8_f32,
            c16x8_f32, bf, bf, f32_c, f32_bits);
  check_mma("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 16, 8, 8, {2, 2, 16, a_16808_f16}, {1, 2, 16, b_16808_f16}, c16x8_f32,
            c16x8_f32, bf, bf, f32_c, f32_bits);
  // f16 accumulators: A and B in {1, 1.5, 2, 3} (signed), C multiples of 1/4 below 32: every
  // sum is a multiple of 1/4 below 512, exact in f16.
  auto tiny = [] { return element(f16, 15, 16, 1); };
  auto c16 = [] { return element(f16, 15, 19, 2); };
  check_mma("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 16, 8, 16, {4, 2, 16, a_16816_f16}, {2, 2, 16, b_16816_f16}, c16x8_f16,
            c16x8_f16, tiny, tiny, c16, f16_code);
  check_mma("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16", 16, 8, 8, {2, 2, 16, a_16808_f16}, {1, 2, 16, b_16808_f16}, c16x8_f16,
            c16x8_f16, tiny, tiny, c16, f16_code);
}

TEST_CASE("mma.sync tf32 ignores the low 13 bits of its operands", "[warp_mma]") {
  auto tf32 = [] {
    Element x = element(f32, 123, 131);
    x.code &= ~0x1fffull;
    x.value = std::bit_cast<float>(uint32_t(x.code));
    x.code |= uint64_t(uniform(0, 0x1fff));
    return x;
  };
  check_mma("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 16, 8, 8, {4, 1, 32, a_16808_32}, {2, 1, 32, b_16808_32}, c16x8_f32,
            c16x8_f32, tf32, tf32, f32_c, f32_bits);
  check_mma("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", 16, 8, 4, {2, 1, 32, a_16804_32}, {1, 1, 32, b_16804_32}, c16x8_f32,
            c16x8_f32, tf32, tf32, f32_c, f32_bits);
}

TEST_CASE("mma.sync FP8 (sm_89) and kind::f8f6f4 with every operand pair", "[warp_mma]") {
  auto e5 = [] { return element(e5m2, 8, 22); };
  auto e4 = [] { return whole_range(e4m3); };
  check_mma("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", 16, 8, 32, {4, 4, 8, a_16832_i8}, {2, 4, 8, b_16832_i8}, c16x8_f32,
            c16x8_f32, e4, e5, f32_c, f32_bits);
  check_mma("mma.sync.aligned.m16n8k16.row.col.f32.e5m2.e4m3.f32", 16, 8, 16, {2, 4, 8, a_16816_i8}, {1, 4, 8, b_16816_i8}, c16x8_f32,
            c16x8_f32, e5, e4, f32_c, f32_bits);
  auto e4_small = [] { return element(e4m3, 7, 8, 1); };  // {1, 1.5, 2, 3}: sums exact in f16, as above
  check_mma("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", 16, 8, 32, {4, 4, 8, a_16832_i8}, {2, 4, 8, b_16832_i8}, c16x8_f16,
            c16x8_f16, e4_small, e4_small, [] { return element(f16, 15, 19, 2); }, f16_code);

  // In kind::f8f6f4 each element has a byte: e2m1 in bits 2-5, e3m2/e2m3 in bits 0-5; the
  // padding bits are set here, and must not matter.
  struct Narrow {
    const char* name;
    std::function<Element()> draw;
  };
  const Narrow types[] = {
      {"e4m3", [] { return whole_range(e4m3); }},
      {"e5m2", [] { return element(e5m2, 8, 22); }},
      {"e3m2", [] { Element x = whole_range(e3m2); x.code |= uint64_t(uniform(0, 3)) << 6; return x; }},
      {"e2m3", [] { Element x = whole_range(e2m3); x.code |= uint64_t(uniform(0, 3)) << 6; return x; }},
      {"e2m1", [] { Element x = whole_range(e2m1); x.code = x.code << 2 | uint64_t(uniform(0, 3)) | uint64_t(uniform(0, 3)) << 6; return x; }},
  };
  for (const Narrow& ta : types)
    for (const Narrow& tb : types) {
      const std::string op = std::string("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.") + ta.name + "." + tb.name + ".f32";
      check_mma(op.c_str(), 16, 8, 32, {4, 4, 8, a_16832_i8}, {2, 4, 8, b_16832_i8}, c16x8_f32, c16x8_f32, ta.draw, tb.draw, f32_c, f32_bits);
    }
}

TEST_CASE("mma.sync f64 in all four shapes", "[warp_mma]") {
  // 20-bit significands in [2^-4, 2^4): products and sums are exact in double.
  auto f64v = [] {
    const double v = std::ldexp(double(uniform(1 << 19, (1 << 20) - 1)), uniform(-23, -16)) * (uniform(0, 1) ? -1 : 1);
    return Element{std::bit_cast<uint64_t>(v), v};
  };
  auto same = [](double v) { return std::bit_cast<uint64_t>(v); };
  const Fragment c16{4, 1, 64, c_m16n8};
  check_mma("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 8, 8, 4, {1, 1, 64, a_884_f64}, {1, 1, 64, b_884_f64}, {2, 1, 64, c_m8n8},
            {2, 1, 64, c_m8n8}, f64v, f64v, f64v, same);
  check_mma("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64", 16, 8, 4, {2, 1, 64, a_16804_32}, {1, 1, 64, b_16804_32}, c16, c16, f64v,
            f64v, f64v, same);
  check_mma("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64", 16, 8, 8, {4, 1, 64, a_16808_32}, {2, 1, 64, b_16808_32}, c16, c16, f64v,
            f64v, f64v, same);
  check_mma("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64", 16, 8, 16, {8, 1, 64, a_16816_f64}, {4, 1, 64, b_16816_f64}, c16, c16,
            f64v, f64v, f64v, same);
}

TEST_CASE("mma.sync integer kinds: s8/u8, s4/u4, b1", "[warp_mma]") {
  auto s8 = [] { const int v = uniform(-128, 127); return Element{uint64_t(v) & 0xff, double(v)}; };
  auto u8 = [] { const int v = uniform(0, 255); return Element{uint64_t(v), double(v)}; };
  auto s4 = [] { const int v = uniform(-8, 7); return Element{uint64_t(v) & 0xf, double(v)}; };
  auto u4 = [] { const int v = uniform(0, 15); return Element{uint64_t(v), double(v)}; };
  auto s32 = [] { const int v = uniform(-1000000, 1000000); return Element{uint64_t(uint32_t(v)), double(v)}; };
  auto exact = [](double v) { return uint64_t(uint32_t(int32_t(v))); };
  check_mma("mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32", 16, 8, 32, {4, 4, 8, a_16832_i8}, {2, 4, 8, b_16832_i8}, c16x8_s32,
            c16x8_s32, s8, u8, s32, exact);
  check_mma("mma.sync.aligned.m16n8k16.row.col.satfinite.s32.u8.s8.s32", 16, 8, 16, {2, 4, 8, a_16816_i8}, {1, 4, 8, b_16816_i8}, c16x8_s32,
            c16x8_s32, u8, s8, s32, exact);
  check_mma("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32", 8, 8, 16, {1, 4, 8, a_8816_i8}, {1, 4, 8, b_8816_i8}, {2, 1, 32, c_m8n8},
            {2, 1, 32, c_m8n8}, s8, s8, s32, exact);
  check_mma("mma.sync.aligned.m16n8k64.row.col.s32.s4.u4.s32", 16, 8, 64, {4, 8, 4, a_16864_4b}, {2, 8, 4, b_16864_4b}, c16x8_s32,
            c16x8_s32, s4, u4, s32, exact);
  check_mma("mma.sync.aligned.m16n8k32.row.col.s32.u4.s4.s32", 16, 8, 32, {2, 8, 4, a_16832_i4}, {1, 8, 4, b_16832_i4}, c16x8_s32,
            c16x8_s32, u4, s4, s32, exact);
  check_mma("mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32", 8, 8, 32, {1, 8, 4, a_8832_i4}, {1, 8, 4, b_8832_i4}, {2, 1, 32, c_m8n8},
            {2, 1, 32, c_m8n8}, s4, s4, s32, exact);

  // b1: the "product" of two bits is their AND; .xor.popc counts a XOR b = a + b - 2ab.
  auto bit = [] { const int v = uniform(0, 1); return Element{uint64_t(v), double(v)}; };
  check_mma("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc", 16, 8, 256, {4, 32, 1, a_168256_b1}, {2, 32, 1, b_168256_b1},
            c16x8_s32, c16x8_s32, bit, bit, s32, exact);
  check_mma("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc", 16, 8, 128, {2, 32, 1, a_168128_b1}, {1, 32, 1, b_168128_b1},
            c16x8_s32, c16x8_s32, bit, bit, s32, exact);
  Matrix a = random_matrix(8, 128, bit), b = random_matrix(128, 8, bit), c = random_matrix(8, 8, s32);
  const Fragment fa{1, 32, 1, a_88128_b1}, fb{1, 32, 1, b_88128_b1}, fc{2, 1, 32, c_m8n8};
  std::vector<uint64_t> rd(64);
  mma_sync(*parse_mma_sync("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc"), registers(fa, a), registers(fb, b),
           registers(fc, c), rd);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 2; ++i) {
      const RowCol at = c_m8n8(lane, i);
      double sum = c(at.row, at.col).value;
      for (int x = 0; x < 128; ++x) sum += a(at.row, x).value != b(x, at.col).value ? 1 : 0;
      REQUIRE(read(fc, rd, lane, i) == exact(sum));
    }
}

TEST_CASE("mma.sync s32 wraps, and clamps with .satfinite", "[warp_mma]") {
  // Every A and B element 127: each D element is C + 32 * 127 * 127 = C + 516128.
  std::vector<uint64_t> a(32 * 4, 0x7f7f7f7f), b(32 * 2, 0x7f7f7f7f), c(32 * 4), d(32 * 4);
  for (size_t i = 0; i < c.size(); ++i) c[i] = i % 2 ? 0x7fff0000u : 0x80000000u;  // 2147418112, -2^31
  mma_sync(*parse_mma_sync("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"), a, b, c, d);
  CHECK(d[0] == uint64_t(0x80000000u + 516128));
  CHECK(d[1] == uint64_t(uint32_t(0x7fff0000u + 516128)));  // wrapped past 2^31 - 1
  mma_sync(*parse_mma_sync("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32"), a, b, c, d);
  CHECK(d[0] == uint64_t(0x80000000u + 516128));
  CHECK(d[1] == 0x7fffffffu);
  mma_sync(*parse_mma_sync("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32"), a, b, c, c);  // D in C's registers
  CHECK(c == d);
}

TEST_CASE("mma.sync rounds the exact sum once", "[warp_mma]") {
  // m16n8k8 f16 -> f32: lane 0's d0 is row 0, column 0: C(0,0) + sum_k A(0,k) B(k,0).
  const std::optional<MmaSync> op = parse_mma_sync("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32");
  std::vector<uint64_t> a(32 * 2, 0), b(32, 0), c(32 * 4, 0), d(32 * 4);
  // A(0,0) = 2^-12 (0x0c00), A(0,1) = 2^-15 (0x0200: subnormal), B(0,0) = B(1,0) = 2^-12: the
  // products are 2^-24 and 2^-27; C = 1.0f. Exactly 1 + 2^-24 + 2^-27 is just above the midpoint
  // 1 + 2^-24, so it rounds to 1 + 2^-23 (summing in f32, 1 + 2^-24 would first tie to 1).
  a[0] = 0x02000c00, b[0] = 0x0c000c00, c[0] = 0x3f800000;
  mma_sync(*op, a, b, c, d);
  CHECK(d[0] == 0x3f800001u);
  a[0] = 0x0c00;  // 1 + 2^-24 alone: a tie, to even
  mma_sync(*op, a, b, c, d);
  CHECK(d[0] == 0x3f800000u);
  // f16 accumulators: 2048 + 1 ties to 2048 (0x6800), 2050 + 1 ties to 2052 (0x6802).
  const std::optional<MmaSync> h = parse_mma_sync("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16");
  std::vector<uint64_t> ch(32 * 2, 0), dh(32 * 2);
  a[0] = 0x3c00, b[0] = 0x3c00;  // A(0,0) = B(0,0) = 1
  ch[0] = 0x6801'6800;  // C(0,0) = 2048, C(0,1) = 2050; B(0,1) comes from lane 4
  b[4] = 0x3c00;
  mma_sync(*h, a, b, ch, dh);
  CHECK(dh[0] == 0x6802'6800u);
  // 65504 (the largest f16, 0x7bff) + 1 * 16 = 65520, the midpoint to 2^16: to even, infinity.
  ch[0] = 0x7bff, b[4] = 0, a[0] = 0x4c00;  // A(0,0) = 16
  mma_sync(*h, a, b, ch, dh);
  CHECK(dh[0] == 0x7c00u);
  a[0] = 0x4bfe;  // 15.984375: 65519.98..., below the midpoint
  mma_sync(*h, a, b, ch, dh);
  CHECK(dh[0] == 0x7bffu);
  a[0] = 0x5c00;  // 256: far beyond
  mma_sync(*h, a, b, ch, dh);
  CHECK(dh[0] == 0x7c00u);
  // A NaN (e4m3 0x7f) makes its row's results the canonical NaN; an f16 infinity stays infinite.
  std::vector<uint64_t> a8(32 * 4, 0), b8(32 * 2, 0x38383838), c8(32 * 4, 0), d8(32 * 4);  // B all 1.0
  a8[0] = 0x7f;  // A(0,0)
  mma_sync(*parse_mma_sync("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"), a8, b8, c8, d8);
  CHECK(d8[0] == 0x7fffffffu);
  CHECK(d8[2] == 0);  // row 8
  a[0] = 0x7c00;  // +inf
  mma_sync(*op, a, b, c, d);
  CHECK(d[0] == 0x7f800000u);
}

TEST_CASE("mma.sync m8n8k4 f16: four MMAs over quad pairs, every layout", "[warp_mma]") {
  // 9.7.14.5.1: MMA c takes lanes 4c..4c+3 (low group) and 16+4c.. (high group). Rows and columns
  // below are within MMA c's 8x8x4 problem; the matrices here stack the four MMAs block-diagonally.
  struct QuadTables {
    static int hi(int l) { return l >= 16 ? 4 : 0; }
    static int mma(int l) { return (l / 4) % 4; }
    static RowCol a_row(int l, int i) { return {8 * mma(l) + l % 4 + hi(l), 4 * mma(l) + i}; }
    static RowCol a_col(int l, int i) { return {8 * mma(l) + i % 4 + hi(l), 4 * mma(l) + l % 4}; }
    static RowCol b_row(int l, int i) { return {4 * mma(l) + l % 4, 8 * mma(l) + i + hi(l)}; }
    static RowCol b_col(int l, int i) { return {4 * mma(l) + i, 8 * mma(l) + l % 4 + hi(l)}; }
    static RowCol c_f16(int l, int i) { return {8 * mma(l) + l % 4 + hi(l), 8 * mma(l) + i}; }
    static RowCol c_f32(int l, int i) {
      const int x = (l & 1) + (i & 2);
      return {8 * mma(l) + x + hi(l), 8 * mma(l) + (i & 4) + (l & 2) + (i & 1)};
    }
  };
  auto tiny = [] { return element(f16, 15, 16, 1); };
  auto c16 = [] { return element(f16, 15, 19, 2); };
  auto c32 = [] { Element x = element(f16, 15, 19); return Element{f32_bits(x.value), x.value}; };
  const Fragment cf16{4, 2, 16, QuadTables::c_f16}, cf32{8, 1, 32, QuadTables::c_f32};
  for (bool a_row : {true, false})
    for (bool b_row : {true, false}) {
      const std::string shape = std::string("mma.sync.aligned.m8n8k4") + (a_row ? ".row" : ".col") + (b_row ? ".row" : ".col");
      const Fragment fa{2, 2, 16, a_row ? QuadTables::a_row : QuadTables::a_col}, fb{2, 2, 16, b_row ? QuadTables::b_row : QuadTables::b_col};
      check_mma((shape + ".f16.f16.f16.f16").c_str(), 32, 32, 16, fa, fb, cf16, cf16, tiny, tiny, c16, f16_code, {}, nullptr, nullptr, true);
      check_mma((shape + ".f32.f16.f16.f32").c_str(), 32, 32, 16, fa, fb, cf32, cf32, tiny, tiny, c32, f32_bits, {}, nullptr, nullptr, true);
      check_mma((shape + ".f32.f16.f16.f16").c_str(), 32, 32, 16, fa, fb, cf16, cf32, tiny, tiny, c16, f32_bits, {}, nullptr, nullptr, true);
    }
}

TEST_CASE("mma.sync block scaling: each kind, scale_vec and selector", "[warp_mma]") {
  // "Block Scaling for mma.sync": thread-id-a picks the lane pair 2 tid, 2 tid + 1 of each quad
  // (groupID g); of the pair, the lower lane holds row g's factors and the upper row g + 8's
  // (Figure 43, read through CuTe's SFALayout); thread-id-b picks the lane of each quad whose
  // factors are column g's. Byte byte-id + j is K block j's factor. Every other byte is 0xff: a NaN
  // in ue8m0 and in ue4m3, so a factor taken from the wrong lane or byte shows.
  struct Scaled {
    const char* opcode;
    int k, vec;
    bool ue4m3;
    uint64_t byte_a, thread_a, byte_b, thread_b;
    Fragment fa, fb;
    std::function<Element()> da, db;
  };
  auto fp4 = [] { return whole_range(e2m1); };
  auto fp4_byte = [] { Element x = whole_range(e2m1); x.code <<= 2; return x; };
  const Scaled cases[] = {
      {"mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m1.e4m3.f32.ue8m0", 32, 1, false, 3, 1, 1, 2,
       {4, 4, 8, a_16832_i8}, {2, 4, 8, b_16832_i8}, fp4_byte, [] { return whole_range(e4m3); }},
      {"mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0", 64, 2, false, 2, 0, 0, 3,
       {4, 8, 4, a_16864_4b}, {2, 8, 4, b_16864_4b}, fp4, fp4},
      {"mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0", 64, 2, false, 0, 1, 2, 1,
       {4, 8, 4, a_16864_4b}, {2, 8, 4, b_16864_4b}, fp4, fp4},
      {"mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue8m0", 64, 4, false, 0, 0, 0, 0,
       {4, 8, 4, a_16864_4b}, {2, 8, 4, b_16864_4b}, fp4, fp4},
      {"mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3", 64, 4, true, 0, 1, 0, 2,
       {4, 8, 4, a_16864_4b}, {2, 8, 4, b_16864_4b}, fp4, fp4},
  };
  for (const Scaled& s : cases) {
    // Factors: ue8m0 2^-3 .. 2^3 (code 124 .. 130), ue4m3 (1 + m/8) 2^(e - 7) for e in 5 .. 9.
    auto factor = [&] {
      if (!s.ue4m3) { const int code = uniform(124, 130); return Element{uint64_t(code), std::ldexp(1.0, code - 127)}; }
      const int e = uniform(5, 9), m = uniform(0, 7);
      return Element{uint64_t(e << 3 | m), std::ldexp(8.0 + m, e - 10)};
    };
    Element sfa[16][4], sfb[4][8];
    std::vector<uint64_t> scale_a(32, 0xffffffffu), scale_b(32, 0xffffffffu);
    auto put = [](uint64_t& reg, uint64_t byte, uint64_t code) { reg = (reg & ~(0xffull << (8 * byte))) | code << (8 * byte); };
    for (int r = 0; r < 16; ++r)
      for (int j = 0; j < s.vec; ++j) {
        sfa[r][j] = factor();
        const int lane = 4 * (r % 8) + 2 * int(s.thread_a) + (r < 8 ? 0 : 1);
        put(scale_a[size_t(lane)], s.byte_a + uint64_t(j), sfa[r][j].code);
      }
    for (int n = 0; n < 8; ++n)
      for (int j = 0; j < s.vec; ++j) {
        sfb[j][n] = factor();
        put(scale_b[size_t(4 * n + int(s.thread_b))], s.byte_b + uint64_t(j), sfb[j][n].code);
      }
    const std::vector<uint64_t> ba(32, s.byte_a), ta(32, s.thread_a), bb(32, s.byte_b), tb(32, s.thread_b);
    const int block = s.k / s.vec;
    check_mma(s.opcode, 16, 8, s.k, s.fa, s.fb, c16x8_f32, c16x8_f32, s.da, s.db, f32_c, f32_bits, {scale_a, ba, ta, scale_b, bb, tb},
              [&](int r, int k) { return sfa[r][k / block].value; }, [&](int k, int n) { return sfb[k / block][n].value; });
  }
}

TEST_CASE("mma.sync refuses what the ISA leaves undefined", "[warp_mma]") {
  const std::optional<MmaSync> op = parse_mma_sync("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0");
  REQUIRE(op);
  CHECK(op->scale_vec == 2);
  std::vector<uint64_t> a(32 * 4), b(32 * 2), c(32 * 4), d(32 * 4), data(32), zero(32, 0), two(32, 2), one(32, 1);
  CHECK_THROWS_AS(mma_sync(*op, a, b, c, d), Fault);                                 // no scale operands
  CHECK_THROWS_AS(mma_sync(*op, a, b, c, d, {data, one, zero, data, zero, zero}), Fault);  // byte-id 1 with 2X
  CHECK_THROWS_AS(mma_sync(*op, a, b, c, d, {data, zero, two, data, zero, zero}), Fault);  // thread-id-a 2
  std::vector<uint64_t> mixed(32, 0);
  mixed[7] = 1;
  CHECK_THROWS_AS(mma_sync(*op, a, b, c, d, {data, zero, mixed, data, zero, zero}), Fault);  // lanes disagree
  CHECK_NOTHROW(mma_sync(*op, a, b, c, d, {data, two, one, data, zero, zero}));
  CHECK_THROWS_AS(mma_sync(*op, std::span(a).first(64), b, c, d, {data, zero, zero, data, zero, zero}), Fault);
}

TEST_CASE("parse_mma_sync: the ISA's forms, their registers and targets", "[warp_mma]") {
  struct Form {
    const char* opcode;
    int a, b, c, d, sm;
    bool family;
  };
  // Register counts from the fragment tables' "A vector expression containing N ... registers".
  const Form forms[] = {
      {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 4, 2, 4, 4, 80, false},
      {"mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16", 2, 1, 2, 2, 75, false},
      {"mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", 2, 1, 4, 4, 80, false},
      {"mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e5m2.f16", 4, 2, 2, 2, 89, false},
      {"mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32", 2, 1, 4, 4, 89, false},
      {"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 1, 1, 2, 2, 80, false},
      {"mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64", 8, 4, 4, 4, 90, false},
      {"mma.sync.aligned.m16n8k8.row.col.rn.f64.f64.f64.f64", 4, 2, 4, 4, 90, false},
      {"mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f16", 2, 2, 4, 8, 70, false},
      {"mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f16.e2m1.e3m2.f16", 4, 2, 2, 2, 120, true},
      {"mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue4m3", 4, 2, 4, 4, 120, true},
      {"mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e5m2.e2m3.f32.ue8m0", 4, 2, 4, 4, 120, true},
      {"mma.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.u4.s32", 4, 2, 4, 4, 80, false},
      {"mma.sync.aligned.m8n8k16.row.col.satfinite.s32.s8.u8.s32", 1, 1, 2, 2, 75, false},
      {"mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc", 1, 1, 2, 2, 75, false},
      {"mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc", 1, 1, 2, 2, 80, false},
  };
  for (const Form& f : forms) {
    INFO(f.opcode);
    const std::optional<MmaSync> op = parse_mma_sync(f.opcode);
    REQUIRE(op);
    CHECK((op->a_regs == f.a && op->b_regs == f.b && op->c_regs == f.c && op->d_regs == f.d));
    CHECK(op->minimum_sm == f.sm);
    CHECK(op->family_specific == f.family);
  }
  const std::optional<MmaSync> mx = parse_mma_sync("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e5m2.e2m3.f32.ue8m0");
  CHECK(mx->scale_vec == 1);
  for (const char* bad : {
           "mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f16",          // bf16 accumulates in f32
           "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16",            // .dtype != .ctype
           "mma.sync.aligned.m16n8k32.row.col.f32.e3m2.e4m3.f32",          // FP6 needs kind::f8f6f4
           "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.s8.s8.f32",  // not an f8f6f4 type
           "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue4m3",
           "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.f32.e2m1.e2m1.f32.ue8m0",  // scale_vec is mandatory
           "mma.sync.aligned.m16n8k64.row.col.kind::mxf4.f32.e2m1.e2m1.f32",                         // no .block_scale
           "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::2X.f32.e4m3.e4m3.f32.ue8m0",
           "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e4m3.f16.ue8m0",   // f32 only
           "mma.sync.aligned.m16n8k16.col.col.f32.f16.f16.f32",             // only m8n8k4 takes other layouts
           "mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32",
           "mma.sync.aligned.m16n8k32.row.col.f64.f64.f64.f64",
           "mma.sync.aligned.m16n8k16.row.col.rz.f64.f64.f64.f64",          // only .rn is modelled
           "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32",              // no .popc
           "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f32",               // an f32 C needs an f32 D
           "mma.sync.m16n8k16.row.col.f32.f16.f16.f32",                     // .aligned is mandatory
           "mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32",          // sparse: not modelled
       }) {
    INFO(bad);
    CHECK_THROWS_AS(parse_mma_sync(bad), Fault);
  }
  CHECK_FALSE(parse_mma_sync("mov.b32"));
  CHECK_FALSE(parse_mma_sync("mmax.sync"));
}
