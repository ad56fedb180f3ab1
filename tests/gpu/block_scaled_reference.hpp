// The block-scaled formats decoded on the host from their definitions (OCP MX v1.0 and the PTX
// ISA), independently of cutejit's own conversions, for the GPU tests' float64 references; and
// random operands in them.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace test::block_scaled {

/// E2M1: sign, 2 exponent bits (bias 1), 1 mantissa bit; exponent 0 is subnormal (0 or 0.5).
inline double e2m1(uint8_t nibble) {
  const int s = (nibble >> 3) & 1, e = (nibble >> 1) & 3, m = nibble & 1;
  const double v = e == 0 ? 0.5 * m : std::ldexp(1.0 + 0.5 * m, e - 1);
  return s ? -v : v;
}
/// E4M3 (E4M3FN): sign, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0 is subnormal.
/// The NaN patterns (S.1111.111) are never generated.
inline double e4m3(uint8_t bits) {
  const int s = bits >> 7, e = (bits >> 3) & 15, m = bits & 7;
  const double v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return s ? -v : v;
}
/// E5M2: sign, 5 exponent bits (bias 15), 2 mantissa bits; exponent 0 is subnormal. Infinities
/// and NaNs (exponent 31) are never generated.
inline double e5m2(uint8_t bits) {
  const int s = bits >> 7, e = (bits >> 2) & 31, m = bits & 3;
  const double v = e == 0 ? std::ldexp(m / 4.0, -14) : std::ldexp(1.0 + m / 4.0, e - 15);
  return s ? -v : v;
}
/// E3M2 (FP6): sign, 3 exponent bits (bias 3), 2 mantissa bits, in the low 6 bits; no
/// infinities or NaNs.
inline double e3m2(uint8_t bits) {
  const int s = (bits >> 5) & 1, e = (bits >> 2) & 7, m = bits & 3;
  const double v = e == 0 ? std::ldexp(m / 4.0, -2) : std::ldexp(1.0 + m / 4.0, e - 3);
  return s ? -v : v;
}
/// E2M3 (FP6): sign, 2 exponent bits (bias 1), 3 mantissa bits, in the low 6 bits.
inline double e2m3(uint8_t bits) {
  const int s = (bits >> 5) & 1, e = (bits >> 3) & 3, m = bits & 7;
  const double v = e == 0 ? m / 8.0 : std::ldexp(1.0 + m / 8.0, e - 1);
  return s ? -v : v;
}
/// UE8M0: 2^(bits - 127) (0xFF, NaN, never generated).
inline double ue8m0(uint8_t bits) { return std::ldexp(1.0, int(bits) - 127); }
/// UE4M3: E4M3 without its sign bit (which is generated 0).
inline double ue4m3(uint8_t bits) { return e4m3(bits & 0x7F); }

/// `n` random bytes, each two E2M1 values (low nibble the first along K), all 16 codes.
inline std::vector<uint8_t> random_e2m1_pairs(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& x : v) x = uint8_t(rng());
  return v;
}
/// `n` random E4M3 codes, every finite one possible.
inline std::vector<uint8_t> random_e4m3(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& x : v) {
    do x = uint8_t(rng());
    while ((x & 0x7F) == 0x7F);
  }
  return v;
}
/// `n` random UE8M0 scales in 2^-6 .. 2^6.
inline std::vector<uint8_t> random_ue8m0(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& x : v) x = uint8_t(121 + rng() % 13);
  return v;
}
/// `n` random UE4M3 scales, sign bit clear, exponent field 3 .. 11 (2^-4 .. 2^4), any mantissa.
inline std::vector<uint8_t> random_ue4m3(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& x : v) x = uint8_t(((3 + rng() % 9) << 3) | (rng() & 7));
  return v;
}

/// 16 codes of `bits` (4 or 6) bits packed low to high into the first 8 or 12 of 16 bytes, the
/// rest padding (0xFF, which no reader may take for a value): the PTX ISA's .b4x16_p64 and
/// .b6x16_p32 rows, the unpacked FP4 and FP6 forms kind::f8f6f4 reads from shared memory.
inline void pack_padded_row(const uint8_t* codes, int bits, uint8_t* row) {
  for (int i = 0; i < 16; ++i) row[i] = 0;
  for (int x = 0; x < 16; ++x)
    for (int b = 0; b < bits; ++b)
      if ((codes[x] >> b) & 1) row[(bits * x + b) / 8] |= uint8_t(1u << ((bits * x + b) % 8));
  for (int i = 2 * bits; i < 16; ++i) row[i] = 0xFF;
}

/// A narrow float format of kind::f8f6f4: its width in bits, its decoder, and the codes that are
/// no finite value (none for FP4 and FP6), which random operands leave out.
struct Format {
  int bits;
  double (*decode)(uint8_t);
  bool (*not_finite)(uint8_t) = nullptr;
};
inline const Format e2m1_format{4, e2m1}, e3m2_format{6, e3m2}, e2m3_format{6, e2m3},
    e4m3_format{8, e4m3, [](uint8_t c) { return (c & 0x7F) == 0x7F; }},
    e5m2_format{8, e5m2, [](uint8_t c) { return (c & 0x7C) == 0x7C; }};

/// `n` random finite codes of `f`.
inline std::vector<uint8_t> random_codes(const Format& f, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> codes(n);
  for (uint8_t& c : codes) {
    do c = uint8_t(rng() & ((1u << f.bits) - 1));
    while (f.not_finite && f.not_finite(c));
  }
  return codes;
}

/// The bytes shared memory holds for `codes` (a multiple of 16, in order along K): 16 values a
/// 16-byte row, packed and padded (pack_padded_row) for FP4 and FP6, a byte each for FP8.
inline std::vector<uint8_t> padded_rows(const Format& f, const std::vector<uint8_t>& codes) {
  std::vector<uint8_t> bytes(codes);
  if (f.bits < 8)
    for (size_t r = 0; r < codes.size() / 16; ++r) pack_padded_row(&codes[16 * r], f.bits, &bytes[16 * r]);
  return bytes;
}

/// Element q of row r of an operand of `k` elements a row: FP4 pairs (k / 2 bytes a row) or E4M3.
inline double element(const std::vector<uint8_t>& x, bool fp4, int64_t k, int64_t r, int64_t q) {
  if (!fp4) return e4m3(x[size_t(r * k + q)]);
  const uint8_t byte = x[size_t(r * (k / 2) + q / 2)];
  return e2m1(q % 2 ? uint8_t(byte >> 4) : uint8_t(byte & 15));
}

/// The float64 product D (rows x cols) = (A SFA)(B SFB)^T of A (rows x k) and B (cols x k),
/// scales row-major, one per `block` elements of K, decoded by `scale`.
template <class Scale>
std::vector<double> reference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const std::vector<uint8_t>& sfa,
                              const std::vector<uint8_t>& sfb, bool fp4, int block, Scale scale, int64_t rows, int64_t cols, int64_t k) {
  const int64_t blocks = k / block;
  std::vector<double> A(size_t(rows * k)), B(size_t(cols * k));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t q = 0; q < k; ++q) A[size_t(r * k + q)] = element(a, fp4, k, r, q) * scale(sfa[size_t(r * blocks + q / block)]);
  for (int64_t r = 0; r < cols; ++r)
    for (int64_t q = 0; q < k; ++q) B[size_t(r * k + q)] = element(b, fp4, k, r, q) * scale(sfb[size_t(r * blocks + q / block)]);
  std::vector<double> d(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) s += A[size_t(i * k + q)] * B[size_t(j * k + q)];
      d[size_t(i * cols + j)] = s;
    }
  return d;
}

}  // namespace test::block_scaled
