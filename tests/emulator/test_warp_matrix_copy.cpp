// ldmatrix / stmatrix against independent derivations. Row addresses follow the ISA's table (the
// eight addresses of matrix m from threads 8m .. 8m+7; sixteen for m16n16); the other lanes get
// misaligned addresses, which must not be read. The register contents are derived as the ISA's
// figures are drawn (read through CuTe's Copy_Traits where the figure is only a picture): the
// matrix as a row-major bit string, lane t's register holding its 32 bits at 32 t, the
// transposing forms doing the same to the transposed matrix. The packed 4/6-bit rows are packed
// here, element e at bit 4e / 6e of a little-endian bit string, with random padding after them.
#include <catch2/catch.hpp>

#include "shared_bytes.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "emulator/warp_matrix_copy.hpp"

using namespace cutejit::emulator;

namespace {

using test::SharedBytes;

std::mt19937 rng(777);
uint32_t random_u32() { return uint32_t(rng()); }

/// Row addresses: `rows` rows at distinct, shuffled 16-byte slots of a 4 KiB window; lanes past
/// them get an odd address.
std::vector<uint64_t> row_addresses(int rows) {
  std::vector<uint64_t> slots(256);
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = 16 * i;
  std::shuffle(slots.begin(), slots.end(), rng);
  std::vector<uint64_t> a(32);
  for (int l = 0; l < 32; ++l) a[size_t(l)] = l < rows ? slots[size_t(l)] : 4096 + 2 * uint64_t(l) + 1;
  return a;
}

SharedBytes random_shared() {
  SharedBytes s(4096);
  for (uint8_t& b : s.bytes) b = uint8_t(rng());
  return s;
}

/// The 32-bit word at bit 32 t of a row-major matrix given as bytes.
uint32_t word(const std::vector<uint8_t>& matrix, int t) {
  uint32_t w;
  std::memcpy(&w, matrix.data() + 4 * t, 4);
  return w;
}

/// The 8 x 8 matrix of 16-bit elements whose row r is at `address[r]`, row-major, as bytes;
/// transposed when `trans`.
std::vector<uint8_t> matrix16(const SharedBytes& s, const uint64_t* address, bool trans) {
  std::vector<uint8_t> m(128);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c)
      for (int b = 0; b < 2; ++b) m[size_t(16 * (trans ? c : r) + 2 * (trans ? r : c) + b)] = s.bytes[size_t(address[r] + 2 * c + b)];
  return m;
}

MatrixCopy parsed(std::optional<MatrixCopy> (*parse)(std::string_view), const char* opcode) {
  INFO(opcode);
  const std::optional<MatrixCopy> op = parse(opcode);
  REQUIRE(op);
  return *op;
}

}  // namespace

TEST_CASE("ldmatrix m8n8 .b16, plain and .trans", "[warp_matrix_copy]") {
  for (const char* opcode : {"ldmatrix.sync.aligned.m8n8.x1.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.shared::cta.b16",
                             "ldmatrix.sync.aligned.m8n8.x4.b16", "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
                             "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16"}) {
    INFO(opcode);
    const MatrixCopy op = parsed(parse_ldmatrix, opcode);
    SharedBytes s = random_shared();
    const std::vector<uint64_t> address = row_addresses(8 * op.matrices);
    std::vector<uint32_t> out(size_t(32 * op.registers));
    ldmatrix(op, address, s, out);
    for (int m = 0; m < op.matrices; ++m) {
      const std::vector<uint8_t> matrix = matrix16(s, address.data() + 8 * m, op.transpose);
      for (int t = 0; t < 32; ++t) REQUIRE(out[size_t(t * op.registers + m)] == word(matrix, t));
    }
  }
}

TEST_CASE("ldmatrix m8n16 and m16n16 unpack 4- and 6-bit rows", "[warp_matrix_copy]") {
  struct Form {
    const char* opcode;
    int bits;  // 4, 6, or 8 (no unpacking)
  };
  for (const Form& f : {Form{"ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b4x16_p64", 4},
                        Form{"ldmatrix.sync.aligned.m8n16.x2.shared.b8x16.b6x16_p32", 6},
                        Form{"ldmatrix.sync.aligned.m8n16.x4.shared::cta.b8x16.b4x16_p64", 4},
                        Form{"ldmatrix.sync.aligned.m8n16.x4.b8x16.b6x16_p32", 6}, Form{"ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8", 8},
                        Form{"ldmatrix.sync.aligned.m16n16.x2.trans.shared::cta.b8", 8},
                        Form{"ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8x16.b6x16_p32", 6},
                        Form{"ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8x16.b4x16_p64", 4}}) {
    INFO(f.opcode);
    const MatrixCopy op = parsed(parse_ldmatrix, f.opcode);
    const bool m16 = op.shape == MatrixCopyShape::m16n16;
    const int rows = m16 ? 16 : 8;
    SharedBytes s = random_shared();  // random padding included
    const std::vector<uint64_t> address = row_addresses(rows * op.matrices);
    // element[row][e]: the row's 16 values, packed into its 16 bytes as a little-endian bit string.
    std::vector<std::vector<uint8_t>> element(size_t(rows * op.matrices), std::vector<uint8_t>(16));
    for (size_t r = 0; r < element.size(); ++r)
      for (int e = 0; e < 16; ++e) {
        const uint8_t v = uint8_t(rng() & ((1u << f.bits) - 1));
        element[r][size_t(e)] = v;
        for (int b = 0; b < f.bits; ++b) {
          uint8_t& byte = s.bytes[size_t(address[r] + uint64_t((f.bits * e + b) / 8))];
          const int at = (f.bits * e + b) % 8;
          byte = uint8_t((byte & ~(1 << at)) | ((v >> b) & 1) << at);
        }
      }
    std::vector<uint32_t> out(size_t(32 * op.registers), 0xdeadbeef);
    ldmatrix(op, address, s, out);
    for (int m = 0; m < op.matrices; ++m) {
      if (!m16) {  // Figure 106: the 8 x 16 matrix of bytes, lane t holding the word at bit 32 t
        std::vector<uint8_t> matrix;
        for (int r = 0; r < 8; ++r) matrix.insert(matrix.end(), element[size_t(8 * m + r)].begin(), element[size_t(8 * m + r)].end());
        for (int t = 0; t < 32; ++t) REQUIRE(out[size_t(t * op.registers + m)] == word(matrix, t));
        continue;
      }
      // Figure 105 (as CuTe's SM100_U8x8_LDSM_T has it): of the transposed 16 x 16 matrix T, lane
      // 4 g + q loads columns 4q .. 4q+3 of rows g (first register) and g + 8 (second).
      for (int t = 0; t < 32; ++t)
        for (int h = 0; h < 2; ++h) {
          const int row_of_t = t / 4 + 8 * h;
          uint32_t expect = 0;
          for (int j = 0; j < 4; ++j) expect |= uint32_t(element[size_t(16 * m + 4 * (t % 4) + j)][size_t(row_of_t)]) << (8 * j);
          REQUIRE(out[size_t(t * op.registers + 2 * m + h)] == expect);
        }
    }
  }
}

TEST_CASE("stmatrix m8n8 .b16 and m16n8 .trans .b8", "[warp_matrix_copy]") {
  for (const char* opcode : {"stmatrix.sync.aligned.m8n8.x1.shared.b16", "stmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16",
                             "stmatrix.sync.aligned.m8n8.x4.b16", "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
                             "stmatrix.sync.aligned.m16n8.x1.trans.shared.b8", "stmatrix.sync.aligned.m16n8.x2.trans.shared::cta.b8",
                             "stmatrix.sync.aligned.m16n8.x4.trans.shared.b8"}) {
    INFO(opcode);
    const MatrixCopy op = parsed(parse_stmatrix, opcode);
    SharedBytes s = random_shared();
    const SharedBytes before = s;
    const std::vector<uint64_t> address = row_addresses(8 * op.matrices);
    std::vector<uint32_t> in(size_t(32 * op.registers));
    for (uint32_t& r : in) r = random_u32();
    stmatrix(op, address, in, s);
    for (int m = 0; m < op.matrices; ++m) {
      // R: the registers' matrix. m8n8: 8 x 8 16-bit, lane t's register at bit 32 t. m16n8
      // (Figure 108, as CuTe's SM100_U8x4_STSM_T has it): 16 x 8 bytes, lane 4 g + q holding
      // e0..e3 = R[g][2q], R[g][2q+1], R[g+8][2q], R[g+8][2q+1], the mma C fragment's places.
      uint8_t R[16][16] = {};
      for (int t = 0; t < 32; ++t) {
        const uint32_t v = in[size_t(t * op.registers + m)];
        for (int e = 0; e < 4; ++e) {
          const uint8_t byte = uint8_t(v >> (8 * e));
          if (op.shape == MatrixCopyShape::m16n8) R[t / 4 + (e >= 2 ? 8 : 0)][2 * (t % 4) + e % 2] = byte;
          else R[t / 4][4 * (t % 4) + e] = byte;  // row-major bytes of the 8 x 8 matrix
        }
      }
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 16; ++c) {
          uint8_t expect;
          if (op.shape == MatrixCopyShape::m16n8) expect = R[c][r];  // memory row r is column r of R
          else if (op.transpose) expect = R[c / 2][2 * r + c % 2];   // element (r, c/2) of the transpose
          else expect = R[r][c];
          REQUIRE(s.bytes[size_t(address[size_t(8 * m + r)] + uint64_t(c))] == expect);
        }
    }
    // Nothing else was written.
    size_t changed_outside = 0;
    for (size_t a = 0; a < s.bytes.size(); ++a) {
      bool in_row = false;
      for (int l = 0; l < 8 * op.matrices; ++l) in_row |= a >= address[size_t(l)] && a < address[size_t(l)] + 16;
      changed_outside += !in_row && s.bytes[a] != before.bytes[a];
    }
    CHECK(changed_outside == 0);
  }
}

TEST_CASE("ldmatrix / stmatrix fault on a misaligned row address", "[warp_matrix_copy]") {
  SharedBytes s = random_shared();
  const SharedBytes before = s;
  std::vector<uint64_t> address = row_addresses(32);
  address[13] += 8;  // 8-byte aligned only: row 5 of matrix 1
  std::vector<uint32_t> regs(32 * 4);
  CHECK_THROWS_AS(ldmatrix(parsed(parse_ldmatrix, "ldmatrix.sync.aligned.m8n8.x4.b16"), address, s, regs), Fault);
  CHECK_NOTHROW(ldmatrix(parsed(parse_ldmatrix, "ldmatrix.sync.aligned.m8n8.x1.b16"), address, s, std::span(regs).first(32)));
  CHECK_THROWS_AS(stmatrix(parsed(parse_stmatrix, "stmatrix.sync.aligned.m8n8.x2.b16"), address, std::span(regs).first(64), s), Fault);
  CHECK(s.bytes == before.bytes);  // checked before anything is written
  address[13] -= 8;
  address[3] = 8192;  // aligned, outside shared memory: the memory's Fault
  CHECK_THROWS_AS(ldmatrix(parsed(parse_ldmatrix, "ldmatrix.sync.aligned.m16n16.x1.trans.b8"), address, s, std::span(regs).first(64)), Fault);
  CHECK_THROWS_AS(ldmatrix(parsed(parse_ldmatrix, "ldmatrix.sync.aligned.m8n8.x4.b16"), address, s, std::span(regs).first(32)), Fault);
}

TEST_CASE("parse_ldmatrix / parse_stmatrix: the ISA's forms", "[warp_matrix_copy]") {
  struct Form {
    const char* opcode;
    bool load;
    int registers, sm;
    bool family;
  };
  for (const Form& f : {Form{"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", true, 4, 75, false},
                        Form{"ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8", true, 4, 100, true},
                        Form{"ldmatrix.sync.aligned.m16n16.x1.trans.b8x16.b4x16_p64", true, 2, 100, true},
                        Form{"ldmatrix.sync.aligned.m8n16.x2.shared.b8x16.b6x16_p32", true, 2, 100, true},
                        Form{"stmatrix.sync.aligned.m8n8.x2.shared.b16", false, 2, 90, false},
                        Form{"stmatrix.sync.aligned.m16n8.x4.trans.shared::cta.b8", false, 4, 100, true}}) {
    INFO(f.opcode);
    const std::optional<MatrixCopy> op = f.load ? parse_ldmatrix(f.opcode) : parse_stmatrix(f.opcode);
    REQUIRE(op);
    CHECK(op->registers == f.registers);
    CHECK(op->minimum_sm == f.sm);
    CHECK(op->family_specific == f.family);
  }
  for (const char* bad : {"ldmatrix.sync.aligned.m16n16.x1.shared.b8",          // .trans is mandatory for m16n16
                          "ldmatrix.sync.aligned.m16n16.x4.trans.shared.b8",    // m16n16 takes .x1/.x2
                          "ldmatrix.sync.aligned.m8n8.x1.shared.b8",            // m8n8 is 16-bit
                          "ldmatrix.sync.aligned.m8n16.x1.trans.b8x16.b4x16_p64",
                          "ldmatrix.sync.aligned.m8n16.x1.shared.b8",           // m8n16 only unpacks
                          "ldmatrix.sync.aligned.m8n16.x1.shared.b8x16",        // no source format
                          "ldmatrix.sync.aligned.m8n8.x3.shared.b16", "ldmatrix.sync.aligned.m16n8.x1.trans.b8",
                          "ldmatrix.aligned.m8n8.x1.b16"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_ldmatrix(bad), Fault);
  }
  for (const char* bad : {"stmatrix.sync.aligned.m16n8.x1.shared.b8",  // .trans is mandatory for m16n8
                          "stmatrix.sync.aligned.m16n8.x1.trans.b16", "stmatrix.sync.aligned.m8n16.x1.b8x16.b4x16_p64",
                          "stmatrix.sync.aligned.m16n16.x1.trans.b8"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_stmatrix(bad), Fault);
  }
  CHECK_FALSE(parse_ldmatrix("ld.shared.b32"));
  CHECK_FALSE(parse_stmatrix("ldmatrix.sync.aligned.m8n8.x1.b16"));
}
