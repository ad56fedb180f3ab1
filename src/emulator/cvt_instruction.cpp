// cvt and cvt.pack: decoding the opcode against the ISA's rules for which modifiers go with
// which types, and the per-thread conversions, all built on number_formats.
#include "emulator/cvt_instruction.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "emulator/fault.hpp"
#include "emulator/ptx_text.hpp"

namespace cutejit::emulator {

namespace {

uint64_t low_bits(uint64_t v, int bits) { return bits >= 64 ? v : v & ((uint64_t(1) << bits) - 1); }

int64_t sign_extend(uint64_t v, int bits) {
  if (bits >= 64) return int64_t(v);
  const uint64_t m = uint64_t(1) << (bits - 1);
  return int64_t((low_bits(v, bits) ^ m) - m);
}

/// An integer clamped to the range of a `bits`-wide integer, in two's complement.
uint64_t saturate_integer(bool source_signed, uint64_t v, int bits, bool is_signed) {
  const int64_t smax = bits >= 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1, smin = -smax - 1;
  const uint64_t umax = bits >= 64 ? UINT64_MAX : (uint64_t(1) << bits) - 1;
  if (source_signed) {
    const int64_t s = int64_t(v);
    if (is_signed) return low_bits(uint64_t(std::clamp(s, smin, smax)), bits);
    return s < 0 ? 0 : std::min(uint64_t(s), umax);
  }
  return is_signed ? std::min(v, uint64_t(smax)) : std::min(v, umax);
}

/// The value of a float source, .ftz applied to an f32.
double float_source(const Conversion& c, NumberFormat f, uint64_t bits) {
  const double v = decode(f, bits);
  return c.ftz && f == NumberFormat::f32 ? flush_subnormal(f, v) : v;
}

uint64_t flush_f32_result(const Conversion& c, uint64_t bits) {
  return c.ftz && c.to.format == NumberFormat::f32 && (bits & 0x7f800000) == 0 ? bits & 0x80000000 : bits;
}

double clamp_unit(double v) {
  if (std::isnan(v) || v < 0) return 0.0;
  return v > 1 ? 1.0 : v;
}

uint64_t convert_scalar(const Conversion& c, std::span<const uint64_t> s) {
  const uint64_t a = low_bits(s[0], c.from.bits);
  if (!c.from.is_float && !c.to.is_float) {
    const uint64_t v = c.from.is_signed ? uint64_t(sign_extend(a, c.from.bits)) : a;
    return c.sat ? saturate_integer(c.from.is_signed, v, c.to.bits, c.to.is_signed) : low_bits(v, c.to.bits);
  }
  if (!c.to.is_float) {
    const bool nan_to_sign_bit = c.from.format == NumberFormat::f64 || c.to.bits == 64;
    return float_to_integer(float_source(c, c.from.format, a), c.rounding, c.to.bits, c.to.is_signed, nan_to_sign_bit);
  }
  if (!c.from.is_float) {
    const uint64_t bits = integer_to_float(c.to.format, a, c.from.bits, c.from.is_signed, c.rounding);
    return c.sat ? encode(c.to.format, clamp_unit(decode(c.to.format, bits))) : bits;
  }
  double v = float_source(c, c.from.format, a);
  if (c.integer_rounding) v = round_to_integral(v, c.rounding);
  if (c.sat) v = clamp_unit(v);
  const Rounding r = c.integer_rounding ? Rounding::rn : c.rounding;  // an integral value is exact
  return flush_f32_result(c, encode(c.to.format, v, r, c.satfinite, c.relu));
}

uint64_t convert_element(const Conversion& c, uint64_t bits) {
  return encode(c.to.format, float_source(c, c.from.format, bits), c.rounding, c.satfinite, c.relu);
}

/// cvt to a pair from two f32 sources: a to the upper element, b to the lower.
uint64_t convert_pair_of_f32(const Conversion& c, std::span<const uint64_t> s) {
  const int w = c.destination_bits / 2;
  return convert_element(c, low_bits(s[0], 32)) << w | convert_element(c, low_bits(s[1], 32));
}

/// cvt to a pair from one packed pair (f16x2, bf16x2), or unpacking an FP8/FP6/FP4 pair.
uint64_t convert_pair_of_pair(const Conversion& c, std::span<const uint64_t> s) {
  const int w = c.destination_bits / 2, sw = c.source_bits / 2;
  const uint64_t upper = low_bits(s[0] >> sw, sw), lower = low_bits(s[0], sw);
  if (std::max(upper, lower) >> format_bits(c.from.format))
    throw Fault("cvt from ." + std::string(name(c.from.format)) + "x2: the ISA requires each byte's top 2 bits to be zero, but the source is " +
                std::to_string(low_bits(s[0], c.source_bits)));
  return convert_element(c, upper) << w | convert_element(c, lower);
}

uint64_t convert_pack(const Conversion& c, std::span<const uint64_t> s) {
  const int n = c.to.bits;
  const uint64_t a = saturate_integer(true, uint64_t(sign_extend(s[0], 32)), n, c.to.is_signed);
  const uint64_t b = saturate_integer(true, uint64_t(sign_extend(s[1], 32)), n, c.to.is_signed);
  const uint64_t packed = low_bits(a, n) << n | low_bits(b, n);
  return c.sources == 3 ? low_bits(packed | s[2] << 2 * n, 32) : packed;
}

// ---- decoding -----------------------------------------------------------------------------------

enum class Packed : uint8_t { none, f16x2, bf16x2, e4m3x2, e5m2x2, e2m1x2, e2m3x2, e3m2x2, ue8m0x2 };

struct Token {
  std::string_view name;
  CvtType type;
  Packed packed;
};

constexpr Token type_tokens[] = {
    {"u8", {false, false, 8}, Packed::none},    {"u16", {false, false, 16}, Packed::none},
    {"u32", {false, false, 32}, Packed::none},  {"u64", {false, false, 64}, Packed::none},
    {"s8", {false, true, 8}, Packed::none},     {"s16", {false, true, 16}, Packed::none},
    {"s32", {false, true, 32}, Packed::none},   {"s64", {false, true, 64}, Packed::none},
    {"f16", {true, true, 16, NumberFormat::f16}, Packed::none},
    {"bf16", {true, true, 16, NumberFormat::bf16}, Packed::none},
    {"f32", {true, true, 32, NumberFormat::f32}, Packed::none},
    {"f64", {true, true, 64, NumberFormat::f64}, Packed::none},
    {"tf32", {true, true, 32, NumberFormat::tf32}, Packed::none},
    {"f16x2", {true, true, 32, NumberFormat::f16}, Packed::f16x2},
    {"bf16x2", {true, true, 32, NumberFormat::bf16}, Packed::bf16x2},
    {"e4m3x2", {true, true, 16, NumberFormat::e4m3}, Packed::e4m3x2},
    {"e5m2x2", {true, true, 16, NumberFormat::e5m2}, Packed::e5m2x2},
    {"e2m3x2", {true, true, 16, NumberFormat::e2m3}, Packed::e2m3x2},
    {"e3m2x2", {true, true, 16, NumberFormat::e3m2}, Packed::e3m2x2},
    {"e2m1x2", {true, true, 8, NumberFormat::e2m1}, Packed::e2m1x2},
    {"ue8m0x2", {true, false, 16, NumberFormat::ue8m0}, Packed::ue8m0x2},
};

struct Decoded {
  std::vector<const Token*> types;
  std::optional<Rounding> frnd, irnd;
  bool ftz = false, sat = false, satfinite = false, relu = false;
};

[[noreturn]] void refuse(std::string_view opcode, const std::string& why) {
  throw Fault("cvt: " + why + " in '" + std::string(opcode) + "'");
}


Decoded read_modifiers(std::string_view opcode, const std::vector<std::string_view>& parts, size_t first) {
  static constexpr std::pair<std::string_view, Rounding> frnds[] = {
      {"rn", Rounding::rn}, {"rna", Rounding::rna}, {"rz", Rounding::rz}, {"rm", Rounding::rm}, {"rp", Rounding::rp}};
  static constexpr std::pair<std::string_view, Rounding> irnds[] = {
      {"rni", Rounding::rn}, {"rzi", Rounding::rz}, {"rmi", Rounding::rm}, {"rpi", Rounding::rp}};
  Decoded d;
  for (size_t i = first; i < parts.size(); ++i) {
    std::string_view p = parts[i];
    auto is = [&](std::string_view n) { return p == n; };
    if (auto f = std::find_if(std::begin(frnds), std::end(frnds), [&](auto& e) { return e.first == p; }); f != std::end(frnds)) d.frnd = f->second;
    else if (auto g = std::find_if(std::begin(irnds), std::end(irnds), [&](auto& e) { return e.first == p; }); g != std::end(irnds)) d.irnd = g->second;
    else if (is("ftz")) d.ftz = true;
    else if (is("sat")) d.sat = true;
    else if (is("satfinite")) d.satfinite = true;
    else if (is("relu")) d.relu = true;
    else if (is("rs") || (p.size() > 2 && p.substr(p.size() - 2) == "x4")) refuse(opcode, "stochastic rounding (.rs) and x4 types are not covered by the emulated device");
    else if (auto t = std::find_if(std::begin(type_tokens), std::end(type_tokens), [&](auto& e) { return e.name == p; }); t != std::end(type_tokens)) d.types.push_back(t);
    else refuse(opcode, "unknown modifier ." + std::string(p));
  }
  if (d.frnd && d.irnd) refuse(opcode, "two rounding modifiers");
  return d;
}

Conversion decode_pack(std::string_view opcode, const std::vector<std::string_view>& parts) {
  static constexpr std::pair<std::string_view, CvtType> narrow[] = {
      {"u16", {false, false, 16}}, {"s16", {false, true, 16}}, {"u8", {false, false, 8}}, {"s8", {false, true, 8}},
      {"u4", {false, false, 4}},   {"s4", {false, true, 4}},   {"u2", {false, false, 2}}, {"s2", {false, true, 2}}};
  if (parts.size() < 5 || parts[2] != "sat") refuse(opcode, "cvt.pack needs .sat");
  auto t = std::find_if(std::begin(narrow), std::end(narrow), [&](auto& e) { return e.first == parts[3]; });
  if (t == std::end(narrow) || parts[4] != "s32") refuse(opcode, "cvt.pack converts .s32 to .u16/.s16/.u8/.s8/.u4/.s4/.u2/.s2");
  const bool wide = t->second.bits == 16;
  if (parts.size() != (wide ? 5u : 6u) || (!wide && parts[5] != "b32")) refuse(opcode, wide ? "cvt.pack to 16 bits takes no .cType" : "cvt.pack to 8 bits or fewer needs .b32 for c");
  Conversion c;
  c.to = t->second, c.from = {false, true, 32};
  c.sat = true, c.destination_bits = 32, c.source_bits = 32, c.sources = wide ? 2 : 3;
  c.convert = convert_pack;
  return c;
}

bool lossless(const CvtType& to, const CvtType& from) {
  if (to.format == from.format) return true;
  if (to.format == NumberFormat::f64) return true;
  return to.format == NumberFormat::f32 && (from.format == NumberFormat::f16 || from.format == NumberFormat::bf16);
}

Conversion decode_packed(std::string_view opcode, const Decoded& d, const Token& to, const Token& from) {
  Conversion c;
  c.to = to.type, c.from = from.type, c.relu = d.relu, c.satfinite = d.satfinite;
  c.destination_bits = to.type.bits;
  if (d.ftz || d.sat || d.irnd) refuse(opcode, ".ftz, .sat and integer rounding do not apply to packed conversions");
  if (!d.frnd) refuse(opcode, "a rounding modifier is mandatory");
  c.rounding = *d.frnd;
  auto need = [&](bool ok, const char* why) { if (!ok) refuse(opcode, why); };
  const Packed t = to.packed, f = from.packed;
  const bool fp8 = t == Packed::e4m3x2 || t == Packed::e5m2x2;
  const bool fp6_fp4 = t == Packed::e2m1x2 || t == Packed::e2m3x2 || t == Packed::e3m2x2;
  if (from.type.format == NumberFormat::f32 && f == Packed::none) {
    c.sources = 2, c.source_bits = 32, c.convert = convert_pair_of_f32;
    if (t == Packed::f16x2 || t == Packed::bf16x2) {
      need(c.rounding == Rounding::rn || c.rounding == Rounding::rz, "f16x2/bf16x2 from f32 round .rn or .rz");
    } else if (fp8 || fp6_fp4) {
      need(c.rounding == Rounding::rn, "FP8/FP6/FP4 conversions round .rn");
      need(c.satfinite, ".satfinite is mandatory for FP8/FP6/FP4 destinations");
    } else if (t == Packed::ue8m0x2) {
      need(c.rounding == Rounding::rz || c.rounding == Rounding::rp, "ue8m0x2 conversions round .rz or .rp");
      need(!c.relu, ".relu does not apply to ue8m0x2 from f32");
    } else {
      refuse(opcode, "no conversion between these types");
    }
    return c;
  }
  c.sources = 1, c.source_bits = from.type.bits, c.convert = convert_pair_of_pair;
  if (fp8 && (f == Packed::f16x2 || f == Packed::bf16x2)) {
    need(c.rounding == Rounding::rn && c.satfinite, "FP8 pairs from f16x2/bf16x2 need .rn.satfinite");
  } else if (t == Packed::ue8m0x2 && f == Packed::bf16x2) {
    need(c.rounding == Rounding::rz || c.rounding == Rounding::rp, "ue8m0x2 conversions round .rz or .rp");
  } else if (t == Packed::f16x2 && f != Packed::none && f != Packed::f16x2 && f != Packed::bf16x2 && f != Packed::ue8m0x2) {
    need(c.rounding == Rounding::rn && !c.satfinite, "unpacking to f16x2 takes .rn{.relu}");
  } else if (t == Packed::bf16x2 && f == Packed::ue8m0x2) {
    need(c.rounding == Rounding::rn && !c.satfinite && !c.relu, "cvt.rn.bf16x2.ue8m0x2 takes no other modifier");
  } else {
    refuse(opcode, "no conversion between these types");
  }
  return c;
}

Conversion decode_scalar(std::string_view opcode, const Decoded& d, const CvtType& to, const CvtType& from) {
  Conversion c;
  c.to = to, c.from = from, c.ftz = d.ftz, c.sat = d.sat, c.satfinite = d.satfinite, c.relu = d.relu;
  c.destination_bits = to.bits, c.destination_signed = !to.is_float && to.is_signed;
  c.source_bits = from.bits, c.sources = 1, c.convert = convert_scalar;
  auto need = [&](bool ok, const char* why) { if (!ok) refuse(opcode, why); };
  const bool f32_involved = (to.is_float && to.format == NumberFormat::f32) || (from.is_float && from.format == NumberFormat::f32);
  need(!d.ftz || f32_involved, ".ftz needs an .f32 source or destination");
  need(!d.sat || !to.is_float || to.format == NumberFormat::f16 || to.format == NumberFormat::f32 || to.format == NumberFormat::f64,
       ".sat applies to integer, .f16, .f32 and .f64 destinations");
  if (to.format == NumberFormat::tf32 || from.format == NumberFormat::tf32) {
    need(to.format == NumberFormat::tf32 && from.is_float && from.format == NumberFormat::f32, "tf32 is converted to only, from f32");
    need(d.frnd && (*d.frnd == Rounding::rna || *d.frnd == Rounding::rn || *d.frnd == Rounding::rz), "cvt to tf32 rounds .rna, .rn or .rz");
    need(!d.relu || *d.frnd != Rounding::rna, ".relu does not go with .rna");
    need(!d.ftz && !d.sat, "cvt to tf32 takes neither .ftz nor .sat");
    c.rounding = *d.frnd;
    return c;
  }
  if (d.relu || d.satfinite) {
    need(to.is_float && (to.format == NumberFormat::f16 || to.format == NumberFormat::bf16) && from.is_float &&
             from.format == NumberFormat::f32,
         ".relu and .satfinite apply to f16/bf16 from f32");
    need(d.frnd && (*d.frnd == Rounding::rn || *d.frnd == Rounding::rz), ".relu/.satfinite conversions round .rn or .rz");
    need(!d.ftz && !d.sat, ".relu/.satfinite conversions take neither .ftz nor .sat");
  }
  need(!d.frnd || *d.frnd != Rounding::rna, ".rna is for tf32 only");
  if (!to.is_float && !from.is_float) {
    need(!d.frnd && !d.irnd, "integer to integer conversions take no rounding modifier");
  } else if (!to.is_float) {
    need(d.irnd.has_value(), "float to integer conversions need .rni, .rzi, .rmi or .rpi");
    c.rounding = *d.irnd, c.integer_rounding = true;
  } else if (!from.is_float) {
    need(d.frnd.has_value(), "integer to float conversions need .rn, .rz, .rm or .rp");
    c.rounding = *d.frnd;
  } else if (d.irnd) {
    need(to.format == from.format, "integer rounding of a float needs the same source and destination type");
    c.rounding = *d.irnd, c.integer_rounding = true;
  } else {
    need(d.frnd || lossless(to, from), "a narrowing float conversion needs .rn, .rz, .rm or .rp");
    c.rounding = d.frnd.value_or(Rounding::rn);
  }
  return c;
}

}  // namespace

std::optional<Conversion> parse_cvt(std::string_view opcode) {
  const std::vector<std::string_view> parts = split_opcode(opcode);
  if (parts[0] != "cvt") return std::nullopt;
  if (parts.size() > 1 && parts[1] == "pack") return decode_pack(opcode, parts);
  const Decoded d = read_modifiers(opcode, parts, 1);
  if (d.types.size() != 2) refuse(opcode, "cvt names a destination and a source type");
  const Token& to = *d.types[0];
  const Token& from = *d.types[1];
  if (to.packed != Packed::none || from.packed != Packed::none) return decode_packed(opcode, d, to, from);
  return decode_scalar(opcode, d, to.type, from.type);
}

}  // namespace cutejit::emulator
