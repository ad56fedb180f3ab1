#include "emulator/tcgen05_mma.hpp"

#include <bit>
#include <cmath>
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "emulator/number_formats.hpp"

namespace cutejit::emulator {

namespace {

std::string hex(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

uint64_t field(uint64_t bits, int first, int count) { return bits >> first & ((uint64_t(1) << count) - 1); }

// ---- number formats ----

double element_value(ElementType t, uint32_t raw) {
  switch (t) {
    case ElementType::f16: return decode(NumberFormat::f16, raw);
    case ElementType::bf16: return decode(NumberFormat::bf16, raw);
    case ElementType::tf32: return decode(NumberFormat::tf32, raw);
    case ElementType::e4m3: return decode(NumberFormat::e4m3, raw);
    case ElementType::e5m2: return decode(NumberFormat::e5m2, raw);
    case ElementType::e2m3: return decode(NumberFormat::e2m3, raw);
    case ElementType::e3m2: return decode(NumberFormat::e3m2, raw);
    case ElementType::e2m1: return decode(NumberFormat::e2m1, raw);
    case ElementType::u8: return double(raw & 0xFFu);
    case ElementType::s8: return double(int8_t(raw));
  }
  return 0;
}

double scale_value(ScaleType t, uint32_t raw) { return decode(t == ScaleType::ue8m0 ? NumberFormat::ue8m0 : NumberFormat::ue4m3, raw); }

uint32_t f32_bits(double v) { return uint32_t(encode(NumberFormat::f32, v)); }
uint32_t f16_bits(double v) { return uint32_t(encode(NumberFormat::f16, v)); }

// ---- per-kind facts ----

uint32_t k_of(MmaKind k) {
  switch (k) {
    case MmaKind::f16: return 16;
    case MmaKind::tf32: return 8;
    case MmaKind::mxf4:
    case MmaKind::mxf4nvf4: return 64;
    default: return 32;
  }
}

const char* kind_name(MmaKind k) {
  static const char* names[] = {"f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4"};
  return names[int(k)];
}

uint32_t value_bits(ElementType t) {
  switch (t) {
    case ElementType::f16:
    case ElementType::bf16: return 16;
    case ElementType::tf32: return 32;
    case ElementType::e2m3:
    case ElementType::e3m2: return 6;
    case ElementType::e2m1: return 4;
    default: return 8;
  }
}

/// How an operand sits in shared memory: its values' width and how many share 16 bytes. The
/// f8f6f4 kinds keep 16 values per 16 bytes whatever their width (FP6 and FP4 rows of 16 are
/// packed low to high and padded: the TMA's .b6x16_p32 / .b4x16_p64); the FP4 kinds pack 32.
struct SmemFormat {
  uint32_t bits, per_chunk;
};
SmemFormat smem_format(MmaKind kind, ElementType t) {
  if (kind == MmaKind::mxf4 || kind == MmaKind::mxf4nvf4) return {4, 32};
  if (kind == MmaKind::f8f6f4 || kind == MmaKind::mxf8f6f4) return {value_bits(t), 16};
  return {value_bits(t), 128 / value_bits(t)};
}

ElementType float8f6f4_type(uint32_t code, const char* which) {
  switch (code) {
    case 0: return ElementType::e4m3;
    case 1: return ElementType::e5m2;
    case 3: return ElementType::e2m3;
    case 4: return ElementType::e3m2;
    case 5: return ElementType::e2m1;
  }
  throw Fault(std::string("instruction descriptor: ") + which + " type code " + std::to_string(code) +
              " is none of E4M3 (0), E5M2 (1), E2M3 (3), E3M2 (4), E2M1 (5)");
}

void reserved_zero(uint32_t bits, uint32_t mask, const char* table) {
  if (bits & mask)
    throw Fault("instruction descriptor " + hex(bits) + " sets reserved bits " + hex(bits & mask) + " of the " + table + " table");
}

uint32_t swizzle_width(SmemSwizzle s) {
  switch (s) {
    case SmemSwizzle::none: return 16;
    case SmemSwizzle::b32: return 32;
    case SmemSwizzle::b64: return 64;
    default: return 128;
  }
}

}  // namespace

SmemDescriptor decode_smem_descriptor(uint64_t bits) {
  if (field(bits, 46, 3) != 1)
    throw Fault("shared memory descriptor " + hex(bits) + ": bits 46-48 must hold the fixed value 0b001, not " + std::to_string(field(bits, 46, 3)));
  if (field(bits, 53, 8) != 0) throw Fault("shared memory descriptor " + hex(bits) + ": bits 53-60 must be 0");
  if (field(bits, 14, 2) != 0 || field(bits, 30, 2) != 0)
    throw Fault("shared memory descriptor " + hex(bits) + ": reserved bits 14-15 and 30-31 must be 0");
  const uint32_t mode = uint32_t(field(bits, 61, 3));
  if (mode == 3 || mode == 5 || mode == 7)
    throw Fault("shared memory descriptor " + hex(bits) + ": swizzle mode " + std::to_string(mode) + " is invalid (3, 5 and 7 are)");
  SmemDescriptor d;
  d.start_address = uint32_t(field(bits, 0, 14)) << 4;
  d.leading_byte_offset = uint32_t(field(bits, 16, 14)) << 4;
  d.stride_byte_offset = uint32_t(field(bits, 32, 14)) << 4;
  d.base_offset = uint32_t(field(bits, 49, 3));
  d.lbo_absolute = field(bits, 52, 1) != 0;
  d.swizzle = SmemSwizzle(mode);
  return d;
}

uint32_t operand_chunk_address(const SmemDescriptor& d, Major major, uint32_t mn, uint32_t k, uint32_t per_chunk) {
  if (d.base_offset != 0)
    throw Fault("shared memory descriptor with base offset " + std::to_string(d.base_offset) +
                ": swizzle patterns that do not start on their own boundary are not modelled by the emulator");
  if (d.lbo_absolute) throw Fault("shared memory descriptor in absolute leading-dimension mode (bit 52): not modelled by the emulator");
  const uint32_t w = swizzle_width(d.swizzle);
  const uint32_t lbo = d.leading_byte_offset, sbo = d.stride_byte_offset;
  uint32_t offset;
  if (major == Major::k) {
    if (d.swizzle == SmemSwizzle::b128_atom32)
      throw Fault("shared memory descriptor: 128-byte swizzling with 32-byte atoms holds MN-major operands only, not K-major");
    const uint32_t chunk = k / per_chunk;
    offset = (mn % 8) * w + (mn / 8) * sbo + (d.swizzle == SmemSwizzle::none ? chunk * lbo : chunk * 16);
  } else {
    const uint32_t chunk = mn / per_chunk;
    if (d.swizzle == SmemSwizzle::none) offset = chunk * sbo + (k % 8) * 16 + (k / 8) * lbo;
    else if (d.swizzle == SmemSwizzle::b128_atom32) offset = (chunk % 8) * 16 + (chunk / 8) * lbo + (k % 4) * 128 + (k / 4) * sbo;
    else offset = (chunk % (w / 16)) * 16 + (chunk / (w / 16)) * lbo + (k % 8) * w + (k / 8) * sbo;
  }
  const uint32_t a = d.start_address + offset;
  switch (d.swizzle) {
    case SmemSwizzle::none: return a;
    case SmemSwizzle::b128_atom32: return a ^ ((a >> 7 & 3u) << 5);
    default: return a ^ ((a >> 7 & (w / 16 - 1)) << 4);
  }
}

InstrDescriptor decode_instr_descriptor(uint32_t bits, MmaKind kind) {
  InstrDescriptor x;
  if (field(bits, 2, 1)) throw Fault("instruction descriptor " + hex(bits) + " asks for a sparse A (bit 2): sparse tcgen05.mma is not modelled by the emulator");
  x.negate_a = field(bits, 13, 1);
  x.negate_b = field(bits, 14, 1);
  x.a_major = Major(field(bits, 15, 1));
  x.b_major = Major(field(bits, 16, 1));
  x.n = uint32_t(field(bits, 17, 6)) << 3;
  const uint32_t atype = uint32_t(field(bits, 7, 3));
  if (is_block_scaled(kind)) {
    const bool fp4 = kind != MmaKind::mxf8f6f4;
    reserved_zero(bits, 0x3u | 1u << 3 | 1u << 6 | 0x7u << 24 | (fp4 ? 1u << 12 : 1u << 31), fp4 ? "mxf4 / mxf4nvf4" : "mxf8f6f4");
    if (fp4 && field(bits, 31, 1)) throw Fault("instruction descriptor " + hex(bits) + ": K = 96 (bit 31) is not modelled by the emulator");
    x.scale_b_id = uint32_t(field(bits, 4, 2));
    x.scale_a_id = uint32_t(field(bits, 29, 2));
    x.scale = ScaleType(field(bits, 23, 1));
    x.m = uint32_t(field(bits, 27, 2)) << 7;
    if (fp4) {
      if (atype != 1 || field(bits, 10, 2) != 1)
        throw Fault("instruction descriptor " + hex(bits) + ": kind::" + kind_name(kind) + " takes E2M1 (code 1) for A and B");
      x.a = x.b = ElementType::e2m1;
    } else {
      x.a = float8f6f4_type(atype, "A");
      x.b = float8f6f4_type(uint32_t(field(bits, 10, 3)), "B");
    }
    return x;
  }
  reserved_zero(bits, 1u << 6 | 1u << 23 | 1u << 29, "dense");
  x.saturate = field(bits, 3, 1);
  x.max_shift = uint32_t(field(bits, 30, 2));
  x.m = uint32_t(field(bits, 24, 5)) << 4;
  const uint32_t btype = uint32_t(field(bits, 10, 3)), dtype = uint32_t(field(bits, 4, 2));
  if (x.saturate && kind != MmaKind::i8) throw Fault("instruction descriptor " + hex(bits) + ": saturation (bit 3) is for kind::i8 only");
  const std::string k = std::string("kind::") + kind_name(kind);
  switch (kind) {
    case MmaKind::f16:
      if (atype > 1 || btype > 1) throw Fault("instruction descriptor " + hex(bits) + ": " + k + " takes F16 (0) or BF16 (1) operands");
      x.a = atype ? ElementType::bf16 : ElementType::f16;
      x.b = btype ? ElementType::bf16 : ElementType::f16;
      break;
    case MmaKind::tf32:
      if (atype != 2 || btype != 2) throw Fault("instruction descriptor " + hex(bits) + ": " + k + " takes TF32 (2) operands");
      x.a = x.b = ElementType::tf32;
      break;
    case MmaKind::f8f6f4:
      x.a = float8f6f4_type(atype, "A");
      x.b = float8f6f4_type(btype, "B");
      break;
    default:
      if (atype > 1 || btype > 1) throw Fault("instruction descriptor " + hex(bits) + ": " + k + " takes unsigned (0) or signed (1) 8-bit operands");
      if (x.negate_a || x.negate_b) throw Fault("instruction descriptor " + hex(bits) + ": " + k + " cannot negate A or B");
      x.a = atype ? ElementType::s8 : ElementType::u8;
      x.b = btype ? ElementType::s8 : ElementType::u8;
  }
  if (kind == MmaKind::i8 ? dtype != 2 : (dtype > 1 || (kind == MmaKind::tf32 && dtype != 1)))
    throw Fault("instruction descriptor " + hex(bits) + ": D type code " + std::to_string(dtype) + " is not one " + k + " writes");
  x.d = AccumulatorType(dtype);
  return x;
}

namespace {
std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == '.') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}
}  // namespace

Tcgen05Mma parse_tcgen05_mma(std::string_view opcode) {
  const std::vector<std::string_view> t = split_dots(opcode);
  if (t.size() < 4 || t[0] != "tcgen05" || t[1] != "mma") throw Fault("not a tcgen05.mma opcode: " + std::string(opcode));
  Tcgen05Mma op;
  op.cta_group = 0;
  bool have_kind = false, block_scale = false;
  uint32_t block = 0, vec = 0;
  static const char* kinds[] = {"kind::f16", "kind::tf32", "kind::f8f6f4", "kind::i8", "kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4"};
  for (size_t i = 2; i < t.size(); ++i) {
    const std::string_view q = t[i];
    bool known = true;
    if (q == "cta_group::1") op.cta_group = 1;
    else if (q == "cta_group::2") op.cta_group = 2;
    else if (q == "block_scale") block_scale = true;
    else if (q == "block16") block = 16;
    else if (q == "block32") block = 32;
    else if (q == "scale_vec::1X") vec = 1;
    else if (q == "scale_vec::2X") vec = 2;
    else if (q == "scale_vec::4X") vec = 4;
    else if (q == "collector::a::fill" || q == "collector::a::use" || q == "collector::a::lastuse" || q == "collector::a::discard") {
    } else if (q == "sp" || q == "ws" || q == "ashift") {
      throw Fault(std::string(opcode) + ": ." + std::string(q) + " is not modelled by the emulator");
    } else {
      known = false;
      for (int k = 0; k < 7; ++k)
        if (q == kinds[k]) op.kind = MmaKind(k), have_kind = known = true;
    }
    if (!known) throw Fault(std::string(opcode) + ": unknown qualifier ." + std::string(q));
  }
  if (op.cta_group == 0 || !have_kind) throw Fault(std::string(opcode) + ": tcgen05.mma needs .cta_group::1 or ::2 and a .kind");
  if (is_block_scaled(op.kind) != block_scale)
    throw Fault(std::string(opcode) + (block_scale ? ": .block_scale needs kind::mxf8f6f4, mxf4 or mxf4nvf4" : ": this kind needs .block_scale"));
  if (!block_scale) {
    if (block || vec) throw Fault(std::string(opcode) + ": a scale vector size without .block_scale");
    return op;
  }
  const bool fp4 = op.kind != MmaKind::mxf8f6f4;
  if (block && vec) throw Fault(std::string(opcode) + ": both .blockN and .scale_vec::NX");
  if (block == 32) vec = fp4 ? 2 : 1;
  if (block == 16) vec = 4;
  if (vec == 0 && op.kind == MmaKind::mxf4) vec = 2;
  const bool valid = op.kind == MmaKind::mxf8f6f4 ? vec == 1 : op.kind == MmaKind::mxf4 ? vec == 2 : (vec == 2 || vec == 4);
  if (!valid) throw Fault(std::string(opcode) + ": kind::" + kind_name(op.kind) + " does not take this scale vector size (or needs one given)");
  op.scale_vec = vec;
  return op;
}

namespace {

/// The ISA's data path layouts that tcgen05.mma (no .ws) uses: which lanes hold a CTA's rows.
enum class DataPath { full, half_lanes, two_by_two };  // Layouts A and D; F; B

uint32_t row_lane(DataPath p, uint32_t base, uint32_t r) { return p == DataPath::half_lanes ? base + r % 16 + 32 * (r / 16) : r; }

uint32_t chunk_bits(const uint8_t* p, uint32_t bit, uint32_t bits) {
  uint64_t w = 0;
  for (uint32_t i = 0, b = bit / 8; i < 5 && b + i < 16; ++i) w |= uint64_t(p[b + i]) << (8 * i);
  return uint32_t(w >> (bit % 8)) & (bits == 32 ? ~0u : (1u << bits) - 1u);
}

/// `rows` x `k` values of an operand in shared memory, row-major into `out`.
void load_smem_operand(Memory& mem, uint64_t desc, Major major, ElementType t, SmemFormat f, bool negate, uint32_t rows, uint32_t k,
                       double* out, const char* which) {
  const SmemDescriptor d = decode_smem_descriptor(desc);
  const uint32_t per = f.per_chunk;
  const double sign = negate ? -1.0 : 1.0;
  uint8_t chunk[16];
  if (major == Major::k) {
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t c = 0; c < k / per; ++c) {
        mem.read(operand_chunk_address(d, Major::k, r, c * per, per), chunk, 16);
        for (uint32_t e = 0; e < per; ++e) out[r * k + c * per + e] = sign * element_value(t, chunk_bits(chunk, e * f.bits, f.bits));
      }
    return;
  }
  if (rows % per != 0)
    throw Fault(std::string("tcgen05.mma: MN-major ") + which + " of " + std::to_string(rows) + " rows is not a whole number of 16-byte chunks");
  for (uint32_t kk = 0; kk < k; ++kk)
    for (uint32_t g = 0; g < rows / per; ++g) {
      mem.read(operand_chunk_address(d, Major::mn, g * per, kk, per), chunk, 16);
      for (uint32_t e = 0; e < per; ++e) out[(g * per + e) * k + kk] = sign * element_value(t, chunk_bits(chunk, e * f.bits, f.bits));
    }
}

/// A's rows from TMEM: row r in the data path's lane, its k values packed low to high over 8
/// columns. Layout B holds every row twice (lanes r and 64 + r); both copies must agree.
void load_tmem_a(const TensorMemory& tm, TmemAddress a, DataPath path, ElementType t, bool negate, uint32_t rows, uint32_t k,
                 double* out) {
  const uint32_t bits = value_bits(t), per_word = 32 / bits;
  const double sign = negate ? -1.0 : 1.0;
  for (uint32_t r = 0; r < rows; ++r) {
    const uint32_t lane = a.lane + row_lane(path, 0, r);
    for (uint32_t c = 0; c < k / per_word; ++c) {
      const uint32_t word = tm.read(lane, a.column + c);
      if (path == DataPath::two_by_two && tm.read(lane + 64, a.column + c) != word)
        throw Fault("tcgen05.mma: A in TMEM for M = 128 with .cta_group::2 must hold row " + std::to_string(r) + " in lanes " +
                    std::to_string(lane) + " and " + std::to_string(lane + 64) + " alike (column " + std::to_string(a.column + c) + " differs)");
      for (uint32_t e = 0; e < per_word; ++e)
        out[r * k + c * per_word + e] = sign * element_value(t, bits == 32 ? word : word >> (e * bits) & ((1u << bits) - 1u));
    }
  }
}

/// The scale factor byte `byte` of row / column `i`: column `column` + i / 32, lane i % 32 of each
/// lane quarter, all four copies alike.
double read_scale(const TensorMemory& tm, uint32_t column, uint32_t i, uint32_t byte, ScaleType type, const char* which) {
  const uint32_t col = column + i / 32;
  const uint32_t first = tm.read(i % 32, col) >> (8 * byte) & 0xFFu;
  for (uint32_t q = 1; q < 4; ++q) {
    const uint32_t lane = i % 32 + 32 * q, v = tm.read(lane, col) >> (8 * byte) & 0xFFu;
    if (v != first)
      throw Fault(std::string("tcgen05.mma: scale factor ") + which + " of row " + std::to_string(i) + " (byte " + std::to_string(byte) +
                  " of column " + std::to_string(col) + ") is " + hex(first) + " in lane " + std::to_string(i % 32) + " but " + hex(v) +
                  " in lane " + std::to_string(lane) + ": the ISA needs it duplicated to all four lane quarters");
  }
  return scale_value(type, first);
}

void check_operand_major(MmaKind kind, ElementType t, Major major, SmemSwizzle sw, const char* which) {
  const std::string k = std::string("tcgen05.mma kind::") + kind_name(kind) + ": ";
  if (major == Major::k) {
    if (sw == SmemSwizzle::b128_atom32) throw Fault(k + which + " is K-major, which 128-byte swizzling with 32-byte atoms cannot hold");
    return;
  }
  if (kind == MmaKind::mxf4 || kind == MmaKind::mxf4nvf4) throw Fault(k + which + " cannot be transposed (MN-major)");
  if (value_bits(t) < 8) throw Fault(k + which + " of 4- or 6-bit values cannot be MN-major");
  if (t == ElementType::tf32 && sw != SmemSwizzle::b128_atom32)
    throw Fault(k + "an MN-major TF32 " + which + " needs 128-byte swizzling with 32-byte atoms (swizzle mode 1)");
  if (t != ElementType::tf32 && sw == SmemSwizzle::b128_atom32)
    throw Fault(k + "128-byte swizzling with 32-byte atoms is for MN-major TF32 only, not this " + which);
}

void check_shape(const Tcgen05Mma& op, const InstrDescriptor& x) {
  const bool pair = op.cta_group == 2, scaled = is_block_scaled(op.kind);
  const uint32_t m = x.m, n = x.n;
  const bool m_ok = pair ? (m == 128 || m == 256) : scaled ? m == 128 : (m == 64 || m == 128);
  bool n_ok = pair ? (n % 16 == 0 && n >= 16 && n <= 256) : (n % 8 == 0 && n >= 8 && n <= 256);
  if (op.kind == MmaKind::i8) n_ok = pair ? (n % 32 == 0 && n >= 32 && n <= 256) : (n == 8 || n == 16 || n == 24 || (n % 16 == 0 && n >= 32 && n <= 256));
  if (!m_ok || !n_ok)
    throw Fault(std::string("tcgen05.mma.cta_group::") + std::to_string(op.cta_group) + ".kind::" + kind_name(op.kind) + " has no " +
                std::to_string(m) + " x " + std::to_string(n) + " shape (M x N from the instruction descriptor)");
  if (x.b_major == Major::mn && value_bits(x.b) == 8 && n % (pair ? 32 : 16) != 0)
    throw Fault("tcgen05.mma: an MN-major 8-bit B needs N a multiple of " + std::to_string(pair ? 32 : 16) + ", not " + std::to_string(n));
}

void check_kind(const Tcgen05Mma& op, const InstrDescriptor& x, const MmaOperands& o) {
  const std::string k = std::string("tcgen05.mma kind::") + kind_name(op.kind) + ": ";
  if (op.kind == MmaKind::f16 && x.a != x.b) throw Fault(k + "A and B must both be F16 or both BF16");
  if (op.kind == MmaKind::f16 && x.d == AccumulatorType::f16 && x.a != ElementType::f16) throw Fault(k + "an F16 D takes F16 operands only");
  if (o.scale_input_d > 15 || (o.scale_input_d && op.kind != MmaKind::f16 && op.kind != MmaKind::tf32))
    throw Fault(k + "scale-input-d " + std::to_string(o.scale_input_d) + " (0-15, kind::f16 and tf32 only)");
  if (!is_block_scaled(op.kind)) return;
  if (op.cta_group == 2) throw Fault(k + "block scaling with .cta_group::2 is not modelled by the emulator");
  if (x.scale == ScaleType::ue4m3 && !(op.kind == MmaKind::mxf4nvf4 && op.scale_vec == 4))
    throw Fault(k + "UE4M3 scale factors (bit 23 = 0) need kind::mxf4nvf4 with .block16 / .scale_vec::4X");
  for (const uint32_t id : {x.scale_a_id, x.scale_b_id})
    if ((op.scale_vec == 2 && id % 2) || (op.scale_vec == 4 && id))
      throw Fault(k + "scale factor ID " + std::to_string(id) + " with " + std::to_string(op.scale_vec) + " factors per row (2: 0 or 2; 4: 0)");
}

struct Scratch {
  std::vector<double> a, b, sa, sb;
};

}  // namespace

void tcgen05_mma(const Tcgen05Mma& op, const MmaOperands& o, std::span<Memory* const> shared, std::span<TensorMemory* const> tmem) {
  const uint32_t ctas = op.cta_group;
  if ((ctas != 1 && ctas != 2) || shared.size() != ctas || tmem.size() != ctas)
    throw Fault("tcgen05.mma.cta_group::" + std::to_string(ctas) + " needs that many CTAs' shared memory and TMEM");
  const InstrDescriptor x = decode_instr_descriptor(o.idesc, op.kind);
  check_shape(op, x);
  check_kind(op, x, o);
  const uint32_t m = x.m, n = x.n, k = k_of(op.kind), rows = m / ctas, cols = n / ctas;
  const DataPath path = m == 64 ? DataPath::half_lanes : (ctas == 2 && m == 128) ? DataPath::two_by_two : DataPath::full;
  const TmemAddress d = split_tmem_address(o.d_tmem);
  if (path == DataPath::half_lanes ? (d.lane != 0 && d.lane != 16) : d.lane != 0)
    throw Fault("tcgen05.mma: D's TMEM address has lane " + std::to_string(d.lane) + "; M = " + std::to_string(m) + " takes lane " +
                (path == DataPath::half_lanes ? "0 or 16" : "0"));
  if (!o.disable_output_lane.empty() && (ctas == 2 || o.disable_output_lane.size() != 4))
    throw Fault("tcgen05.mma: disable-output-lane is modelled for .cta_group::1 (4 words) only");

  thread_local Scratch s;
  s.a.resize(256 * 64);
  s.b.resize(256 * 64);
  s.sa.resize(256 * 4);
  s.sb.resize(256 * 4);
  const SmemFormat fb = smem_format(op.kind, x.b);
  check_operand_major(op.kind, x.b, x.b_major, decode_smem_descriptor(o.b_desc).swizzle, "B");
  for (uint32_t v = 0; v < ctas; ++v) {
    load_smem_operand(*shared[v], o.b_desc, x.b_major, x.b, fb, x.negate_b, cols, k, s.b.data() + size_t(v) * cols * k, "B");
    if (!o.a_in_tmem) {
      check_operand_major(op.kind, x.a, x.a_major, decode_smem_descriptor(o.a).swizzle, "A");
      load_smem_operand(*shared[v], o.a, x.a_major, x.a, smem_format(op.kind, x.a), x.negate_a, rows, k, s.a.data() + size_t(v) * rows * k, "A");
      continue;
    }
    if (x.a_major != Major::k) throw Fault("tcgen05.mma: A read from TMEM is K-major only; the instruction descriptor transposes it (bit 15)");
    if (value_bits(x.a) < 8 || op.kind == MmaKind::mxf4 || op.kind == MmaKind::mxf4nvf4)
      throw Fault("tcgen05.mma: 4- and 6-bit A read from TMEM is not modelled by the emulator");
    const TmemAddress a = split_tmem_address(uint32_t(o.a));
    if (path == DataPath::half_lanes ? a.lane != d.lane : a.lane != 0)
      throw Fault("tcgen05.mma: A's TMEM address has lane " + std::to_string(a.lane) + "; it must be " +
                  (path == DataPath::half_lanes ? "D's lane (" + std::to_string(d.lane) + ")" : std::string("0")));
    load_tmem_a(*tmem[v], a, path, x.a, x.negate_a, rows, k, s.a.data() + size_t(v) * rows * k);
  }
  const uint32_t vec = op.scale_vec;
  if (vec) {
    const uint32_t ca = split_tmem_address(o.scale_a_tmem).column, cb = split_tmem_address(o.scale_b_tmem).column;
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t j = 0; j < vec; ++j) s.sa[i * vec + j] = read_scale(*tmem[0], ca, i, x.scale_a_id + j, x.scale, "A");
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t j = 0; j < vec; ++j) s.sb[i * vec + j] = read_scale(*tmem[0], cb, i, x.scale_b_id + j, x.scale, "B");
  }
  const double d_scale = std::ldexp(1.0, -int(o.scale_input_d));
  const uint32_t block = vec ? k / vec : k;
  for (uint32_t v = 0; v < ctas; ++v) {
    TensorMemory& tm = *tmem[v];
    for (uint32_t r = 0; r < rows; ++r) {
      const uint32_t row = v * rows + r;
      const double* ar = s.a.data() + size_t(row) * k;
      for (uint32_t c = 0; c < n; ++c) {
        const bool second_half = path == DataPath::two_by_two && c >= n / 2;
        const uint32_t lane = row_lane(path, d.lane, r) + (second_half ? 64 : 0), column = d.column + (second_half ? c - n / 2 : c);
        if (!o.disable_output_lane.empty() && (o.disable_output_lane[lane / 32] >> (lane % 32) & 1u)) continue;
        const double* bc = s.b.data() + size_t(c) * k;
        double acc = 0;
        for (uint32_t j = 0; j * block < k; ++j) {
          double part = 0;
          for (uint32_t e = j * block; e < (j + 1) * block; ++e) part += ar[e] * bc[e];
          acc += vec ? part * s.sa[row * vec + j] * s.sb[c * vec + j] : part;
        }
        if (x.d == AccumulatorType::s32) {
          int64_t sum = int64_t(acc) + (o.enable_input_d ? int64_t(int32_t(tm.read(lane, column))) : 0);
          if (x.saturate) sum = std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX);
          tm.write(lane, column, uint32_t(uint64_t(sum)));
        } else if (x.d == AccumulatorType::f32) {
          if (o.enable_input_d) acc += double(std::bit_cast<float>(tm.read(lane, column))) * d_scale;
          tm.write(lane, column, f32_bits(acc));
        } else {
          if (o.enable_input_d) acc += element_value(ElementType::f16, tm.read(lane, column) & 0xFFFFu) * d_scale;
          tm.write(lane, column, f16_bits(acc));
        }
      }
    }
  }
}

}  // namespace cutejit::emulator
