// NVFP4 on the host, for the block-scaled examples: random operands and scales, and their values
// decoded from the formats' definitions. An operand row holds E2M1 values (sign, 2 exponent bits
// of bias 1, 1 mantissa bit), two to a byte with the first along K in the low nibble; every 16
// of them along K share a UE4M3 scale (E4M3 without its sign: bias 7, subnormal at exponent 0).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace example::nvfp4 {

inline double e2m1(uint8_t nibble) {
  const int s = nibble >> 3 & 1, e = nibble >> 1 & 3, m = nibble & 1;
  const double v = e == 0 ? 0.5 * m : (1 + 0.5 * m) * std::ldexp(1.0, e - 1);
  return s ? -v : v;
}

inline double ue4m3(uint8_t bits) {
  const int e = bits >> 3 & 15, m = bits & 7;
  return e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1 + m / 8.0, e - 7);
}

/// A rows x k operand: its bytes (k / 2 a row, every E2M1 code) and its row-major scales
/// (k / 16 a row, between 2^-3 and 2^3: exponent fields 4 to 10).
struct Operand {
  int64_t rows, k;
  std::vector<uint8_t> bytes, scales;

  Operand(int64_t rows, int64_t k, unsigned seed) : rows(rows), k(k), bytes(size_t(rows * k / 2)), scales(size_t(rows * k / 16)) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> any(0, 255), scale(4 << 3, (10 << 3) | 7);
    for (uint8_t& b : bytes) b = uint8_t(any(rng));
    for (uint8_t& s : scales) s = uint8_t(scale(rng));
  }

  /// Element p of row r, its scale applied.
  double at(int64_t r, int64_t p) const {
    const uint8_t byte = bytes[size_t(r * k / 2 + p / 2)];
    return e2m1(p % 2 ? byte >> 4 : byte & 15) * ue4m3(scales[size_t(r * k / 16 + p / 16)]);
  }
};

/// A B^T in float64 (m x n, row-major) of two operands of the same k.
inline std::vector<double> product(const Operand& a, const Operand& b) {
  std::vector<double> c(size_t(a.rows * b.rows));
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < b.rows; ++j)
      for (int64_t p = 0; p < a.k; ++p) c[size_t(i * b.rows + j)] += a.at(i, p) * b.at(j, p);
  return c;
}

}  // namespace example::nvfp4
