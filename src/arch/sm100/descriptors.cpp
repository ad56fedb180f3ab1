#include "cutejit/arch/sm100/descriptors.hpp"

#include <optional>
#include <tuple>

#include "cutejit/core/error.hpp"

namespace cutejit::sm100 {

int swizzle_bytes(SmemSwizzle s) {
  switch (s) {
    case SmemSwizzle::none: return 0;
    case SmemSwizzle::bytes128_atom32:
    case SmemSwizzle::bytes128: return 128;
    case SmemSwizzle::bytes64: return 64;
    case SmemSwizzle::bytes32: return 32;
  }
  return 0;
}

std::string to_string(SmemSwizzle s) {
  switch (s) {
    case SmemSwizzle::none: return "no swizzle";
    case SmemSwizzle::bytes128_atom32: return "128-byte swizzle with 32-byte atoms";
    case SmemSwizzle::bytes128: return "128-byte swizzle";
    case SmemSwizzle::bytes64: return "64-byte swizzle";
    case SmemSwizzle::bytes32: return "32-byte swizzle";
  }
  return "?";
}

namespace {
constexpr uint64_t bit(int b) { return uint64_t(1) << b; }
uint64_t field(uint64_t bits, int lo, int width) { return (bits >> lo) & ((uint64_t(1) << width) - 1); }

/// A byte field of the shared-memory descriptor: 14 bits of (x >> 4).
uint64_t byte_field(uint32_t bytes, const char* name) {
  if (bytes % 16 != 0 || bytes >= (1u << 18))
    throw Error(std::string("a shared-memory descriptor's ") + name + " is a multiple of 16 below 2^18 bytes, not " +
                std::to_string(bytes));
  return bytes >> 4;
}
}  // namespace

uint64_t SmemDescriptor::encode() const {
  if (base_offset < 0 || base_offset > 7)
    throw Error("a shared-memory descriptor's base offset is 0 to 7, not " + std::to_string(base_offset));
  return byte_field(start_address, "start address") | byte_field(leading_byte_offset, "leading byte offset") << 16 |
         byte_field(stride_byte_offset, "stride byte offset") << 32 | bit(46) | uint64_t(base_offset) << 49 |
         uint64_t(leading_absolute) << 52 | uint64_t(swizzle) << 61;
}

SmemDescriptor SmemDescriptor::decode(uint64_t bits) {
  if (field(bits, 46, 3) != 1)
    throw Error("not a tcgen05 shared-memory descriptor: bits 46-48 must be 0b001, not " + std::to_string(field(bits, 46, 3)));
  if (field(bits, 14, 2) || field(bits, 30, 2) || field(bits, 53, 8))
    throw Error("a tcgen05 shared-memory descriptor has reserved bits (14-15, 30-31, 53-60) set");
  const uint64_t mode = field(bits, 61, 3);
  if (mode == 3 || mode == 5 || mode == 7)
    throw Error("a tcgen05 shared-memory descriptor's swizzle mode is 0, 1, 2, 4 or 6, not " + std::to_string(mode));
  SmemDescriptor d;
  d.start_address = uint32_t(field(bits, 0, 14) << 4);
  d.leading_byte_offset = uint32_t(field(bits, 16, 14) << 4);
  d.stride_byte_offset = uint32_t(field(bits, 32, 14) << 4);
  d.base_offset = int(field(bits, 49, 3));
  d.leading_absolute = field(bits, 52, 1) != 0;
  d.swizzle = SmemSwizzle(mode);
  return d;
}

uint32_t operand_address(const SmemDescriptor& d, Major major, int element_bits, int mn, int k) {
  if (d.base_offset != 0 || d.leading_absolute || d.swizzle == SmemSwizzle::bytes128_atom32)
    throw Error("the descriptor model covers base offset 0, relative LBO and the 32/64/128-byte swizzles (or none), not " +
                to_string(d.swizzle) + " with base offset " + std::to_string(d.base_offset) +
                (d.leading_absolute ? " and an absolute LBO" : ""));
  if (element_bits != 4 && element_bits != 6 && element_bits != 8 && element_bits != 16 && element_bits != 32)
    throw Error("operand elements are 4, 6, 8, 16 or 32 bits, not " + std::to_string(element_bits));
  if (mn < 0 || k < 0) throw Error("operand coordinates are not negative");
  // Positions in bits within the contiguous dimension, then bytes: a sub-byte element at an odd
  // position has no address of its own.
  const int64_t contiguous_bits = int64_t(major == Major::k ? k : mn) * element_bits;
  if (contiguous_bits % 8 != 0)
    throw Error("element " + std::to_string(major == Major::k ? k : mn) + " of a " + std::to_string(element_bits) +
                "-bit operand does not start on a byte");
  const int64_t c = contiguous_bits / 8;           // bytes along the contiguous dimension
  const int64_t s = major == Major::k ? mn : k;    // the strided dimension, in rows
  const int64_t lbo = d.leading_byte_offset, sbo = d.stride_byte_offset;
  const int w = swizzle_bytes(d.swizzle);
  int64_t offset = 0;
  if (w == 0) {
    // 8 x 16-byte core matrices: 16 contiguous bytes per row, 8 rows 16 bytes apart.
    if (major == Major::k)
      offset = (s % 8) * 16 + (s / 8) * sbo + (c % 16) + (c / 16) * lbo;
    else
      offset = (c % 16) + (c / 16) * sbo + (s % 8) * 16 + (s / 8) * lbo;
  } else {
    // Rows of W bytes, 8 rows per swizzle pattern. K-major: one row holds the MMA's K (an MMA
    // reads 32 bytes of K), 8-row groups SBO apart. MN-major: W bytes of M/N per row, the next
    // W bytes of M/N LBO away, the next 8 rows of K SBO away.
    if (major == Major::k) {
      if (c >= w)
        throw Error("byte " + std::to_string(c) + " of K is past the " + std::to_string(w) +
                    "-byte swizzled row; one MMA reads 32 bytes of K");
      offset = (s % 8) * w + (s / 8) * sbo + c;
    } else {
      offset = (c % w) + (c / w) * lbo + (s % 8) * w + (s / 8) * sbo;
    }
  }
  int64_t address = int64_t(d.start_address) + offset;
  if (w != 0) {
    const int b = w == 128 ? 3 : w == 64 ? 2 : 1;
    address ^= ((address >> 7) & ((1 << b) - 1)) << 4;
  }
  return uint32_t(address);
}

// ---- the instruction descriptor ----

std::string to_string(MmaKind k) {
  switch (k) {
    case MmaKind::f16: return "kind::f16";
    case MmaKind::tf32: return "kind::tf32";
    case MmaKind::f8f6f4: return "kind::f8f6f4";
    case MmaKind::i8: return "kind::i8";
  }
  return "?";
}

std::string to_string(OperandType t) {
  static const char* names[] = {"f16", "bf16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "u8", "s8"};
  return names[int(t)];
}

MmaKind kind_of(OperandType t) {
  switch (t) {
    case OperandType::f16:
    case OperandType::bf16: return MmaKind::f16;
    case OperandType::tf32: return MmaKind::tf32;
    case OperandType::u8:
    case OperandType::s8: return MmaKind::i8;
    default: return MmaKind::f8f6f4;
  }
}

int bits_of(OperandType t) {
  switch (t) {
    case OperandType::f16:
    case OperandType::bf16: return 16;
    case OperandType::tf32: return 32;
    case OperandType::e2m3:
    case OperandType::e3m2: return 6;
    case OperandType::e2m1: return 4;
    default: return 8;
  }
}

namespace {
/// The 3-bit code of an operand type under its kind (the ISA's table).
uint32_t type_code(OperandType t) {
  switch (t) {
    case OperandType::f16: return 0;
    case OperandType::bf16: return 1;
    case OperandType::tf32: return 2;
    case OperandType::e4m3: return 0;
    case OperandType::e5m2: return 1;
    case OperandType::e2m3: return 3;
    case OperandType::e3m2: return 4;
    case OperandType::e2m1: return 5;
    case OperandType::u8: return 0;
    case OperandType::s8: return 1;
  }
  return 0;
}

OperandType type_of(MmaKind kind, uint32_t code, const char* which) {
  const OperandType f16[] = {OperandType::f16, OperandType::bf16};
  const OperandType fp8[] = {OperandType::e4m3, OperandType::e5m2, OperandType::e2m3, OperandType::e3m2, OperandType::e2m1};
  const OperandType i8[] = {OperandType::u8, OperandType::s8};
  auto find = [&](auto& list) -> std::optional<OperandType> {
    for (OperandType t : list)
      if (type_code(t) == code) return t;
    return std::nullopt;
  };
  std::optional<OperandType> t;
  switch (kind) {
    case MmaKind::f16: t = find(f16); break;
    case MmaKind::tf32: if (code == 2) t = OperandType::tf32; break;
    case MmaKind::f8f6f4: t = find(fp8); break;
    case MmaKind::i8: t = find(i8); break;
  }
  if (!t) throw Error(std::string("type code ") + std::to_string(code) + " of " + which + " is not a " + to_string(kind) + " type");
  return *t;
}

uint32_t accumulator_code(AccumulatorType d) { return d == AccumulatorType::f16 ? 0 : d == AccumulatorType::f32 ? 1 : 2; }
std::string to_string(AccumulatorType d) { return d == AccumulatorType::f16 ? "f16" : d == AccumulatorType::f32 ? "f32" : "s32"; }
}  // namespace

uint32_t InstrDescriptor::encode() const {
  for (OperandType t : {a, b})
    if (kind_of(t) != kind) throw Error("a " + to_string(kind) + " MMA does not take " + to_string(t) + " operands");
  const bool integer = kind == MmaKind::i8;
  const bool d_ok = integer ? d == AccumulatorType::s32
                            : d == AccumulatorType::f32 || (d == AccumulatorType::f16 && kind != MmaKind::tf32);
  if (!d_ok) throw Error("a " + to_string(kind) + " MMA does not accumulate into " + to_string(d));
  if (saturate && !integer) throw Error("saturation is for kind::i8 only");
  if (integer && (negate_a || negate_b)) throw Error("kind::i8 operands cannot be negated");
  for (auto [t, major, name] : {std::tuple{a, a_major, "A"}, std::tuple{b, b_major, "B"}})
    if (major == Major::mn && bits_of(t) < 8)
      throw Error(std::string("a ") + std::to_string(bits_of(t)) + "-bit operand " + name + " is read K-major only");
  if (m < 16 || m % 16 != 0 || m >= 512) throw Error("the descriptor's M is a multiple of 16 below 512, not " + std::to_string(m));
  if (n < 8 || n % 8 != 0 || n >= 512) throw Error("the descriptor's N is a multiple of 8 below 512, not " + std::to_string(n));
  return uint32_t(saturate) << 3 | accumulator_code(d) << 4 | type_code(a) << 7 | type_code(b) << 10 | uint32_t(negate_a) << 13 |
         uint32_t(negate_b) << 14 | uint32_t(a_major == Major::mn) << 15 | uint32_t(b_major == Major::mn) << 16 |
         uint32_t(n >> 3) << 17 | uint32_t(m >> 4) << 24;
}

InstrDescriptor InstrDescriptor::decode(uint32_t bits, MmaKind kind) {
  if (field(bits, 0, 3)) throw Error("the instruction descriptor is for a sparse MMA (bits 0-2), which this decoder does not read");
  if (field(bits, 30, 2)) throw Error("the instruction descriptor has a .ws B-reuse shift (bits 30-31)");
  if (field(bits, 6, 1) || field(bits, 23, 1) || field(bits, 29, 1))
    throw Error("the instruction descriptor has reserved bits (6, 23, 29) set");
  InstrDescriptor x;
  x.kind = kind;
  x.saturate = field(bits, 3, 1);
  const uint32_t d = uint32_t(field(bits, 4, 2));
  if (d == 3) throw Error("the instruction descriptor's D type code is 0 (f16), 1 (f32) or 2 (s32), not 3");
  x.d = AccumulatorType(d);
  x.a = type_of(kind, uint32_t(field(bits, 7, 3)), "A");
  x.b = type_of(kind, uint32_t(field(bits, 10, 3)), "B");
  x.negate_a = field(bits, 13, 1);
  x.negate_b = field(bits, 14, 1);
  x.a_major = field(bits, 15, 1) ? Major::mn : Major::k;
  x.b_major = field(bits, 16, 1) ? Major::mn : Major::k;
  x.n = int(field(bits, 17, 6)) << 3;
  x.m = int(field(bits, 24, 5)) << 4;
  x.encode();  // what the encoder refuses, the decoder refuses too
  return x;
}

// ---- Tensor Memory addresses ----

uint32_t TmemAddress::encode() const {
  if (lane < 0 || lane > 127 || column < 0 || column > 511)
    throw Error("a TMEM address names lane 0-127 and column 0-511, not lane " + std::to_string(lane) + ", column " +
                std::to_string(column));
  return uint32_t(lane) << 16 | uint32_t(column);
}

TmemAddress TmemAddress::decode(uint32_t bits) {
  TmemAddress a{int(bits >> 16), int(bits & 0xffff)};
  a.encode();  // what the encoder refuses, the decoder refuses too
  return a;
}

// ---- the block-scaled instruction descriptor ----

std::string to_string(BlockScaledKind k) {
  switch (k) {
    case BlockScaledKind::mxf8f6f4: return "kind::mxf8f6f4";
    case BlockScaledKind::mxf4: return "kind::mxf4";
    case BlockScaledKind::mxf4nvf4: return "kind::mxf4nvf4";
  }
  return "?";
}

uint32_t BlockScaledInstrDescriptor::encode() const {
  const bool fp4_kind = kind != BlockScaledKind::mxf8f6f4;
  for (OperandType t : {a, b}) {
    const bool ok = fp4_kind ? t == OperandType::e2m1 : kind_of(t) == MmaKind::f8f6f4;
    if (!ok) throw Error("a block-scaled " + to_string(kind) + " MMA does not take " + to_string(t) + " operands");
  }
  if (scale == ScaleType::ue4m3 && kind != BlockScaledKind::mxf4nvf4)
    throw Error("UE4M3 scale factors are for kind::mxf4nvf4 only; " + to_string(kind) + " takes UE8M0");
  for (int id : {scale_a_id, scale_b_id})
    if (id < 0 || id > 3 || (fp4_kind && id % 2 != 0))
      throw Error("a scale-factor id is " + std::string(fp4_kind ? "0 or 2" : "0 to 3") + " for " + to_string(kind) + ", not " +
                  std::to_string(id));
  for (auto [t, major, name] : {std::tuple{a, a_major, "A"}, std::tuple{b, b_major, "B"}})
    if (major == Major::mn && (fp4_kind || bits_of(t) < 8))
      throw Error(std::string("a block-scaled ") + std::to_string(bits_of(t)) + "-bit operand " + name + " of " + to_string(kind) +
                  " is read K-major only");
  if (m != 128 && m != 256) throw Error("a block-scaled MMA's M is 128 or 256, not " + std::to_string(m));
  if (n < 8 || n % 8 != 0 || n > 256) throw Error("a block-scaled MMA's N is a multiple of 8 up to 256, not " + std::to_string(n));
  if (k96 && !fp4_kind) throw Error("K = 96 is for the FP4 kinds only");
  const uint32_t b_code = fp4_kind ? 1 : type_code(b);  // E2M1 is 1 in the FP4 kinds' table
  const uint32_t a_code = fp4_kind ? 1 : type_code(a);
  return uint32_t(scale_b_id) << 4 | a_code << 7 | b_code << 10 | uint32_t(negate_a) << 13 | uint32_t(negate_b) << 14 |
         uint32_t(a_major == Major::mn) << 15 | uint32_t(b_major == Major::mn) << 16 | uint32_t(n >> 3) << 17 |
         uint32_t(scale == ScaleType::ue8m0) << 23 | uint32_t(m >> 7) << 27 | uint32_t(scale_a_id) << 29 | uint32_t(k96) << 31;
}

BlockScaledInstrDescriptor BlockScaledInstrDescriptor::decode(uint32_t bits, BlockScaledKind kind) {
  const bool fp4_kind = kind != BlockScaledKind::mxf8f6f4;
  if (field(bits, 2, 1)) throw Error("the instruction descriptor is for a sparse MMA (bit 2), which this decoder does not read");
  if (field(bits, 0, 2) || field(bits, 3, 1) || field(bits, 6, 1) || field(bits, 24, 3) || (fp4_kind && field(bits, 12, 1)) ||
      (!fp4_kind && field(bits, 31, 1)))
    throw Error("the block-scaled instruction descriptor has reserved bits set");
  BlockScaledInstrDescriptor x;
  x.kind = kind;
  x.scale_b_id = int(field(bits, 4, 2));
  x.scale_a_id = int(field(bits, 29, 2));
  if (fp4_kind) {
    if (field(bits, 7, 3) != 1 || field(bits, 10, 2) != 1) throw Error("the FP4 kinds' A and B type codes are 1 (E2M1)");
    x.a = x.b = OperandType::e2m1;
  } else {
    x.a = type_of(MmaKind::f8f6f4, uint32_t(field(bits, 7, 3)), "A");
    x.b = type_of(MmaKind::f8f6f4, uint32_t(field(bits, 10, 3)), "B");
  }
  x.negate_a = field(bits, 13, 1);
  x.negate_b = field(bits, 14, 1);
  x.a_major = field(bits, 15, 1) ? Major::mn : Major::k;
  x.b_major = field(bits, 16, 1) ? Major::mn : Major::k;
  x.n = int(field(bits, 17, 6)) << 3;
  x.scale = field(bits, 23, 1) ? ScaleType::ue8m0 : ScaleType::ue4m3;
  x.m = int(field(bits, 27, 2)) << 7;
  x.k96 = fp4_kind && field(bits, 31, 1);
  x.encode();  // what the encoder refuses, the decoder refuses too
  return x;
}

}  // namespace cutejit::sm100
