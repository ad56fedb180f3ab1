// mma.sync: parsing the ISA's shape/type tables, the fragment layouts as formulas, and the warp's
// D = A x B + C in double (see warp_mma.hpp for the numerics).
#include "emulator/warp_mma.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "emulator/number_formats.hpp"

namespace cutejit::emulator {

namespace {

// ---- the forms ----

struct TypeName {
  std::string_view name;
  MmaSyncType type;
};
constexpr TypeName type_names[] = {
    {"f16", MmaSyncType::f16},   {"bf16", MmaSyncType::bf16}, {"tf32", MmaSyncType::tf32},   {"f32", MmaSyncType::f32},
    {"f64", MmaSyncType::f64},   {"e4m3", MmaSyncType::e4m3}, {"e5m2", MmaSyncType::e5m2},   {"e3m2", MmaSyncType::e3m2},
    {"e2m3", MmaSyncType::e2m3}, {"e2m1", MmaSyncType::e2m1}, {"s8", MmaSyncType::s8},       {"u8", MmaSyncType::u8},
    {"s4", MmaSyncType::s4},     {"u4", MmaSyncType::u4},     {"b1", MmaSyncType::b1},       {"s32", MmaSyncType::s32},
    {"ue8m0", MmaSyncType::ue8m0}, {"ue4m3", MmaSyncType::ue4m3},
};

constexpr std::pair<std::string_view, MmaSyncKind> kind_names[] = {
    {"f8f6f4", MmaSyncKind::f8f6f4}, {"mxf8f6f4", MmaSyncKind::mxf8f6f4}, {"mxf4", MmaSyncKind::mxf4}, {"mxf4nvf4", MmaSyncKind::mxf4nvf4}};

bool is_f8(MmaSyncType t) { return t == MmaSyncType::e4m3 || t == MmaSyncType::e5m2; }
bool is_f8f6f4(MmaSyncType t) { return is_f8(t) || t == MmaSyncType::e3m2 || t == MmaSyncType::e2m3 || t == MmaSyncType::e2m1; }
bool is_i8(MmaSyncType t) { return t == MmaSyncType::s8 || t == MmaSyncType::u8; }
bool is_i4(MmaSyncType t) { return t == MmaSyncType::s4 || t == MmaSyncType::u4; }
bool is_half(MmaSyncType t) { return t == MmaSyncType::f16 || t == MmaSyncType::f32; }

/// m8n8k4 with f16 operands: four MMAs, one per quad pair.
bool quad_pair(const MmaSync& op) { return op.m == 8 && op.k == 4 && op.a == MmaSyncType::f16; }

/// Elements of A or B in one register.
int per_register(const MmaSync& op, MmaSyncType t) {
  switch (t) {
    case MmaSyncType::f16:
    case MmaSyncType::bf16: return 2;
    case MmaSyncType::tf32:
    case MmaSyncType::f64: return 1;
    case MmaSyncType::s4:
    case MmaSyncType::u4: return 8;
    case MmaSyncType::b1: return 32;
    case MmaSyncType::e2m1: return op.kind == MmaSyncKind::mxf4 || op.kind == MmaSyncKind::mxf4nvf4 ? 8 : 4;
    default: return 4;
  }
}
int per_accumulator_register(MmaSyncType t) { return t == MmaSyncType::f16 ? 2 : 1; }

struct Shape {
  int m, n, k;
  bool is(int m2, int n2, int k2) const { return m == m2 && n == n2 && k == k2; }
};

/// The ISA's tables: fills the target requirement, or says what is wrong.
std::string check_form(MmaSync& op, bool layouts_row_col, bool scale_vec_given) {
  const Shape s{op.m, op.n, op.k};
  auto ok = [&](int sm, bool family_specific = false) {
    op.minimum_sm = uint16_t(sm), op.family_specific = family_specific;
    return std::string();
  };
  const bool same_acc = op.d == op.c, f32_acc = op.d == MmaSyncType::f32 && op.c == MmaSyncType::f32;
  const bool scaled = op.kind == MmaSyncKind::mxf8f6f4 || op.kind == MmaSyncKind::mxf4 || op.kind == MmaSyncKind::mxf4nvf4;
  if (op.satfinite && !(is_i8(op.a) || is_i4(op.a))) return ".satfinite is for s8/u8/s4/u4 operands";
  if (op.bit_op != MmaBitOp::none && op.a != MmaSyncType::b1) return ".xor.popc/.and.popc are for b1 operands";
  if (!layouts_row_col && !quad_pair(op)) return "only m8n8k4 with f16 operands takes layouts other than .row.col";
  if (op.kind == MmaSyncKind::f8f6f4) {
    if (!(is_f8f6f4(op.a) && is_f8f6f4(op.b) && s.is(16, 8, 32) && same_acc && is_half(op.d)))
      return "kind::f8f6f4 is m16n8k32 with FP8/FP6/FP4 operands and f16 or f32 accumulators";
    return ok(120, true);
  }
  if (scaled) {
    if (!f32_acc) return "block-scaled mma accumulates in f32";
    if (op.kind == MmaSyncKind::mxf8f6f4) {
      if (!(is_f8f6f4(op.a) && is_f8f6f4(op.b) && s.is(16, 8, 32))) return "kind::mxf8f6f4 is m16n8k32 with FP8/FP6/FP4 operands";
      if (!scale_vec_given) op.scale_vec = 1;
      if (op.scale_vec != 1 || op.scale != MmaSyncType::ue8m0) return "kind::mxf8f6f4 takes .scale_vec::1X and .ue8m0 scales";
    } else {
      if (!(op.a == MmaSyncType::e2m1 && op.b == MmaSyncType::e2m1 && s.is(16, 8, 64)))
        return "kind::mxf4 and kind::mxf4nvf4 are m16n8k64 with e2m1 operands";
      if (op.kind == MmaSyncKind::mxf4) {
        if (!scale_vec_given) op.scale_vec = 2;
        if (op.scale_vec != 2 || op.scale != MmaSyncType::ue8m0) return "kind::mxf4 takes .scale_vec::2X and .ue8m0 scales";
      } else if (!scale_vec_given) {
        return "kind::mxf4nvf4 needs .scale_vec::2X or .scale_vec::4X";
      } else if (!(op.scale == MmaSyncType::ue8m0 ? op.scale_vec == 2 || op.scale_vec == 4 : op.scale == MmaSyncType::ue4m3 && op.scale_vec == 4)) {
        return "kind::mxf4nvf4 takes .ue8m0 scales with .scale_vec::2X or 4X, .ue4m3 with 4X";
      }
    }
    return ok(120, true);
  }
  if (op.a == MmaSyncType::f16 || op.a == MmaSyncType::bf16 || op.a == MmaSyncType::tf32) {
    if (op.b != op.a) return ".atype and .btype differ";
    if (op.a == MmaSyncType::f16) {
      if (!is_half(op.d) || !is_half(op.c)) return "f16 operands accumulate in f16 or f32";
      if (s.is(8, 8, 4)) return op.c == MmaSyncType::f32 && op.d != MmaSyncType::f32 ? "m8n8k4: an f32 C needs an f32 D" : ok(70);
      if (!same_acc) return ".dtype and .ctype differ";
      if (s.is(16, 8, 8)) return ok(75);
      if (s.is(16, 8, 16)) return ok(80);
      return "f16 shapes are m8n8k4, m16n8k8 and m16n8k16";
    }
    if (!f32_acc) return "bf16 and tf32 operands accumulate in f32";
    const bool shape_ok = op.a == MmaSyncType::bf16 ? s.is(16, 8, 8) || s.is(16, 8, 16) : s.is(16, 8, 4) || s.is(16, 8, 8);
    return shape_ok ? ok(80) : "bf16 shapes are m16n8k8 and m16n8k16, tf32 shapes m16n8k4 and m16n8k8";
  }
  if (op.a == MmaSyncType::f64) {
    if (op.b != op.a || op.c != op.a || op.d != op.a) return "f64 mma is f64 throughout";
    if (s.is(8, 8, 4)) return ok(80);
    if (s.is(16, 8, 4) || s.is(16, 8, 8) || s.is(16, 8, 16)) return ok(90);
    return "f64 shapes are m8n8k4, m16n8k4, m16n8k8 and m16n8k16";
  }
  if (is_f8f6f4(op.a)) {
    if (!(is_f8(op.a) && is_f8(op.b))) return "FP6/FP4 operands need .kind::f8f6f4";
    if (!(same_acc && is_half(op.d))) return "e4m3/e5m2 operands accumulate in f16 or f32 (.dtype = .ctype)";
    return s.is(16, 8, 16) || s.is(16, 8, 32) ? ok(89) : "e4m3/e5m2 shapes are m16n8k16 and m16n8k32";
  }
  const bool s32_acc = op.d == MmaSyncType::s32 && op.c == MmaSyncType::s32;
  if (is_i8(op.a) || is_i4(op.a)) {
    if (!s32_acc || !(is_i8(op.a) ? is_i8(op.b) : is_i4(op.b))) return "integer operands are both 8-bit or both 4-bit, with s32 accumulators";
    const int k = is_i8(op.a) ? 16 : 32;
    if (s.is(8, 8, k)) return ok(75);
    if (s.is(16, 8, k) || s.is(16, 8, 2 * k)) return ok(80);
    return is_i8(op.a) ? "s8/u8 shapes are m8n8k16, m16n8k16 and m16n8k32" : "s4/u4 shapes are m8n8k32, m16n8k32 and m16n8k64";
  }
  if (op.a == MmaSyncType::b1) {
    if (!s32_acc || op.b != op.a || op.bit_op == MmaBitOp::none) return "b1 mma is .s32.b1.b1.s32 with .xor.popc or .and.popc";
    if (s.is(8, 8, 128)) return ok(op.bit_op == MmaBitOp::bit_and ? 80 : 75);
    if (s.is(16, 8, 128) || s.is(16, 8, 256)) return ok(80);
    return "b1 shapes are m8n8k128, m16n8k128 and m16n8k256";
  }
  return "no mma.sync takes these operand types";
}

bool parse_shape(std::string_view t, MmaSync& op) {
  unsigned v[3] = {0, 0, 0};
  const char letters[3] = {'m', 'n', 'k'};
  size_t at = 0;
  for (int f = 0; f < 3; ++f) {
    if (at >= t.size() || t[at] != letters[f]) return false;
    const size_t start = ++at;
    while (at < t.size() && t[at] >= '0' && t[at] <= '9') v[f] = v[f] * 10 + unsigned(t[at++] - '0');
    if (at == start || v[f] > 1024) return false;
  }
  if (at != t.size()) return false;
  op.m = uint16_t(v[0]), op.n = uint16_t(v[1]), op.k = uint16_t(v[2]);
  return true;
}

// ---- fragment layouts (in the matrices of the whole warp; m8n8k4 f16 places MMA c at rows and
// columns 8c.. of A/C/D, 4c.. of A's columns and B's rows) ----

struct Position {
  int row, col;
};

Position a_position(const MmaSync& op, int p, int lane, int i) {
  const int g = lane >> 2, q = lane & 3;
  if (quad_pair(op)) {
    const int c = g & 3, hi = lane >> 4;
    return op.a_row_major ? Position{8 * c + q + 4 * hi, 4 * c + i} : Position{8 * c + i + 4 * hi, 4 * c + q};
  }
  const int reg = i / p, j = i % p;
  if (op.m == 8) return {g, p * q + j};
  return {g + 8 * (reg % 2), 4 * p * (reg / 2) + p * q + j};
}

Position b_position(const MmaSync& op, int p, int lane, int i) {
  const int g = lane >> 2, q = lane & 3;
  if (quad_pair(op)) {
    const int c = g & 3, hi = lane >> 4;
    return op.b_col_major ? Position{4 * c + i, 8 * c + q + 4 * hi} : Position{4 * c + q, 8 * c + i + 4 * hi};
  }
  const int reg = i / p, j = i % p;
  return {4 * p * reg + p * q + j, g};
}

Position accumulator_position(const MmaSync& op, MmaSyncType t, int lane, int i) {
  const int g = lane >> 2, q = lane & 3;
  if (quad_pair(op)) {
    const int c = g & 3, hi = 4 * (lane >> 4);
    if (t == MmaSyncType::f16) return {8 * c + q + hi, 8 * c + i};
    return {8 * c + (lane & 1) + (i & 2) + hi, 8 * c + (i & 4) + (lane & 2) + (i & 1)};
  }
  if (op.m == 8) return {g, 2 * q + i};
  return {g + 8 * (i / 2), 2 * q + i % 2};
}

/// Element j of a register holding `p` elements of type `t`, as an exact double.
double element_value(MmaSyncType t, int p, uint64_t reg, int j) {
  if (t == MmaSyncType::f64) return std::bit_cast<double>(reg);
  const int width = 32 / p;
  const uint32_t raw = uint32_t(reg >> (width * j)) & uint32_t((uint64_t(1) << width) - 1);
  switch (t) {
    case MmaSyncType::f16: return decode(NumberFormat::f16, raw);
    case MmaSyncType::bf16: return decode(NumberFormat::bf16, raw);
    case MmaSyncType::tf32: return decode(NumberFormat::tf32, raw);
    case MmaSyncType::e4m3: return decode(NumberFormat::e4m3, raw);
    case MmaSyncType::e5m2: return decode(NumberFormat::e5m2, raw);
    case MmaSyncType::e3m2: return decode(NumberFormat::e3m2, raw);
    case MmaSyncType::e2m3: return decode(NumberFormat::e2m3, raw);
    // kind::f8f6f4 reads e2m1 from bits 2-5 of each byte; the packed forms hold it in 4 bits.
    case MmaSyncType::e2m1: return decode(NumberFormat::e2m1, width == 8 ? raw >> 2 : raw);
    case MmaSyncType::s8: return double(int8_t(raw));
    case MmaSyncType::s4: return double(int32_t(raw << 28) >> 28);
    default: return double(raw);  // u8, u4, b1
  }
}

double accumulator_value(MmaSyncType t, uint64_t reg, int j) {
  switch (t) {
    case MmaSyncType::f16: return decode(NumberFormat::f16, uint32_t(reg >> (16 * j)));
    case MmaSyncType::f32: return std::bit_cast<float>(uint32_t(reg));
    case MmaSyncType::f64: return std::bit_cast<double>(reg);
    default: return double(int32_t(uint32_t(reg)));
  }
}

uint64_t encode_accumulator(const MmaSync& op, double v) {
  switch (op.d) {
    case MmaSyncType::f16: return encode(NumberFormat::f16, v);
    case MmaSyncType::f32: return encode(NumberFormat::f32, v);
    case MmaSyncType::f64: return std::isnan(v) ? 0x7fffffffffffffffull : std::bit_cast<uint64_t>(v);
    default:
      if (op.satfinite) v = std::fmin(std::fmax(v, double(INT32_MIN)), double(INT32_MAX));
      return uint32_t(int64_t(v));
  }
}

[[noreturn]] void fail(const MmaSync& op, const std::string& what) {
  throw Fault("mma.sync.m" + std::to_string(op.m) + "n" + std::to_string(op.n) + "k" + std::to_string(op.k) + ": " + what);
}

/// The warp's selector: the same value in every lane, one of `allowed` (a bit set).
uint32_t selector(const MmaSync& op, std::span<const uint64_t> lanes, uint32_t allowed, const char* name) {
  if (lanes.size() != 32) fail(op, std::string("block scaling needs 32 lanes' ") + name + ", got " + std::to_string(lanes.size()));
  const uint64_t v = lanes[0];
  for (int l = 1; l < 32; ++l)
    if (lanes[size_t(l)] != v)
      fail(op, std::string(name) + " differs between lanes (lane 0: " + std::to_string(v) + ", lane " + std::to_string(l) + ": " +
                   std::to_string(lanes[size_t(l)]) + "); the ISA leaves that undefined");
  if (v >= 32 || !((allowed >> v) & 1))
    fail(op, std::string(name) + " " + std::to_string(v) + " is not valid with .scale_vec::" + std::to_string(op.scale_vec) + "X");
  return uint32_t(v);
}

/// Multiplies A's rows and B's columns, K block by K block, by their scale factors.
void apply_scales(const MmaSync& op, const MmaScaleOperands& s, double* a, double* b) {
  if (s.scale_a.size() != 32 || s.scale_b.size() != 32) fail(op, "block scaling needs 32 lanes' scale-a-data and scale-b-data");
  const uint32_t byte_ids = op.scale_vec == 1 ? 0xf : op.scale_vec == 2 ? 0x5 : 0x1;
  const uint32_t byte_a = selector(op, s.byte_id_a, byte_ids, "byte-id-a"), thread_a = selector(op, s.thread_id_a, 0x3, "thread-id-a");
  const uint32_t byte_b = selector(op, s.byte_id_b, byte_ids, "byte-id-b"), thread_b = selector(op, s.thread_id_b, 0xf, "thread-id-b");
  auto factor = [&](uint64_t data, uint32_t byte) {
    const uint32_t v = uint32_t(data >> (8 * byte)) & 0xff;
    return decode(op.scale == MmaSyncType::ue8m0 ? NumberFormat::ue8m0 : NumberFormat::ue4m3, v);
  };
  const int block = op.k / op.scale_vec;
  for (int r = 0; r < op.m; ++r) {
    const uint64_t data = s.scale_a[size_t(4 * (r % 8) + 2 * int(thread_a) + r / 8)];
    for (int k = 0; k < op.k; ++k) a[r * op.k + k] *= factor(data, byte_a + uint32_t(k / block));
  }
  for (int n = 0; n < op.n; ++n) {
    const uint64_t data = s.scale_b[size_t(4 * n + int(thread_b))];
    for (int k = 0; k < op.k; ++k) b[k * op.n + n] *= factor(data, byte_b + uint32_t(k / block));
  }
}

}  // namespace

std::optional<MmaSync> parse_mma_sync(std::string_view opcode) {
  if (opcode != "mma" && !opcode.starts_with("mma.")) return std::nullopt;
  const std::string whole(opcode);
  auto refuse = [&](const std::string& why) -> std::optional<MmaSync> { throw Fault(whole + ": " + why); };
  if (!opcode.starts_with("mma.sync.aligned.")) {
    if (opcode.starts_with("mma.sp")) return refuse("sparse mma (mma.sp) is not modelled by the emulator");
    return refuse("mma takes the mandatory .sync.aligned qualifiers");
  }
  MmaSync op;
  MmaSyncType types[5] = {};
  int type_count = 0, layouts = 0;
  bool shape = false, block_scale = false, scale_vec = false, popc = false, rounding = false;
  std::string_view rest = opcode.substr(std::string_view("mma.sync.aligned.").size());
  while (!rest.empty()) {
    const size_t dot = rest.find('.');
    const std::string_view t = rest.substr(0, dot);
    rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
    const TypeName* type = nullptr;
    for (const TypeName& n : type_names)
      if (n.name == t) type = &n;
    if (type) {
      if (type_count == 5) return refuse("too many types");
      types[type_count++] = type->type;
    } else if (t == "row" || t == "col") {
      if (layouts == 2) return refuse("more than two layouts");
      if (layouts++ == 0) op.a_row_major = t == "row";
      else op.b_col_major = t == "col";
    } else if (!shape && parse_shape(t, op)) {
      shape = true;
    } else if (t.starts_with("kind::") && op.kind == MmaSyncKind::plain) {
      for (const auto& [name, kind] : kind_names)
        if (t.substr(6) == name) op.kind = kind;
      if (op.kind == MmaSyncKind::plain) return refuse("unknown ." + std::string(t));
    } else if (t == "block_scale") {
      block_scale = true;
    } else if (t.starts_with("scale_vec::") && !scale_vec) {
      const std::string_view v = t.substr(11);
      op.scale_vec = v == "1X" ? 1 : v == "2X" ? 2 : v == "4X" ? 4 : 0;
      if (!op.scale_vec) return refuse("unknown ." + std::string(t));
      scale_vec = true;
    } else if (t == "satfinite") {
      op.satfinite = true;
    } else if ((t == "xor" || t == "and") && op.bit_op == MmaBitOp::none) {
      op.bit_op = t == "xor" ? MmaBitOp::bit_xor : MmaBitOp::bit_and;
    } else if (t == "popc") {
      popc = true;
    } else if (t == "rn") {
      rounding = true;
    } else if (t == "rz" || t == "rm" || t == "rp") {
      return refuse("f64 mma rounding ." + std::string(t) + " is not modelled by the emulator (only .rn)");
    } else {
      return refuse("unknown or repeated qualifier ." + std::string(t));
    }
  }
  if (!shape) return refuse("no .mMnNkK shape");
  if (layouts != 2) return refuse("mma takes .alayout.blayout (.row.col)");
  const bool scaled = op.kind == MmaSyncKind::mxf8f6f4 || op.kind == MmaSyncKind::mxf4 || op.kind == MmaSyncKind::mxf4nvf4;
  if (block_scale != scaled) return refuse(".block_scale goes with (only) kind::mxf8f6f4, kind::mxf4 and kind::mxf4nvf4");
  if (scale_vec && !block_scale) return refuse(".scale_vec needs .block_scale");
  if ((op.bit_op != MmaBitOp::none) != popc) return refuse(".xor/.and go with .popc");
  if (type_count != (scaled ? 5 : 4)) return refuse(scaled ? "needs .dtype.atype.btype.ctype.stype" : "needs .dtype.atype.btype.ctype");
  op.d = types[0], op.a = types[1], op.b = types[2], op.c = types[3];
  if (scaled) op.scale = types[4];
  if (rounding && op.a != MmaSyncType::f64) return refuse(".rn is for f64 mma");
  const std::string why = check_form(op, op.a_row_major && op.b_col_major, scale_vec);
  if (!why.empty()) return refuse(why);

  const int pa = per_register(op, op.a), pb = per_register(op, op.b);
  if (quad_pair(op)) {
    op.a_regs = 2, op.b_regs = 2;
    op.c_regs = uint8_t(8 / per_accumulator_register(op.c)), op.d_regs = uint8_t(8 / per_accumulator_register(op.d));
  } else {
    op.a_regs = uint8_t(op.m * op.k / 32 / pa), op.b_regs = uint8_t(op.n * op.k / 32 / pb);
    const int acc = op.m * op.n / 32;
    op.c_regs = uint8_t(acc / per_accumulator_register(op.c)), op.d_regs = uint8_t(acc / per_accumulator_register(op.d));
  }
  return op;
}

void mma_sync(const MmaSync& op, std::span<const uint64_t> a, std::span<const uint64_t> b, std::span<const uint64_t> c,
              std::span<uint64_t> d, const MmaScaleOperands& scales) {
  const std::span<const uint64_t> spans[3] = {a, b, c};
  const char* names[3] = {"A", "B", "C"};
  const int regs[3] = {op.a_regs, op.b_regs, op.c_regs};
  for (int x = 0; x < 3; ++x)
    if (spans[x].size() != size_t(32 * regs[x]))
      fail(op, std::string(names[x]) + " takes 32 x " + std::to_string(regs[x]) + " registers, got " + std::to_string(spans[x].size()));
  if (d.size() != size_t(32 * op.d_regs)) fail(op, "D takes 32 x " + std::to_string(op.d_regs) + " registers, got " + std::to_string(d.size()));

  const bool quad = quad_pair(op);
  const int cols = quad ? 32 : op.n, depth = quad ? 16 : op.k;
  // Every element of the (block-diagonal, for m8n8k4 f16) matrices that is read is written first:
  // the layouts are one-to-one.
  double av[16 * 256], bv[256 * 8], cv[32 * 32];
  const int pa = per_register(op, op.a), pb = per_register(op, op.b), pc = per_accumulator_register(op.c);
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < op.a_regs * pa; ++i) {
      const Position at = a_position(op, pa, lane, i);
      av[at.row * depth + at.col] = element_value(op.a, pa, a[size_t(lane * op.a_regs + i / pa)], i % pa);
    }
    for (int i = 0; i < op.b_regs * pb; ++i) {
      const Position at = b_position(op, pb, lane, i);
      bv[at.row * cols + at.col] = element_value(op.b, pb, b[size_t(lane * op.b_regs + i / pb)], i % pb);
    }
    for (int i = 0; i < op.c_regs * pc; ++i) {
      const Position at = accumulator_position(op, op.c, lane, i);
      cv[at.row * cols + at.col] = accumulator_value(op.c, c[size_t(lane * op.c_regs + i / pc)], i % pc);
    }
  }
  if (op.scale_vec) apply_scales(op, scales, av, bv);

  const int pd = per_accumulator_register(op.d);
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < op.d_regs; ++r) {
      uint64_t out = 0;
      for (int j = 0; j < pd; ++j) {
        const Position at = accumulator_position(op, op.d, lane, r * pd + j);
        const int k0 = quad ? 4 * (at.row / 8) : 0;
        const double* arow = av + at.row * depth;
        double v = cv[at.row * cols + at.col];
        if (op.d == MmaSyncType::f64) {
          for (int k = k0; k < k0 + op.k; ++k) v = std::fma(arow[k], bv[k * cols + at.col], v);
        } else if (op.bit_op == MmaBitOp::bit_xor) {
          for (int k = 0; k < op.k; ++k) v += arow[k] != bv[k * cols + at.col] ? 1 : 0;
        } else {
          for (int k = k0; k < k0 + op.k; ++k) v += arow[k] * bv[k * cols + at.col];
        }
        out |= encode_accumulator(op, v) << (16 * j);
      }
      d[size_t(lane * op.d_regs + r)] = out;
    }
  }
}

}  // namespace cutejit::emulator
