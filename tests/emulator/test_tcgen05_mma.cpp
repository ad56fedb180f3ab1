// tcgen05.mma against independent derivations: descriptor fields as literal numbers composed by
// hand from the ISA's tables; operands placed in shared memory by the ISA's canonical layouts
// (and, once, by the TMA's 128-byte swizzle of row-major rows) written out in this file; values
// encoded by this file's own format encoder; D read back through tcgen05.ld (or the data path
// layout's lanes) and compared with a double product computed here. Values are small enough that
// every expected sum is exact in f32.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "emulator/tcgen05_copy.hpp"
#include "emulator/tcgen05_mma.hpp"

using namespace cutejit::emulator;

namespace {
class SharedBytes final : public Memory {
 public:
  explicit SharedBytes(size_t n) : bytes(n) {}
  void read(uint64_t a, void* out, size_t n) override {
    if (a + n > bytes.size()) throw Fault("shared read out of bounds");
    std::memcpy(out, bytes.data() + a, n);
  }
  void write(uint64_t a, const void* in, size_t n) override {
    if (a + n > bytes.size()) throw Fault("shared write out of bounds");
    std::memcpy(bytes.data() + a, in, n);
  }
  void set_bits(uint32_t byte, uint32_t bit, uint32_t count, uint32_t value) {
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t b = bit + i;
      uint8_t& x = bytes.at(byte + b / 8);
      x = uint8_t((x & ~(1u << (b % 8))) | ((value >> i & 1u) << (b % 8)));
    }
  }
  std::vector<uint8_t> bytes;
};

// ---- formats, from their definitions: sign, e exponent bits (bias), m mantissa bits ----
struct Format {
  int e, m, bias;
};
const Format f16{5, 10, 15}, bf16{8, 7, 127}, e4m3{4, 3, 7}, e5m2{5, 2, 15}, e2m3{2, 3, 1}, e3m2{3, 2, 3}, e2m1{2, 1, 1};

/// The code of `v`, which must be exactly representable (normal or subnormal).
uint32_t encode(double v, Format f) {
  const uint32_t sign = v < 0 ? 1u << (f.e + f.m) : 0u;
  double a = std::fabs(v);
  if (a == 0) return sign;
  int ex = int(std::floor(std::log2(a)));
  uint32_t code;
  if (ex < 1 - f.bias) {
    const double q = std::ldexp(a, f.bias - 1 + f.m);
    REQUIRE(q == std::floor(q));
    code = uint32_t(q);
  } else {
    const double q = std::ldexp(a, f.m - ex) - std::ldexp(1.0, f.m);
    REQUIRE(q == std::floor(q));
    code = uint32_t(ex + f.bias) << f.m | uint32_t(q);
  }
  return sign | code;
}
uint32_t tf32_bits(double v) { return std::bit_cast<uint32_t>(float(v)); }

/// Small values: quarters from -2 to 2 (or E2M1's codes), picked by a fixed sequence.
double quarter(uint32_t i) { return double(int((i * 2654435761u >> 7) % 17) - 8) / 4; }
double fp4_value(uint32_t i) {
  static const double v[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return ((i * 2246822519u >> 9) & 1 ? -1 : 1) * v[(i * 2654435761u >> 11) % 8];
}

// ---- descriptors, bit by bit from the ISA's tables ----
uint64_t smem_desc(uint32_t start, uint32_t lbo, uint32_t sbo, uint64_t mode) {
  return uint64_t(start >> 4) | uint64_t(lbo >> 4) << 16 | uint64_t(sbo >> 4) << 32 | uint64_t(1) << 46 | mode << 61;
}
/// Table "kind::tf32, f16, f8f6f4, i8": dtype 4-5, atype 7-9, btype 10-12, negate 13/14,
/// transpose 15/16, N >> 3 at 17-22, M >> 4 at 24-28.
uint32_t idesc(uint32_t dtype, uint32_t atype, uint32_t btype, bool ta, bool tb, uint32_t n, uint32_t m, bool neg_a = false, bool sat = false) {
  return uint32_t(sat) << 3 | dtype << 4 | atype << 7 | btype << 10 | uint32_t(neg_a) << 13 | uint32_t(ta) << 15 | uint32_t(tb) << 16 |
         (n >> 3) << 17 | (m >> 4) << 24;
}
/// The block-scaled tables: B scale id 4-5, atype 7-9, btype 10-12 (10-11 for FP4), N >> 3 at
/// 17-22, scale type 23, M >> 7 at 27-28, A scale id 29-30.
uint32_t idesc_scaled(uint32_t atype, uint32_t btype, uint32_t n, uint32_t scale_type, uint32_t sfa_id, uint32_t sfb_id) {
  return sfb_id << 4 | atype << 7 | btype << 10 | (n >> 3) << 17 | scale_type << 23 | (128u >> 7) << 27 | sfa_id << 29;
}

// ---- canonical layouts (T elements of `eb` bytes per 16 bytes) ----
enum class Sw { none, b32, b64, b128, b128_atom32 };
struct Place {
  bool k_major;
  Sw sw;
  uint32_t start, lbo, sbo;
};
uint32_t byte_of(const Place& p, uint32_t mn, uint32_t k, uint32_t eb) {
  const uint32_t t = 16 / eb;
  const uint32_t w = p.sw == Sw::b32 ? 32 : p.sw == Sw::b64 ? 64 : 128;
  uint32_t off;
  if (p.k_major) {
    off = p.sw == Sw::none ? (mn % 8) * 16 + (mn / 8) * p.sbo + (k / t) * p.lbo + (k % t) * eb
                           : (mn % 8) * w + (mn / 8) * p.sbo + (k / t) * 16 + (k % t) * eb;
  } else if (p.sw == Sw::none) {
    off = (mn % t) * eb + (mn / t) * p.sbo + (k % 8) * 16 + (k / 8) * p.lbo;
  } else if (p.sw == Sw::b128_atom32) {
    off = (mn % t) * eb + (mn / t % 8) * 16 + (mn / t / 8) * p.lbo + (k % 4) * 128 + (k / 4) * p.sbo;
  } else {
    off = (mn % t) * eb + (mn / t % (w / 16)) * 16 + (mn / t / (w / 16)) * p.lbo + (k % 8) * w + (k / 8) * p.sbo;
  }
  const uint32_t a = p.start + off;
  if (p.sw == Sw::none) return a;
  if (p.sw == Sw::b128_atom32) return a ^ ((a >> 7 & 3) << 5);
  return a ^ ((a >> 7 & (w / 16 - 1)) << 4);
}
uint64_t desc_of(const Place& p) {
  const uint64_t mode = p.sw == Sw::none ? 0 : p.sw == Sw::b128_atom32 ? 1 : p.sw == Sw::b128 ? 2 : p.sw == Sw::b64 ? 4 : 6;
  return smem_desc(p.start, p.lbo, p.sbo, mode);
}
void put(SharedBytes& s, const Place& p, uint32_t mn, uint32_t k, uint32_t eb, uint32_t code) {
  const uint32_t a = byte_of(p, mn, k, eb);
  for (uint32_t i = 0; i < eb; ++i) s.bytes.at(a + i) = uint8_t(code >> (8 * i));
}

struct Cta {
  SharedBytes s{65536};
  TensorMemory t;
  Cta() { REQUIRE(t.try_allocate(512).has_value()); }
};

/// D (f32 bits) of a full-lane layout, read back as the epilogue would: tcgen05.ld.32x32b by the
/// four warps of a warpgroup, eight columns at a time.
std::vector<uint32_t> read_d(const TensorMemory& t, uint32_t column, uint32_t n) {
  std::vector<uint32_t> d(128 * n), regs(32 * 8);
  const Tcgen05LdSt ld = parse_tcgen05_ld_st("tcgen05.ld.sync.aligned.32x32b.x8.b32");
  for (uint32_t w = 0; w < 4; ++w)
    for (uint32_t c = 0; c < n; c += 8) {
      tcgen05_ld(ld, (32 * w) << 16 | (column + c), w, t, regs);
      for (uint32_t th = 0; th < 32; ++th)
        for (uint32_t r = 0; r < 8; ++r) d[(32 * w + th) * n + c + r] = regs[th * 8 + r];
    }
  return d;
}
float as_f32(uint32_t bits) { return std::bit_cast<float>(bits); }

void run(const char* opcode, const MmaOperands& x, Cta& c) {
  Memory* sh[] = {&c.s};
  TensorMemory* tm[] = {&c.t};
  tcgen05_mma(parse_tcgen05_mma(opcode), x, sh, tm);
}
}  // namespace

TEST_CASE("instruction descriptor fields sit where the ISA's tables put them", "[emulator][tcgen05][mma]") {
  // kind::f16, D F32 (bit 4), A and B BF16 (bits 7, 10), N = 256 (32 << 17), M = 128 (8 << 24).
  const InstrDescriptor a = decode_instr_descriptor(0x08400490u, MmaKind::f16);
  CHECK(a.d == AccumulatorType::f32);
  CHECK(a.a == ElementType::bf16);
  CHECK(a.b == ElementType::bf16);
  CHECK(a.n == 256);
  CHECK(a.m == 128);
  CHECK(a.a_major == Major::k);
  // kind::tf32: D F32 0x10, TF32 = 2 at 7 and 10 (0x100, 0x800), transpose A 0x8000, N = 8
  // (0x20000), M = 64 (4 << 24).
  const InstrDescriptor b = decode_instr_descriptor(0x04028910u, MmaKind::tf32);
  CHECK(b.a == ElementType::tf32);
  CHECK(b.a_major == Major::mn);
  CHECK(b.b_major == Major::k);
  CHECK(b.n == 8);
  CHECK(b.m == 64);
  // kind::i8: saturate 0x8, S32 = 2 at 4 (0x20), A signed 0x80, B unsigned, N = 32, M = 128.
  const InstrDescriptor c = decode_instr_descriptor(0x080800A8u, MmaKind::i8);
  CHECK(c.saturate);
  CHECK(c.d == AccumulatorType::s32);
  CHECK(c.a == ElementType::s8);
  CHECK(c.b == ElementType::u8);
  // kind::mxf4nvf4: E2M1 = 1 at 7 and 10, N = 128 (16 << 17), UE4M3 (bit 23 = 0), M = 128
  // (1 << 27), A scale id 2 (2 << 29), B scale id 2 (2 << 4).
  const InstrDescriptor d = decode_instr_descriptor(0x482004A0u, MmaKind::mxf4nvf4);
  CHECK(d.a == ElementType::e2m1);
  CHECK(d.n == 128);
  CHECK(d.m == 128);
  CHECK(d.scale == ScaleType::ue4m3);
  CHECK(d.scale_a_id == 2);
  CHECK(d.scale_b_id == 2);
  // kind::mxf8f6f4: A E2M3 (3), B E3M2 (4), UE8M0 (bit 23), M = 256 (2 << 27), A scale id 3.
  const InstrDescriptor e = decode_instr_descriptor(0x70801180u | 16u << 17, MmaKind::mxf8f6f4);
  CHECK(e.a == ElementType::e2m3);
  CHECK(e.b == ElementType::e3m2);
  CHECK(e.m == 256);
  CHECK(e.scale_a_id == 3);
  CHECK(e.scale == ScaleType::ue8m0);

  CHECK_THROWS_WITH(decode_instr_descriptor(0x08400490u | 1u << 2, MmaKind::f16), Catch::Contains("sparse"));
  CHECK_THROWS_WITH(decode_instr_descriptor(0x08400490u | 1u << 6, MmaKind::f16), Catch::Contains("reserved"));
  CHECK_THROWS_AS(decode_instr_descriptor(0x08400490u | 1u << 23, MmaKind::f16), Fault);
  CHECK_THROWS_AS(decode_instr_descriptor(0x08400490u, MmaKind::tf32), Fault);           // BF16 is no TF32
  CHECK_THROWS_AS(decode_instr_descriptor(0x08400490u | 1u << 3, MmaKind::f16), Fault);  // saturate outside i8
  CHECK_THROWS_AS(decode_instr_descriptor(0x080800A8u | 1u << 13, MmaKind::i8), Fault);  // i8 cannot negate
  CHECK_THROWS_AS(decode_instr_descriptor(0x08400480u, MmaKind::i8), Fault);             // D F16 for i8
  CHECK_THROWS_AS(decode_instr_descriptor(0x08400000u | 2u << 7, MmaKind::f8f6f4), Fault);  // type code 2
  CHECK_THROWS_AS(decode_instr_descriptor(0x48200480u | 1u << 31, MmaKind::mxf4nvf4), Fault);  // K = 96
  CHECK_THROWS_AS(decode_instr_descriptor(0x48200480u | 1u << 24, MmaKind::mxf4nvf4), Fault);  // reserved 24-26
}

TEST_CASE("shared memory descriptor fields sit where the ISA's table puts them", "[emulator][tcgen05][mma]") {
  // start 0x1230 (0x123 at 0), LBO 0x80 (8 at 16), SBO 0x400 (0x40 at 32), fixed 0b001 at 46,
  // 128-byte swizzle (2 at 61).
  const SmemDescriptor d = decode_smem_descriptor(0x4000404000080123ull);
  CHECK(d.start_address == 0x1230);
  CHECK(d.leading_byte_offset == 0x80);
  CHECK(d.stride_byte_offset == 0x400);
  CHECK(d.swizzle == SmemSwizzle::b128);
  CHECK(d.base_offset == 0);
  CHECK_FALSE(d.lbo_absolute);
  CHECK(decode_smem_descriptor(0x4000404000080123ull | 5ull << 49).base_offset == 5);
  CHECK(decode_smem_descriptor(0x0000400000000000ull | 1ull << 52).lbo_absolute);
  CHECK_THROWS_WITH(decode_smem_descriptor(0x4000004000080123ull), Catch::Contains("0b001"));  // bit 46 clear
  CHECK_THROWS_AS(decode_smem_descriptor(0x4000404000080123ull | 1ull << 47), Fault);
  CHECK_THROWS_AS(decode_smem_descriptor(0x4000404000080123ull | 1ull << 53), Fault);
  CHECK_THROWS_AS(decode_smem_descriptor(0x0000400000000000ull | 5ull << 61), Fault);
  CHECK_THROWS_AS(decode_smem_descriptor(0x0000400000000000ull | 1ull << 14), Fault);
}

TEST_CASE("kind::f16 SS, M = 128: a K loop over a TMA-swizzled tile", "[emulator][tcgen05][mma]") {
  // A (128 x 64 BF16) and B (64 x 64 BF16), K-major rows of 128 bytes as the TMA's 128-byte
  // swizzle writes them: row r at r * 128, its 16-byte chunk j at chunk j ^ (r % 8). Each MMA takes
  // 16 of K, stepping the descriptors' start 32 bytes along the row.
  Cta c;
  const uint32_t m = 128, n = 64, k = 64, a0 = 0, b0 = 16384;
  auto tma = [](uint32_t base, uint32_t r, uint32_t kk) { return base + r * 128 + (((kk * 2) / 16) ^ (r % 8)) * 16 + (kk * 2) % 16; };
  std::vector<double> a(m * k), b(n * k);
  for (uint32_t i = 0; i < m * k; ++i) a[i] = quarter(i);
  for (uint32_t i = 0; i < n * k; ++i) b[i] = quarter(i + 7777);
  for (uint32_t r = 0; r < m; ++r)
    for (uint32_t kk = 0; kk < k; ++kk) c.s.store<uint16_t>(tma(a0, r, kk), uint16_t(encode(a[r * k + kk], bf16)));
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t kk = 0; kk < k; ++kk) c.s.store<uint16_t>(tma(b0, r, kk), uint16_t(encode(b[r * k + kk], bf16)));
  for (uint32_t step = 0; step < k / 16; ++step) {
    MmaOperands x;
    x.d_tmem = 64;
    x.a = smem_desc(a0 + 32 * step, 16, 1024, 2);
    x.b_desc = smem_desc(b0 + 32 * step, 16, 1024, 2);
    x.idesc = idesc(1, 1, 1, false, false, n, m);
    x.enable_input_d = step > 0;
    run("tcgen05.mma.cta_group::1.kind::f16", x, c);
  }
  const std::vector<uint32_t> d = read_d(c.t, 64, n);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      double want = 0;
      for (uint32_t kk = 0; kk < k; ++kk) want += a[i * k + kk] * b[j * k + kk];
      INFO("D(" << i << ", " << j << ")");
      REQUIRE(as_f32(d[i * n + j]) == float(want));
    }
}

TEST_CASE("kind::f16, M = 64 (half the lanes), MN-major operands without swizzle, F16 D and negated A", "[emulator][tcgen05][mma]") {
  Cta c;
  const uint32_t m = 64, n = 16, k = 16;
  // MN-major, no swizzle: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)), T = 8 halves.
  const Place pa{false, Sw::none, 0, 1024, 128}, pb{false, Sw::none, 8192, 256, 128};
  std::vector<double> a(m * k), b(n * k);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t kk = 0; kk < k; ++kk) put(c.s, pa, i, kk, 2, encode(a[i * k + kk] = quarter(i * k + kk), f16));
  for (uint32_t j = 0; j < n; ++j)
    for (uint32_t kk = 0; kk < k; ++kk) put(c.s, pb, j, kk, 2, encode(b[j * k + kk] = quarter(j * k + kk + 99), f16));
  MmaOperands x;
  x.d_tmem = 16u << 16 | 100;  // Layout F at lane alignment 16
  x.a = desc_of(pa);
  x.b_desc = desc_of(pb);
  x.idesc = idesc(0, 0, 0, true, true, n, m, /*neg_a=*/true);
  run("tcgen05.mma.cta_group::1.kind::f16", x, c);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      double want = 0;
      for (uint32_t kk = 0; kk < k; ++kk) want -= a[i * k + kk] * b[j * k + kk];
      // Layout F (CuTe's ((16,4),N):((1,32),128)): row i in lane 16 + i % 16 + 32 (i / 16).
      const uint32_t lane = 16 + i % 16 + 32 * (i / 16);
      INFO("D(" << i << ", " << j << ") in lane " << lane);
      REQUIRE(c.t.read(lane, 100 + j) == encode(want, f16));
    }
  CHECK_FALSE(c.t.is_initialised(0, 100));  // lanes 0-15 of the quarter are not D's
}

TEST_CASE("kind::tf32: K-major A without swizzle, MN-major B in 128-byte swizzle with 32-byte atoms", "[emulator][tcgen05][mma]") {
  Cta c;
  const uint32_t m = 128, n = 32, k = 8;
  const Place pa{true, Sw::none, 0, 2048, 128}, pb{false, Sw::b128_atom32, 32768, 1024, 512};
  std::vector<double> a(m * k), b(n * k);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t kk = 0; kk < k; ++kk) put(c.s, pa, i, kk, 4, tf32_bits(a[i * k + kk] = quarter(i * 31 + kk)) | 0x1FFFu);  // low bits ignored
  for (uint32_t j = 0; j < n; ++j)
    for (uint32_t kk = 0; kk < k; ++kk) put(c.s, pb, j, kk, 4, tf32_bits(b[j * k + kk] = quarter(j * 17 + kk + 5)));
  MmaOperands x;
  x.d_tmem = 0;
  x.a = desc_of(pa);
  x.b_desc = desc_of(pb);
  x.idesc = idesc(1, 2, 2, false, true, n, m);
  run("tcgen05.mma.cta_group::1.kind::tf32", x, c);
  const std::vector<uint32_t> d = read_d(c.t, 0, n);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      double want = 0;
      for (uint32_t kk = 0; kk < k; ++kk) want += a[i * k + kk] * b[j * k + kk];
      REQUIRE(as_f32(d[i * n + j]) == float(want));
    }
  // An MN-major TF32 operand in any other swizzle is refused.
  x.b_desc = desc_of(Place{false, Sw::b128, 32768, 1024, 1024});
  CHECK_THROWS_WITH(run("tcgen05.mma.cta_group::1.kind::tf32", x, c), Catch::Contains("32-byte atoms"));
}

TEST_CASE("kind::f16 TS: A stored to TMEM by tcgen05.st, accumulating into D", "[emulator][tcgen05][mma]") {
  Cta c;
  const uint32_t m = 128, n = 24, k = 16;
  std::vector<double> a(m * k), b(n * k), d0(m * n);
  // A row i in lane i, two halves per column, the lower k in the low bits: 8 columns, stored by
  // the warpgroup's four warps with tcgen05.st.32x32b.x8 (thread t, register r -> lane t, column r).
  const Tcgen05LdSt st = parse_tcgen05_ld_st("tcgen05.st.sync.aligned.32x32b.x8.b32");
  for (uint32_t w = 0; w < 4; ++w) {
    std::vector<uint32_t> regs(32 * 8);
    for (uint32_t th = 0; th < 32; ++th)
      for (uint32_t r = 0; r < 8; ++r) {
        const uint32_t i = 32 * w + th;
        a[i * k + 2 * r] = quarter(i * k + 2 * r + 1);
        a[i * k + 2 * r + 1] = quarter(i * k + 2 * r + 2);
        regs[th * 8 + r] = encode(a[i * k + 2 * r], f16) | encode(a[i * k + 2 * r + 1], f16) << 16;
      }
    tcgen05_st(st, (32 * w) << 16 | 256, w, c.t, regs);
  }
  const Place pb{true, Sw::b64, 4096, 0, 512};
  for (uint32_t j = 0; j < n; ++j)
    for (uint32_t kk = 0; kk < k; ++kk) put(c.s, pb, j, kk, 2, encode(b[j * k + kk] = quarter(j * 3 + kk * 11), f16));
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) c.t.write(i, 32 + j, std::bit_cast<uint32_t>(float(d0[i * n + j] = quarter(i + j * 128))));
  MmaOperands x;
  x.d_tmem = 32;
  x.a_in_tmem = true;
  x.a = 256;
  x.b_desc = desc_of(pb);
  x.idesc = idesc(1, 0, 0, false, false, n, m);
  x.enable_input_d = true;
  run("tcgen05.mma.cta_group::1.kind::f16", x, c);
  const std::vector<uint32_t> d = read_d(c.t, 32, n);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      double want = d0[i * n + j];
      for (uint32_t kk = 0; kk < k; ++kk) want += a[i * k + kk] * b[j * k + kk];
      REQUIRE(as_f32(d[i * n + j]) == float(want));
    }
  x.idesc = idesc(1, 0, 0, true, false, n, m);
  CHECK_THROWS_WITH(run("tcgen05.mma.cta_group::1.kind::f16", x, c), Catch::Contains("K-major"));
}

TEST_CASE("kind::i8: exact int32 sums, wrapping or saturating", "[emulator][tcgen05][mma]") {
  Cta c;
  const uint32_t m = 128, n = 32, k = 32;
  const Place pa{true, Sw::b32, 0, 0, 256}, pb{true, Sw::none, 8192, 512, 128};
  std::vector<int64_t> a(m * k), b(n * k);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t kk = 0; kk < k; ++kk) put(c.s, pa, i, kk, 1, uint8_t(int8_t(a[i * k + kk] = int((i * 7 + kk * 13) % 256) - 128)));
  for (uint32_t j = 0; j < n; ++j)
    for (uint32_t kk = 0; kk < k; ++kk) put(c.s, pb, j, kk, 1, uint8_t(b[j * k + kk] = (j * 29 + kk * 3) % 256));
  MmaOperands x;
  x.d_tmem = 0;
  x.a = desc_of(pa);
  x.b_desc = desc_of(pb);
  x.idesc = idesc(2, 1, 0, false, false, n, m);
  run("tcgen05.mma.cta_group::1.kind::i8", x, c);
  std::vector<int64_t> want(m * n);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      for (uint32_t kk = 0; kk < k; ++kk) want[i * n + j] += a[i * k + kk] * b[j * k + kk];
      REQUIRE(int32_t(c.t.read(i, j)) == want[i * n + j]);
    }
  // Accumulating onto INT32_MAX - 5 overflows where the sum is more than 5.
  uint32_t at = 0;
  while (want[at] <= 5) ++at;
  const uint32_t i = at / n, j = at % n;
  c.t.write(i, j, uint32_t(INT32_MAX - 5));
  x.enable_input_d = true;
  for (uint32_t r = 0; r < m; ++r)
    for (uint32_t col = 0; col < n; ++col) c.t.write(r, col, r == i && col == j ? uint32_t(INT32_MAX - 5) : 0u);
  run("tcgen05.mma.cta_group::1.kind::i8", x, c);
  CHECK(c.t.read(i, j) == uint32_t(int64_t(INT32_MAX) - 5 + want[i * n + j]));  // two's complement wrap
  c.t.write(i, j, uint32_t(INT32_MAX - 5));
  x.idesc = idesc(2, 1, 0, false, false, n, m, false, /*sat=*/true);
  run("tcgen05.mma.cta_group::1.kind::i8", x, c);
  CHECK(c.t.read(i, j) == uint32_t(INT32_MAX));
}

TEST_CASE("kind::f8f6f4: E4M3 x E5M2, and FP4 x FP6 in their padded 16-byte rows", "[emulator][tcgen05][mma]") {
  const uint32_t m = 128, n = 16, k = 32;
  SECTION("E4M3 x E5M2 -> F16") {
    Cta c;
    const Place pa{true, Sw::b128, 0, 0, 1024}, pb{false, Sw::b64, 32768, 2048, 512};  // B MN-major (8-bit: N % 16)
    std::vector<double> a(m * k), b(n * k);
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t kk = 0; kk < k; ++kk) put(c.s, pa, i, kk, 1, encode(a[i * k + kk] = quarter(i * 5 + kk * 3), e4m3));
    for (uint32_t j = 0; j < n; ++j)
      for (uint32_t kk = 0; kk < k; ++kk) put(c.s, pb, j, kk, 1, encode(b[j * k + kk] = quarter(j * 9 + kk * 7 + 1), e5m2));
    MmaOperands x;
    x.a = desc_of(pa);
    x.b_desc = desc_of(pb);
    x.idesc = idesc(0, 0, 1, false, true, n, m);
    run("tcgen05.mma.cta_group::1.kind::f8f6f4", x, c);
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t j = 0; j < n; ++j) {
        double want = 0;
        for (uint32_t kk = 0; kk < k; ++kk) want += a[i * k + kk] * b[j * k + kk];
        REQUIRE(c.t.read(i, j) == encode(want, f16));
      }
  }
  SECTION("E2M1 x E3M2 -> F32") {
    // .b4x16_p64 / .b6x16_p32: 16 values packed low to high in a 16-byte chunk, then padding.
    Cta c;
    const uint32_t sbo = 128, lbo = 2048, b0 = 8192;
    std::vector<double> a(m * k), b(n * k);
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t kk = 0; kk < k; ++kk)
        c.s.set_bits((i % 8) * 16 + (i / 8) * sbo + (kk / 16) * lbo, (kk % 16) * 4, 4, encode(a[i * k + kk] = fp4_value(i * k + kk), e2m1));
    for (uint32_t j = 0; j < n; ++j)
      for (uint32_t kk = 0; kk < k; ++kk)
        c.s.set_bits(b0 + (j % 8) * 16 + (j / 8) * sbo + (kk / 16) * lbo, (kk % 16) * 6, 6, encode(b[j * k + kk] = quarter(j * 13 + kk), e3m2));
    MmaOperands x;
    x.a = smem_desc(0, lbo, sbo, 0);
    x.b_desc = smem_desc(b0, lbo, sbo, 0);
    x.idesc = idesc(1, 5, 4, false, false, n, m);
    run("tcgen05.mma.cta_group::1.kind::f8f6f4", x, c);
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t j = 0; j < n; ++j) {
        double want = 0;
        for (uint32_t kk = 0; kk < k; ++kk) want += a[i * k + kk] * b[j * k + kk];
        REQUIRE(as_f32(c.t.read(i, j)) == float(want));
      }
    x.idesc = idesc(1, 5, 4, true, false, n, m);
    CHECK_THROWS_AS(run("tcgen05.mma.cta_group::1.kind::f8f6f4", x, c), Fault);  // 4-bit A cannot be MN-major
  }
}

TEST_CASE("kind::f16 with .cta_group::2: each CTA holds half of A's rows and half of B's columns", "[emulator][tcgen05][mma]") {
  for (const uint32_t m : {256u, 128u}) {
    INFO("M = " << m);
    const uint32_t n = 32, k = 16;
    Cta c0, c1;
    Cta* cta[] = {&c0, &c1};
    const Place pa{true, Sw::b128, 0, 0, 1024}, pb{true, Sw::b128, 32768, 0, 1024};
    std::vector<double> a(m * k), b(n * k);
    for (uint32_t i = 0; i < m * k; ++i) a[i] = quarter(i + 3);
    for (uint32_t i = 0; i < n * k; ++i) b[i] = quarter(i + 4000);
    for (uint32_t v = 0; v < 2; ++v) {
      for (uint32_t r = 0; r < m / 2; ++r)
        for (uint32_t kk = 0; kk < k; ++kk) put(cta[v]->s, pa, r, kk, 2, encode(a[(v * m / 2 + r) * k + kk], f16));
      for (uint32_t r = 0; r < n / 2; ++r)
        for (uint32_t kk = 0; kk < k; ++kk) put(cta[v]->s, pb, r, kk, 2, encode(b[(v * n / 2 + r) * k + kk], f16));
    }
    MmaOperands x;
    x.d_tmem = 128;
    x.a = desc_of(pa);
    x.b_desc = desc_of(pb);
    x.idesc = idesc(1, 0, 0, false, false, n, m);
    Memory* sh[] = {&c0.s, &c1.s};
    TensorMemory* tm[] = {&c0.t, &c1.t};
    tcgen05_mma(parse_tcgen05_mma("tcgen05.mma.cta_group::2.kind::f16"), x, sh, tm);
    for (uint32_t v = 0; v < 2; ++v)
      for (uint32_t r = 0; r < m / 2; ++r)
        for (uint32_t j = 0; j < n; ++j) {
          double want = 0;
          for (uint32_t kk = 0; kk < k; ++kk) want += a[(v * m / 2 + r) * k + kk] * b[j * k + kk];
          // Layout A (M = 256): row r in lane r. Layout B (M = 128, CuTe's 2x2
          // (64,(N/2,2)):(1,(128,64))): the second half of N in lanes 64 + r.
          const bool upper = m == 128 && j >= n / 2;
          const uint32_t lane = r + (upper ? 64 : 0), col = 128 + (upper ? j - n / 2 : j);
          INFO("CTA " << v << " row " << r << " column " << j);
          REQUIRE(as_f32(cta[v]->t.read(lane, col)) == float(want));
        }
  }
}

namespace {
/// Writes scale factor byte `byte` of row / column `i` into column `col` + i / 32 of lane i % 32 in
/// every lane quarter (the ISA: duplicated to all 32-lane partitions).
void put_scale(TensorMemory& t, uint32_t col, uint32_t i, uint32_t byte, uint8_t code) {
  for (uint32_t q = 0; q < 4; ++q) {
    const uint32_t lane = i % 32 + 32 * q, c = col + i / 32;
    const uint32_t old = t.is_initialised(lane, c) ? t.read(lane, c) : 0u;
    t.write(lane, c, (old & ~(0xFFu << (8 * byte))) | uint32_t(code) << (8 * byte));
  }
}
double ue8m0(uint8_t code) { return std::ldexp(1.0, int(code) - 127); }
}  // namespace

TEST_CASE("block scaling: mxf8f6f4 (1X), mxf4 (2X), mxf4nvf4 (4X, UE4M3)", "[emulator][tcgen05][mma]") {
  const uint32_t m = 128, n = 64;
  struct Case {
    const char* opcode;
    uint32_t k, vec, sfa_id, sfb_id, scale_type;
  };
  const Case cases[] = {{"tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32", 32, 1, 2, 3, 1},
                        {"tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X", 64, 2, 2, 0, 1},
                        {"tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16", 64, 4, 0, 0, 0}};
  for (const Case& cs : cases) {
    INFO(cs.opcode);
    Cta c;
    const uint32_t k = cs.k, sbo = 128, lbo = 2048, b0 = 16384, sfa = 400, sfb = 420;
    const bool fp4 = cs.k == 64;
    std::vector<double> a(m * k), b(n * k), sa(m * cs.vec), sb(n * cs.vec);
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t kk = 0; kk < k; ++kk) {
        a[i * k + kk] = fp4 ? fp4_value(i * k + kk) : quarter(i * k + kk);
        if (fp4) c.s.set_bits((i % 8) * 16 + (i / 8) * sbo + (kk / 32) * lbo, (kk % 32) * 4, 4, encode(a[i * k + kk], e2m1));  // packed pairs
        else c.s.bytes[(i % 8) * 16 + (i / 8) * sbo + (kk / 16) * lbo + kk % 16] = uint8_t(encode(a[i * k + kk], e4m3));
      }
    for (uint32_t j = 0; j < n; ++j)
      for (uint32_t kk = 0; kk < k; ++kk) {
        b[j * k + kk] = fp4 ? fp4_value(j * k + kk + 555) : quarter(j * k + kk + 555);
        if (fp4) c.s.set_bits(b0 + (j % 8) * 16 + (j / 8) * sbo + (kk / 32) * lbo, (kk % 32) * 4, 4, encode(b[j * k + kk], e2m1));
        else c.s.bytes[b0 + (j % 8) * 16 + (j / 8) * sbo + (kk / 16) * lbo + kk % 16] = uint8_t(encode(b[j * k + kk], e5m2));
      }
    // UE8M0: 2^(code - 127); UE4M3 codes 0x30, 0x38, 0x3C, 0x40 are 0.5, 1, 1.5, 2.
    static const uint8_t ue4m3_codes[] = {0x30, 0x38, 0x3C, 0x40};
    static const double ue4m3_values[] = {0.5, 1, 1.5, 2};
    auto pick = [&](uint32_t seed, double& value) {
      const uint32_t s = seed * 2654435761u >> 13;
      if (cs.scale_type == 0) return value = ue4m3_values[s % 4], ue4m3_codes[s % 4];
      const uint8_t code = uint8_t(125 + s % 5);
      value = ue8m0(code);
      return code;
    };
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t j = 0; j < cs.vec; ++j) put_scale(c.t, sfa, i, cs.sfa_id + j, pick(i * 4 + j, sa[i * cs.vec + j]));
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t j = 0; j < cs.vec; ++j) put_scale(c.t, sfb, i, cs.sfb_id + j, pick(i * 4 + j + 1000, sb[i * cs.vec + j]));
    MmaOperands x;
    x.a = smem_desc(0, lbo, sbo, 0);
    x.b_desc = smem_desc(b0, lbo, sbo, 0);
    x.idesc = fp4 ? idesc_scaled(1, 1, n, cs.scale_type, cs.sfa_id, cs.sfb_id) : idesc_scaled(0, 1, n, 1, cs.sfa_id, cs.sfb_id);
    x.scale_a_tmem = sfa;
    x.scale_b_tmem = sfb;
    run(cs.opcode, x, c);
    const uint32_t block = k / cs.vec;
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t j = 0; j < n; ++j) {
        double want = 0;
        for (uint32_t kk = 0; kk < k; ++kk) want += a[i * k + kk] * sa[i * cs.vec + kk / block] * b[j * k + kk] * sb[j * cs.vec + kk / block];
        INFO("D(" << i << ", " << j << ")");
        REQUIRE(as_f32(c.t.read(i, j)) == float(want));
      }
    // A copy of a scale factor that differs between lane quarters is refused.
    c.t.write(64 + 5, sfa, c.t.read(5, sfa) ^ (0x01u << (8 * cs.sfa_id)));
    CHECK_THROWS_WITH(run(cs.opcode, x, c), Catch::Contains("duplicated"));
  }
}

TEST_CASE("tcgen05.mma refuses what the ISA forbids or the emulator does not model", "[emulator][tcgen05][mma]") {
  Cta c;
  const Place p{true, Sw::none, 0, 2048, 128};
  MmaOperands x;
  x.a = desc_of(p);
  x.b_desc = desc_of(p);
  x.idesc = idesc(1, 0, 0, false, false, 64, 128);
  x.enable_input_d = true;
  CHECK_THROWS_WITH(run("tcgen05.mma.cta_group::1.kind::f16", x, c), Catch::Contains("read of uninitialised TMEM"));
  x.enable_input_d = false;
  CHECK_NOTHROW(run("tcgen05.mma.cta_group::1.kind::f16", x, c));
  x.idesc = idesc(1, 0, 0, false, false, 0, 128);  // N = 0
  CHECK_THROWS_AS(run("tcgen05.mma.cta_group::1.kind::f16", x, c), Fault);
  x.idesc = idesc(1, 0, 0, false, false, 264, 128);  // N past 256
  CHECK_THROWS_AS(run("tcgen05.mma.cta_group::1.kind::f16", x, c), Fault);
  x.idesc = idesc(1, 0, 0, false, false, 64, 256);  // M = 256 needs a CTA pair
  CHECK_THROWS_AS(run("tcgen05.mma.cta_group::1.kind::f16", x, c), Fault);
  x.idesc = idesc(1, 0, 1, false, false, 64, 128);  // F16 x BF16
  CHECK_THROWS_AS(run("tcgen05.mma.cta_group::1.kind::f16", x, c), Fault);
  x.idesc = idesc(1, 0, 0, false, false, 64, 128);
  x.d_tmem = 16u << 16;  // lane 16 is for M = 64 only
  CHECK_THROWS_AS(run("tcgen05.mma.cta_group::1.kind::f16", x, c), Fault);
  x.d_tmem = 0;
  x.a = smem_desc(0, 2048, 128, 1);  // K-major in 32-byte-atom swizzle
  CHECK_THROWS_AS(run("tcgen05.mma.cta_group::1.kind::f16", x, c), Fault);
  x.a = desc_of(p) | 1ull << 49;  // base offset
  CHECK_THROWS_WITH(run("tcgen05.mma.cta_group::1.kind::f16", x, c), Catch::Contains("not modelled"));
  x.a = desc_of(p);
  x.idesc = idesc(1, 0, 0, false, false, 64, 128) | 1u << 2;
  CHECK_THROWS_WITH(run("tcgen05.mma.cta_group::1.kind::f16", x, c), Catch::Contains("sparse"));
  x.idesc = idesc(2, 0, 0, false, true, 24, 128);  // i8, MN-major B: N a multiple of 16
  CHECK_THROWS_AS(run("tcgen05.mma.cta_group::1.kind::i8", x, c), Fault);

  // disable-output-lane: lane 70 keeps its old D.
  x.idesc = idesc(1, 0, 0, false, false, 64, 128);
  c.t.write(70, 3, 0x12345678u);
  const uint32_t mask[4] = {0, 0, 1u << 6, 0};
  x.disable_output_lane = mask;
  run("tcgen05.mma.cta_group::1.kind::f16", x, c);
  CHECK(c.t.read(70, 3) == 0x12345678u);
  CHECK(c.t.read(71, 3) == 0u);  // zero operands: D = 0

  CHECK_THROWS_AS(parse_tcgen05_mma("tcgen05.mma.sp.cta_group::1.kind::f16"), Fault);
  CHECK_THROWS_AS(parse_tcgen05_mma("tcgen05.mma.ws.cta_group::1.kind::f16"), Fault);
  CHECK_THROWS_AS(parse_tcgen05_mma("tcgen05.mma.cta_group::1.kind::f16.ashift"), Fault);
  CHECK_THROWS_AS(parse_tcgen05_mma("tcgen05.mma.cta_group::1.kind::f16.block_scale"), Fault);
  CHECK_THROWS_AS(parse_tcgen05_mma("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale"), Fault);  // needs a size
  CHECK_THROWS_AS(parse_tcgen05_mma("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block16"), Fault);
  CHECK_THROWS_AS(parse_tcgen05_mma("tcgen05.mma.cta_group::1.kind::f32"), Fault);
  CHECK(parse_tcgen05_mma("tcgen05.mma.cta_group::1.kind::mxf4.block_scale").scale_vec == 2);
  CHECK(parse_tcgen05_mma("tcgen05.mma.cta_group::2.kind::i8.collector::a::fill").cta_group == 2);
}
