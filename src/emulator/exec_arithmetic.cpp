// Integer and bitwise instructions, mov, selp and setp (setp compares floats too), per the
// PTX ISA's "Integer Arithmetic", "Logic and Shift", "Comparison and Selection" and "Data
// Movement" sections. Division by zero, which the ISA leaves unspecified, gives all ones (the
// unsigned maximum, or -1), as the hardware does.
#include <bit>
#include <cmath>

#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

namespace {

enum IntOp : uint16_t {
  op_add, op_sub, op_mul_lo, op_mul_hi, op_mul_wide, op_mad_lo, op_mad_hi, op_mad_wide, op_div, op_rem, op_abs, op_neg,
  op_min, op_max, op_and, op_or, op_xor, op_not, op_cnot, op_shl, op_shr, op_bfe, op_bfi, op_brev, op_clz, op_popc,
  op_bfind, op_prmt, op_lop3, op_shf_l, op_shf_r, op_mul24_lo, op_mad24_lo, op_sad,
};
constexpr uint32_t flag_sat = 1, flag_clamp = 2, flag_shiftamt = 4;

uint64_t mul_hi(uint64_t a, uint64_t b, int bits, bool sign) {
  if (bits <= 32) {
    uint64_t p = sign ? uint64_t(sign_extend(a, bits) * sign_extend(b, bits)) : mask_bits(a, bits) * mask_bits(b, bits);
    return p >> bits;
  }
  if (sign) return uint64_t((__int128(int64_t(a)) * __int128(int64_t(b))) >> 64);
  return uint64_t((unsigned __int128)a * (unsigned __int128)b >> 64);
}

uint64_t integer(const Instruction& in, ExecContext& c, int l) {
  const auto& o = in.operands;
  int bits = type_bits(in.type);
  bool sign = is_signed(in.type);
  auto src = [&](size_t i) { return c.get(o[i], l); };
  uint64_t a = o.size() > 1 ? src(1) : 0;
  switch (IntOp(in.op)) {
    case op_add:
      if (in.flags & flag_sat) {
        int64_t r = sign_extend(a, 32) + sign_extend(src(2), 32);
        return uint64_t(std::clamp<int64_t>(r, INT32_MIN, INT32_MAX));
      }
      return a + src(2);
    case op_sub:
      if (in.flags & flag_sat) {
        int64_t r = sign_extend(a, 32) - sign_extend(src(2), 32);
        return uint64_t(std::clamp<int64_t>(r, INT32_MIN, INT32_MAX));
      }
      return a - src(2);
    case op_mul_lo: return a * src(2);
    case op_mul_hi: return mul_hi(a, src(2), bits, sign);
    case op_mul_wide:
      return sign ? uint64_t(sign_extend(a, bits) * sign_extend(src(2), bits)) : mask_bits(a, bits) * mask_bits(src(2), bits);
    case op_mad_lo: return a * src(2) + src(3);
    case op_mad_hi: return mul_hi(a, src(2), bits, sign) + src(3);
    case op_mad_wide:
      return (sign ? uint64_t(sign_extend(a, bits) * sign_extend(src(2), bits)) : mask_bits(a, bits) * mask_bits(src(2), bits)) + src(3);
    case op_mul24_lo: case op_mad24_lo: {
      auto low24 = [&](uint64_t x) { return sign ? uint64_t(sign_extend(x, 24)) : mask_bits(x, 24); };
      uint64_t p = low24(a) * low24(src(2));
      return in.op == op_mad24_lo ? p + src(3) : p;
    }
    case op_div: case op_rem: {
      uint64_t b = src(2);
      if (mask_bits(b, bits) == 0) return in.op == op_div ? ~uint64_t(0) : a;
      if (sign) {
        int64_t x = sign_extend(a, bits), y = sign_extend(b, bits);
        if (y == -1) return in.op == op_div ? uint64_t(-x) : 0;  // INT_MIN / -1 wraps
        return uint64_t(in.op == op_div ? x / y : x % y);
      }
      uint64_t x = mask_bits(a, bits), y = mask_bits(b, bits);
      return in.op == op_div ? x / y : x % y;
    }
    case op_sad: {
      uint64_t b = src(2);
      uint64_t d = sign ? uint64_t(std::llabs(sign_extend(a, bits) - sign_extend(b, bits)))
                        : (mask_bits(a, bits) > mask_bits(b, bits) ? mask_bits(a, bits) - mask_bits(b, bits) : mask_bits(b, bits) - mask_bits(a, bits));
      return d + src(3);
    }
    case op_abs: return uint64_t(std::llabs(sign_extend(a, bits)));
    case op_neg: return uint64_t(0) - a;
    case op_min: case op_max: {
      uint64_t b = src(2);
      bool less = sign ? sign_extend(a, bits) < sign_extend(b, bits) : mask_bits(a, bits) < mask_bits(b, bits);
      return (in.op == op_min) == less ? a : b;
    }
    case op_and: return in.type == Type::pred ? uint64_t((a != 0) && (src(2) != 0)) : a & src(2);
    case op_or: return in.type == Type::pred ? uint64_t((a != 0) || (src(2) != 0)) : a | src(2);
    case op_xor: return in.type == Type::pred ? uint64_t((a != 0) != (src(2) != 0)) : a ^ src(2);
    case op_not: return in.type == Type::pred ? uint64_t(a == 0) : ~a;
    case op_cnot: return uint64_t(mask_bits(a, bits) == 0);
    case op_shl: {
      uint64_t s = mask_bits(src(2), 32);
      return s >= uint64_t(bits) ? 0 : a << s;
    }
    case op_shr: {
      uint64_t s = mask_bits(src(2), 32);
      if (sign) return uint64_t(sign_extend(a, bits) >> std::min<uint64_t>(s, uint64_t(bits - 1)));
      return s >= uint64_t(bits) ? 0 : mask_bits(a, bits) >> s;
    }
    case op_bfe: {
      uint64_t pos = src(2) & 0xff, len = src(3) & 0xff;
      if (len == 0) return 0;
      uint64_t v = mask_bits(a, bits);
      // Bits of the field past the register's msb read as the sign bit, as the bits above it do.
      uint64_t take = pos >= uint64_t(bits) ? 0 : std::min<uint64_t>(len, uint64_t(bits) - pos);
      uint64_t field = take ? mask_bits(v >> pos, int(take)) : 0;
      bool sbit = sign && (v >> std::min<uint64_t>(pos + len - 1, uint64_t(bits - 1))) & 1;
      if (sbit && take < uint64_t(bits)) field |= ~uint64_t(0) << take;
      return field;
    }
    case op_bfi: {
      uint64_t b = src(2), pos = src(3) & 0xff, len = src(4) & 0xff;
      if (len == 0 || pos >= uint64_t(bits)) return b;
      uint64_t m = mask_bits(~uint64_t(0), int(std::min<uint64_t>(len, uint64_t(bits)))) << pos;
      return (b & ~m) | ((a << pos) & m);
    }
    case op_brev: {
      uint64_t r = 0, v = mask_bits(a, bits);
      for (int i = 0; i < bits; ++i) r |= ((v >> i) & 1) << (bits - 1 - i);
      return r;
    }
    case op_clz: return bits == 32 ? uint64_t(std::countl_zero(uint32_t(a))) : uint64_t(std::countl_zero(a));
    case op_popc: return uint64_t(std::popcount(mask_bits(a, bits)));
    case op_bfind: {
      uint64_t v = mask_bits(a, bits);
      if (sign && sign_extend(a, bits) < 0) v = mask_bits(~v, bits);
      if (v == 0) return 0xffffffffu;
      uint64_t pos = uint64_t(63 - std::countl_zero(v));
      return (in.flags & flag_shiftamt) ? uint64_t(bits - 1) - pos : pos;
    }
    case op_prmt: {
      uint64_t b = src(2), sel = src(3);
      uint64_t bytes = (mask_bits(b, 32) << 32) | mask_bits(a, 32);
      uint32_t r = 0;
      for (int i = 0; i < 4; ++i) {
        uint32_t s = uint32_t(sel >> (4 * i)) & 0xf;
        uint32_t byte = uint32_t(bytes >> (8 * (s & 7))) & 0xff;
        if (s & 8) byte = (byte & 0x80) ? 0xff : 0;
        r |= byte << (8 * i);
      }
      return r;
    }
    case op_lop3: {
      uint64_t b = src(2), cc = src(3), lut = src(4) & 0xff, r = 0;
      for (int i = 0; i < bits; ++i) {
        int idx = int(((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((cc >> i) & 1));
        r |= ((lut >> idx) & 1) << i;
      }
      return r;
    }
    case op_shf_l: case op_shf_r: {
      uint64_t hi = src(2), n = src(3) & 0xffffffffu;
      n = (in.flags & flag_clamp) ? std::min<uint64_t>(n, 32) : n & 31;
      uint64_t both = (mask_bits(hi, 32) << 32) | mask_bits(a, 32);
      return in.op == op_shf_l ? (both << n) >> 32 : both >> n;
    }
  }
  return 0;
}

void exec_integer(const Instruction& in, ExecContext& c) {
  int bits = type_bits(in.type);
  if (in.op == op_mul_wide || in.op == op_mad_wide) bits *= 2;
  if (in.op == op_bfind || in.op == op_clz || in.op == op_popc) bits = 32;
  c.each(c.active, [&](int l) { c.set(in.operands[0], l, integer(in, c, l), bits); });
}

// mov: a register, an immediate or address, a special register; or packing and unpacking
// vectors of narrower registers ({lo, hi}).
void exec_mov(const Instruction& in, ExecContext& c) {
  const Operand& d = in.operands[0];
  const Operand& s = in.operands[1];
  int bits = type_bits(in.type);
  if (bits == 128) {  // a .b128 register is two slots, low half first
    c.each(c.active, [&](int l) {
      unsigned __int128 v = 0;
      if (s.kind == Operand::Kind::vector) {
        int part = 128 / int(s.count);
        for (uint32_t i = 0; i < s.count; ++i) v |= (unsigned __int128)mask_bits(c.get(c.element(s, i), l), part) << (part * int(i));
      } else {
        if (s.kind != Operand::Kind::reg) throw Fault("mov.b128 from something other than a register or a vector");
        v = (unsigned __int128)c.warp.reg(s.reg + 1, l) << 64 | c.warp.reg(s.reg, l);
      }
      if (d.kind == Operand::Kind::vector) {
        int part = 128 / int(d.count);
        for (uint32_t i = 0; i < d.count; ++i) c.set(c.element(d, i), l, uint64_t(v >> (part * int(i))), part);
      } else {
        if (d.kind != Operand::Kind::reg) throw Fault("mov.b128 into something other than a register or a vector");
        c.warp.reg(d.reg, l) = uint64_t(v), c.warp.reg(d.reg + 1, l) = uint64_t(v >> 64);
      }
    });
    return;
  }
  c.each(c.active, [&](int l) {
    if (s.kind == Operand::Kind::vector) {
      uint64_t v = 0;
      int part = bits / int(s.count);
      for (uint32_t i = 0; i < s.count; ++i) v |= mask_bits(c.get(c.element(s, i), l), part) << (part * int(i));
      c.set(d, l, v, bits);
    } else if (d.kind == Operand::Kind::vector) {
      uint64_t v = c.get(s, l);
      int part = bits / int(d.count);
      for (uint32_t i = 0; i < d.count; ++i) c.set(c.element(d, i), l, v >> (part * int(i)), part);
    } else {
      c.set(d, l, c.get(s, l), bits);
    }
  });
}

void exec_selp(const Instruction& in, ExecContext& c) {
  c.each(c.active, [&](int l) {
    c.set(in.operands[0], l, c.get(in.operands[3], l) ? c.get(in.operands[1], l) : c.get(in.operands[2], l), type_bits(in.type));
  });
}

enum Cmp : uint16_t { eq, ne, lt, le, gt, ge, lo, ls, hi, hs, equ, neu, ltu, leu, gtu, geu, num, nan };
enum BoolOp : uint32_t { bool_none, bool_and, bool_or, bool_xor };
constexpr uint32_t flag_setp_ftz = 4;

bool compare(Cmp op, Type t, uint64_t a, uint64_t b, bool ftz) {
  if (is_float(t)) {
    double x = decode(format_of(t), a), y = decode(format_of(t), b);
    if (ftz) {  // .ftz: subnormal f32 and f16 inputs compare as zeros of their sign
      double smallest = t == Type::f16 ? 0x1p-14 : 0x1p-126;
      if (std::fabs(x) < smallest) x = std::copysign(0.0, x);
      if (std::fabs(y) < smallest) y = std::copysign(0.0, y);
    }
    bool unordered = std::isnan(x) || std::isnan(y);
    switch (op) {
      case eq: return !unordered && x == y;
      case ne: return !unordered && x != y;
      case lt: return !unordered && x < y;
      case le: return !unordered && x <= y;
      case gt: return !unordered && x > y;
      case ge: return !unordered && x >= y;
      case equ: return unordered || x == y;
      case neu: return unordered || x != y;
      case ltu: return unordered || x < y;
      case leu: return unordered || x <= y;
      case gtu: return unordered || x > y;
      case geu: return unordered || x >= y;
      case num: return !unordered;
      case nan: return unordered;
      default: return false;
    }
  }
  int bits = type_bits(t);
  if (is_signed(t) && op <= ge) {
    int64_t x = sign_extend(a, bits), y = sign_extend(b, bits);
    switch (op) {
      case eq: return x == y;
      case ne: return x != y;
      case lt: return x < y;
      case le: return x <= y;
      case gt: return x > y;
      default: return x >= y;
    }
  }
  uint64_t x = mask_bits(a, bits), y = mask_bits(b, bits);
  switch (op) {
    case eq: return x == y;
    case ne: return x != y;
    case lt: case lo: return x < y;
    case le: case ls: return x <= y;
    case gt: case hi: return x > y;
    default: return x >= y;
  }
}

void exec_setp(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  bool pair = in.flags & (1u << 31);
  size_t a = pair ? 2 : 1;
  BoolOp bop = BoolOp(in.flags & 3);
  bool ftz = in.flags & flag_setp_ftz;
  // f16x2 and bf16x2 compare each half: p from the low halves, q from the high ones.
  bool halves = in.type == Type::f16x2 || in.type == Type::bf16x2;
  Type half = in.type == Type::f16x2 ? Type::f16 : Type::bf16;
  c.each(c.active, [&](int l) {
    uint64_t x = c.get(o[a], l), y = c.get(o[a + 1], l);
    bool r = halves ? compare(Cmp(in.op), half, x & 0xffff, y & 0xffff, ftz) : compare(Cmp(in.op), in.type, x, y, ftz);
    bool q = halves ? compare(Cmp(in.op), half, (x >> 16) & 0xffff, (y >> 16) & 0xffff, ftz) : !r;
    if (bop != bool_none) {
      bool p = c.get(o[a + 2], l) != 0;
      auto combine = [&](bool x) { return bop == bool_and ? x && p : bop == bool_or ? x || p : x != p; };
      r = combine(r), q = combine(q);
    }
    c.set(o[0], l, r, 1);
    if (pair) c.set(o[1], l, q, 1);
  });
}

// Extended precision (the ISA's "Extended-Precision Integer Arithmetic"): add.cc / sub.cc /
// mad.lo.cc / mad.hi.cc write the carry (for sub, the borrow) of a 32- or 64-bit operation to
// the thread's condition code; addc / subc / madc read it in, and with .cc write it again.
enum CarryOp : uint16_t { c_add, c_sub, c_mad_lo, c_mad_hi };
constexpr uint32_t flag_carry_in = 8, flag_carry_out = 16;

void exec_carry(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  int bits = type_bits(in.type);
  bool sign = is_signed(in.type);
  c.each(c.active, [&](int l) {
    unsigned __int128 a = mask_bits(c.get(o[1], l), bits), b = mask_bits(c.get(o[2], l), bits);
    unsigned __int128 cin = (in.flags & flag_carry_in) ? c.warp.carry[l] : 0;
    unsigned __int128 r = 0;
    switch (CarryOp(in.op)) {
      case c_add: r = a + b + cin; break;
      case c_sub: r = a - b - cin; break;
      case c_mad_lo: case c_mad_hi: {
        uint64_t x = c.get(o[1], l), y = c.get(o[2], l);
        uint64_t p = in.op == c_mad_lo ? mask_bits(x * y, bits) : mask_bits(mul_hi(x, y, bits, sign), bits);
        r = (unsigned __int128)p + mask_bits(c.get(o[3], l), bits) + cin;
        break;
      }
    }
    if (in.flags & flag_carry_out) c.warp.carry[l] = uint8_t((r >> bits) & 1);
    c.set(o[0], l, uint64_t(r), bits);
  });
}

}  // namespace

bool decode_arithmetic(Instruction& in, const Opcode& op) {
  std::string_view n = op[0];
  if (n == "mov") return bind(in, exec_mov);
  if (n == "selp") return bind(in, exec_selp);
  if (n == "setp") {
    static const std::pair<std::string_view, Cmp> cmps[] = {{"eq", eq}, {"ne", ne}, {"lt", lt}, {"le", le}, {"gt", gt}, {"ge", ge},
                                                            {"lo", lo}, {"ls", ls}, {"hi", hi}, {"hs", hs}, {"equ", equ}, {"neu", neu},
                                                            {"ltu", ltu}, {"leu", leu}, {"gtu", gtu}, {"geu", geu}, {"num", num}, {"nan", nan}};
    for (auto& [name, cmp] : cmps)
      if (op.size() > 1 && op[1] == name) {
        in.flags |= has(op, "and") ? bool_and : has(op, "or") ? bool_or : has(op, "xor") ? bool_xor : bool_none;
        if (has(op, "ftz")) in.flags |= flag_setp_ftz;
        return bind(in, exec_setp, cmp);
      }
    return false;
  }
  if (is_float(in.type)) return false;
  if (in.type == Type::none) return false;  // a packed type (u16x2, f32x2…) this family does not compute
  if (has(op, "sat")) in.flags |= flag_sat;
  if (has(op, "clamp")) in.flags |= flag_clamp;
  if (has(op, "shiftamt")) in.flags |= flag_shiftamt;
  if (has(op, "cc") || n == "addc" || n == "subc" || n == "madc") {
    if (has(op, "cc")) in.flags |= flag_carry_out;
    if (n == "addc" || n == "subc" || n == "madc") in.flags |= flag_carry_in;
    if (n == "add" || n == "addc") return bind(in, exec_carry, c_add);
    if (n == "sub" || n == "subc") return bind(in, exec_carry, c_sub);
    if ((n == "mad" || n == "madc") && has(op, "lo")) return bind(in, exec_carry, c_mad_lo);
    if ((n == "mad" || n == "madc") && has(op, "hi")) return bind(in, exec_carry, c_mad_hi);
    return false;
  }
  struct Name { std::string_view name; IntOp op; };
  static const Name plain[] = {{"add", op_add}, {"sub", op_sub}, {"div", op_div}, {"rem", op_rem}, {"abs", op_abs}, {"neg", op_neg},
                               {"min", op_min}, {"max", op_max}, {"and", op_and}, {"or", op_or}, {"xor", op_xor}, {"not", op_not},
                               {"cnot", op_cnot}, {"shl", op_shl}, {"shr", op_shr}, {"bfe", op_bfe}, {"bfi", op_bfi},
                               {"brev", op_brev}, {"clz", op_clz}, {"popc", op_popc}, {"bfind", op_bfind}, {"prmt", op_prmt},
                               {"lop3", op_lop3}, {"sad", op_sad}};
  if (n == "prmt" && op.size() > 2 && op[1] != "b32") return false;  // the .f4e/.b4e/… modes
  for (const Name& p : plain)
    if (n == p.name) return bind(in, exec_integer, p.op);
  if (n == "mul" || n == "mad") {
    bool mad = n == "mad";
    if (has(op, "hi")) return bind(in, exec_integer, mad ? op_mad_hi : op_mul_hi);
    if (has(op, "wide")) return bind(in, exec_integer, mad ? op_mad_wide : op_mul_wide);
    return bind(in, exec_integer, mad ? op_mad_lo : op_mul_lo);
  }
  if ((n == "mul24" || n == "mad24") && has(op, "lo")) return bind(in, exec_integer, n == "mul24" ? op_mul24_lo : op_mad24_lo);
  if (n == "shf") return bind(in, exec_integer, has(op, "l") ? op_shf_l : op_shf_r);
  return false;
}

}  // namespace cutejit::emulator
