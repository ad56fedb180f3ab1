// ldmatrix / stmatrix: the opcode's form, the rows the lanes address, and the ISA's fragment
// layouts (see warp_matrix_copy.hpp).
#include "emulator/warp_matrix_copy.hpp"

#include <string>

namespace cutejit::emulator {

namespace {

/// The rows of up to four matrices, 16 bytes each (unpacked for the 4- and 6-bit sources).
struct Rows {
  uint8_t bytes[4][16][16];
};

int rows_per_matrix(const MatrixCopy& op) { return op.shape == MatrixCopyShape::m16n16 ? 16 : 8; }

std::optional<MatrixCopy> parse(std::string_view opcode, std::string_view name, bool load) {
  if (opcode != name && !(opcode.starts_with(name) && opcode[name.size()] == '.')) return std::nullopt;
  const std::string whole(opcode);
  auto refuse = [&](const std::string& why) -> std::optional<MatrixCopy> { throw Fault(whole + ": " + why); };
  const std::string prefix = std::string(name) + ".sync.aligned.";
  if (!opcode.starts_with(prefix)) return refuse(std::string(name) + " takes the mandatory .sync.aligned qualifiers");
  MatrixCopy op;
  bool shape = false, num = false, type = false, unpacked = false;
  std::string_view rest = opcode.substr(prefix.size());
  while (!rest.empty()) {
    const size_t dot = rest.find('.');
    const std::string_view t = rest.substr(0, dot);
    rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
    if (!shape && (t == "m8n8" || t == "m8n16" || t == "m16n16" || t == "m16n8")) {
      shape = true;
      op.shape = t == "m8n8"     ? MatrixCopyShape::m8n8
                 : t == "m8n16"  ? MatrixCopyShape::m8n16
                 : t == "m16n16" ? MatrixCopyShape::m16n16
                                 : MatrixCopyShape::m16n8;
    } else if (!num && (t == "x1" || t == "x2" || t == "x4")) {
      num = true;
      op.matrices = uint8_t(t[1] - '0');
    } else if (t == "trans" && !op.transpose) {
      op.transpose = true;
    } else if (t == "shared" || t == "shared::cta") {
      continue;
    } else if (!type && (t == "b16" || t == "b8")) {
      type = true;
      op.element = t == "b16" ? MatrixCopyElement::b16 : MatrixCopyElement::b8;
    } else if (load && !type && t == "b8x16") {
      type = unpacked = true;
    } else if (unpacked && op.element == MatrixCopyElement::b16 && (t == "b6x16_p32" || t == "b4x16_p64")) {
      op.element = t == "b6x16_p32" ? MatrixCopyElement::b6x16_p32 : MatrixCopyElement::b4x16_p64;
    } else {
      return refuse("unknown or repeated qualifier ." + std::string(t));
    }
  }
  if (!shape || !num || !type) return refuse("needs .shape, .num and .type");
  if (unpacked && op.element == MatrixCopyElement::b16) return refuse(".b8x16 needs a source format (.b6x16_p32 or .b4x16_p64)");
  const bool packed = op.element == MatrixCopyElement::b6x16_p32 || op.element == MatrixCopyElement::b4x16_p64;
  op.registers = op.matrices;
  op.minimum_sm = 100, op.family_specific = true;
  switch (op.shape) {
    case MatrixCopyShape::m8n8:
      if (op.element != MatrixCopyElement::b16) return refuse(".m8n8 moves 16-bit elements (.b16)");
      op.minimum_sm = load ? 75 : 90, op.family_specific = false;
      break;
    case MatrixCopyShape::m8n16:
      if (!load || !packed || op.transpose)
        return refuse(".m8n16 is ldmatrix's unpacking load (.b8x16.b6x16_p32 or .b8x16.b4x16_p64), without .trans");
      break;
    case MatrixCopyShape::m16n16:
      if (!load || !op.transpose || op.matrices == 4 || op.element == MatrixCopyElement::b16)
        return refuse(".m16n16 is ldmatrix .x1 or .x2, .trans, of .b8 or an unpacking source");
      op.registers = uint8_t(2 * op.matrices);
      break;
    case MatrixCopyShape::m16n8:
      if (load || !op.transpose || op.element != MatrixCopyElement::b8) return refuse(".m16n8 is stmatrix .trans .b8");
      break;
  }
  return op;
}

void check_spans(const MatrixCopy& op, const char* name, std::span<const uint64_t> addresses, size_t registers) {
  if (addresses.size() != 32 || registers != size_t(32 * op.registers))
    throw Fault(std::string(name) + " takes 32 lane addresses and 32 x " + std::to_string(op.registers) + " registers, got " +
                std::to_string(addresses.size()) + " and " + std::to_string(registers));
}

/// The address of row `i` of matrix `m`, checked for the ISA's 16-byte alignment.
uint64_t row_address(const MatrixCopy& op, const char* name, std::span<const uint64_t> addresses, int m, int i) {
  const int lane = rows_per_matrix(op) * m + i;
  const uint64_t a = addresses[size_t(lane)];
  if (a % 16 != 0)
    throw Fault(std::string(name) + ": lane " + std::to_string(lane) + "'s row address " + std::to_string(a) +
                " is not 16-byte aligned (every row is 16 bytes)");
  return a;
}

/// The 16 bytes of a row as shared memory holds it, unpacked to one element per byte.
void unpack(MatrixCopyElement e, const uint8_t (&raw)[16], uint8_t (&row)[16]) {
  for (int x = 0; x < 16; ++x) {
    if (e == MatrixCopyElement::b4x16_p64) {
      row[x] = uint8_t((raw[x / 2] >> (4 * (x % 2))) & 0xf);
    } else if (e == MatrixCopyElement::b6x16_p32) {
      const int bit = 6 * x;
      row[x] = uint8_t(((raw[bit / 8] | raw[bit / 8 + 1] << 8) >> (bit % 8)) & 0x3f);
    } else {
      row[x] = raw[x];
    }
  }
}

uint32_t bytes_le(uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3) {
  return uint32_t(b0) | uint32_t(b1) << 8 | uint32_t(b2) << 16 | uint32_t(b3) << 24;
}

}  // namespace

std::optional<MatrixCopy> parse_ldmatrix(std::string_view opcode) { return parse(opcode, "ldmatrix", true); }
std::optional<MatrixCopy> parse_stmatrix(std::string_view opcode) { return parse(opcode, "stmatrix", false); }

void ldmatrix(const MatrixCopy& op, std::span<const uint64_t> lane_addresses, Memory& shared, std::span<uint32_t> out) {
  check_spans(op, "ldmatrix", lane_addresses, out.size());
  Rows rows;
  const int per_matrix = rows_per_matrix(op);
  for (int m = 0; m < op.matrices; ++m)
    for (int i = 0; i < per_matrix; ++i) {
      uint8_t raw[16];
      shared.read(row_address(op, "ldmatrix", lane_addresses, m, i), raw, 16);
      unpack(op.element, raw, rows.bytes[m][i]);
    }
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, q = lane % 4;
    uint32_t* r = out.data() + lane * op.registers;
    for (int m = 0; m < op.matrices; ++m) {
      const auto& M = rows.bytes[m];
      if (op.shape == MatrixCopyShape::m16n16) {
        for (int h = 0; h < 2; ++h) {
          const int c = g + 8 * h;
          r[2 * m + h] = bytes_le(M[4 * q][c], M[4 * q + 1][c], M[4 * q + 2][c], M[4 * q + 3][c]);
        }
      } else if (op.transpose) {
        r[m] = bytes_le(M[2 * q][2 * g], M[2 * q][2 * g + 1], M[2 * q + 1][2 * g], M[2 * q + 1][2 * g + 1]);
      } else {
        r[m] = bytes_le(M[g][4 * q], M[g][4 * q + 1], M[g][4 * q + 2], M[g][4 * q + 3]);
      }
    }
  }
}

void stmatrix(const MatrixCopy& op, std::span<const uint64_t> lane_addresses, std::span<const uint32_t> in, Memory& shared) {
  check_spans(op, "stmatrix", lane_addresses, in.size());
  Rows rows;
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, q = lane % 4;
    for (int m = 0; m < op.matrices; ++m) {
      const uint32_t v = in[size_t(lane * op.registers + m)];
      uint8_t b[4];
      for (int j = 0; j < 4; ++j) b[j] = uint8_t(v >> (8 * j));
      auto& M = rows.bytes[m];
      if (op.shape == MatrixCopyShape::m16n8) {
        M[2 * q][g] = b[0], M[2 * q + 1][g] = b[1], M[2 * q][g + 8] = b[2], M[2 * q + 1][g + 8] = b[3];
      } else if (op.transpose) {
        M[2 * q][2 * g] = b[0], M[2 * q][2 * g + 1] = b[1], M[2 * q + 1][2 * g] = b[2], M[2 * q + 1][2 * g + 1] = b[3];
      } else {
        for (int j = 0; j < 4; ++j) M[g][4 * q + j] = b[j];
      }
    }
  }
  uint64_t at[4][8];
  for (int m = 0; m < op.matrices; ++m)
    for (int i = 0; i < 8; ++i) at[m][i] = row_address(op, "stmatrix", lane_addresses, m, i);
  for (int m = 0; m < op.matrices; ++m)
    for (int i = 0; i < 8; ++i) shared.write(at[m][i], rows.bytes[m][i], 16);
}

}  // namespace cutejit::emulator
