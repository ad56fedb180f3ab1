#include "emulator/wgmma.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

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

// ---- number formats (private: the emulator's shared decoders are another module's) ----

double element_value(WgmmaType t, uint32_t raw) {
  switch (t) {
    case WgmmaType::f16: return decode(NumberFormat::f16, raw & 0xFFFFu);
    case WgmmaType::bf16: return decode(NumberFormat::bf16, raw & 0xFFFFu);
    case WgmmaType::tf32: return decode(NumberFormat::tf32, raw);
    case WgmmaType::e4m3: return decode(NumberFormat::e4m3, raw & 0xFFu);
    case WgmmaType::e5m2: return decode(NumberFormat::e5m2, raw & 0xFFu);
    case WgmmaType::u8: return double(raw & 0xFFu);
    case WgmmaType::s8: return double(int8_t(raw & 0xFFu));
  }
  return 0;
}

uint32_t type_bits(WgmmaType t) {
  switch (t) {
    case WgmmaType::f16:
    case WgmmaType::bf16: return 16;
    case WgmmaType::tf32: return 32;
    default: return 8;
  }
}

const char* type_name(WgmmaType t) {
  static const char* names[] = {"f16", "bf16", "tf32", "e4m3", "e5m2", "u8", "s8"};
  return names[int(t)];
}

bool is_fp8(WgmmaType t) { return t == WgmmaType::e4m3 || t == WgmmaType::e5m2; }
bool is_integer(WgmmaType t) { return t == WgmmaType::u8 || t == WgmmaType::s8; }

// ---- operands ----

/// `rows` x K values of an operand in shared memory, row-major (row = M of A, N of B) into `out`.
void load_shared_operand(Memory& mem, uint64_t desc, bool mn_major, WgmmaType t, double scale, uint32_t rows, uint32_t k,
                         double* out) {
  const WgmmaMatrixDescriptor d = decode_wgmma_descriptor(desc);
  const uint32_t bytes = type_bits(t) / 8, per = 16 / bytes;
  uint8_t chunk[16];
  auto element = [&](uint32_t e) {
    uint32_t raw = 0;
    std::memcpy(&raw, chunk + e * bytes, bytes);
    return scale * element_value(t, raw);
  };
  if (!mn_major) {
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t c = 0; c < k; c += per) {
        mem.read(wgmma_chunk_address(d, false, r, c, per), chunk, 16);
        for (uint32_t e = 0; e < per; ++e) out[r * k + c + e] = element(e);
      }
    return;
  }
  for (uint32_t kk = 0; kk < k; ++kk)
    for (uint32_t g = 0; g < rows; g += per) {
      mem.read(wgmma_chunk_address(d, true, g, kk, per), chunk, 16);
      for (uint32_t e = 0; e < per; ++e) out[(g + e) * k + kk] = element(e);
    }
}

/// A (64 x K) from the warpgroup's registers by the ISA's A fragment (see the header).
void load_register_a(std::span<const uint32_t> regs, WgmmaType t, double scale, uint32_t k, double* out) {
  const uint32_t bits = type_bits(t), p = 32 / bits;
  const uint32_t mask = bits == 32 ? ~0u : (1u << bits) - 1;
  for (uint32_t th = 0; th < 128; ++th) {
    const uint32_t w = th / 32, g = th % 32 / 4, tq = th % 4;
    for (uint32_t i = 0; i < 4 * p; ++i) {
      const uint32_t raw = regs[th * wgmma_a_registers + i / p] >> (i % p * bits) & mask;
      const uint32_t row = 16 * w + g + 8 * (i / p % 2), col = p * tq + i % p + 4 * p * (i / (2 * p));
      out[row * k + col] = scale * element_value(t, raw);
    }
  }
}

void check_immediates(const Wgmma& op, const WgmmaOperands& x) {
  const bool half = op.a == WgmmaType::f16 || op.a == WgmmaType::bf16;
  const std::string form = std::string("wgmma.mma_async .") + type_name(op.a) + "." + type_name(op.b);
  if (is_integer(op.a)) {
    if (x.scale_a != 1 || x.scale_b != 1) throw Fault(form + " has no imm-scale-a / imm-scale-b (integer MMAs do not negate)");
  } else if ((x.scale_a != 1 && x.scale_a != -1) || (x.scale_b != 1 && x.scale_b != -1)) {
    throw Fault(form + ": imm-scale-a / imm-scale-b are 1 or -1, not " + std::to_string(x.scale_a) + " / " + std::to_string(x.scale_b));
  }
  if ((x.transpose_a || x.transpose_b) && !half)
    throw Fault(form + ": imm-trans-a / imm-trans-b exist only for .f16 and .bf16 operands");
  if (x.transpose_a && x.a_in_registers) throw Fault(form + ": A from registers has no imm-trans-a (it is not read from shared memory)");
}

}  // namespace

WgmmaMatrixDescriptor decode_wgmma_descriptor(uint64_t bits) {
  const uint64_t defined = 0x3FFFull | 0x3FFFull << 16 | 0x3FFFull << 32 | 0x7ull << 49 | 0x3ull << 62;
  if (bits & ~defined)
    throw Fault("wgmma matrix descriptor " + hex(bits) + " sets bits " + hex(bits & ~defined) +
                " outside its fields (start address 0-13, LBO 16-29, SBO 32-45, base offset 49-51, swizzle 62-63)");
  WgmmaMatrixDescriptor d;
  d.start_address = uint32_t(field(bits, 0, 14)) << 4;
  d.leading_byte_offset = uint32_t(field(bits, 16, 14)) << 4;
  d.stride_byte_offset = uint32_t(field(bits, 32, 14)) << 4;
  d.base_offset = uint32_t(field(bits, 49, 3));
  d.swizzle = WgmmaSwizzle(field(bits, 62, 2));
  return d;
}

uint32_t wgmma_chunk_address(const WgmmaMatrixDescriptor& d, bool mn_major, uint32_t mn, uint32_t k, uint32_t per_chunk) {
  if (d.base_offset != 0)
    throw Fault("wgmma matrix descriptor with base offset " + std::to_string(d.base_offset) +
                ": swizzle patterns that do not start on their own boundary are not modelled by the emulator");
  // 16-byte chunks per swizzle row: 1 (no swizzle), 2, 4 or 8.
  const uint32_t w = d.swizzle == WgmmaSwizzle::none ? 1 : d.swizzle == WgmmaSwizzle::b32 ? 2 : d.swizzle == WgmmaSwizzle::b64 ? 4 : 8;
  const uint32_t lbo = d.leading_byte_offset, sbo = d.stride_byte_offset;
  uint32_t offset;
  if (!mn_major) {
    const uint32_t chunk = k / per_chunk;
    offset = (mn % 8) * 16 * w + (mn / 8) * sbo + (w == 1 ? chunk * lbo : chunk * 16);
  } else {
    const uint32_t chunk = mn / per_chunk;
    offset = w == 1 ? chunk * sbo + (k % 8) * 16 + (k / 8) * lbo
                    : (chunk % w) * 16 + (chunk / w) * lbo + (k % 8) * 16 * w + (k / 8) * sbo;
  }
  const uint32_t a = d.start_address + offset;
  return a ^ ((a >> 7 & (w - 1)) << 4);
}

Wgmma parse_wgmma(std::string_view opcode) {
  const std::string op(opcode);
  if (!opcode.starts_with("wgmma.mma_async.")) throw Fault("not a wgmma.mma_async opcode: " + op);
  static const char* type_names[] = {"f16", "bf16", "tf32", "e4m3", "e5m2", "u8", "s8"};
  Wgmma w;
  bool sync = false, aligned = false, shape = false;
  int types = 0;
  WgmmaType operand[2] = {WgmmaType::f16, WgmmaType::f16};
  for (size_t pos = 16; pos <= opcode.size();) {
    const size_t end = std::min(opcode.find('.', pos), opcode.size());
    const std::string_view q = opcode.substr(pos, end - pos);
    pos = end + 1;
    unsigned m = 0, n = 0, k = 0;
    char tail = 0;
    if (q == "sync") sync = true;
    else if (q == "aligned") aligned = true;
    else if (q == "satfinite") w.satfinite = true;
    else if (q == "sp" || q == "b1") throw Fault(op + ": ." + std::string(q) + " wgmma is not modelled by the emulator");
    else if (std::sscanf(std::string(q).c_str(), "m%un%uk%u%c", &m, &n, &k, &tail) == 3) {
      if (m != 64) throw Fault(op + ": wgmma's M is 64, not " + std::to_string(m));
      w.n = n, w.k = k, shape = true;
    } else if (types == 0 && (q == "f32" || q == "f16" || q == "s32")) {
      w.d = q == "f32" ? WgmmaAccumulator::f32 : q == "f16" ? WgmmaAccumulator::f16 : WgmmaAccumulator::s32;
      ++types;
    } else {
      bool known = false;
      for (int t = 0; t < 7 && types > 0 && types < 3; ++t)
        if (q == type_names[t]) operand[types - 1] = WgmmaType(t), known = true;
      if (!known) throw Fault(op + ": unknown or misplaced qualifier ." + std::string(q));
      ++types;
    }
  }
  if (!sync || !aligned || !shape || types != 3)
    throw Fault(op + ": wgmma.mma_async needs .sync.aligned, a shape .m64nNkK and the D, A and B types");
  w.a = operand[0], w.b = operand[1];
  const bool fp8 = is_fp8(w.a) && is_fp8(w.b), integer = is_integer(w.a) && is_integer(w.b);
  bool types_ok;
  switch (w.d) {
    case WgmmaAccumulator::s32: types_ok = integer; break;
    case WgmmaAccumulator::f16: types_ok = fp8 || (w.a == WgmmaType::f16 && w.b == WgmmaType::f16); break;
    default: types_ok = fp8 || (w.a == w.b && !is_fp8(w.a) && !integer);
  }
  if (!types_ok)
    throw Fault(op + ": the ISA has no wgmma with these D, A and B types (f16 into f16 or f32; bf16, tf32 into f32; "
                     "e4m3 / e5m2 into f16 or f32; s8 / u8 into s32)");
  if (w.satfinite && w.d != WgmmaAccumulator::s32) throw Fault(op + ": .satfinite is for the integer (.s32) wgmma only");
  const uint32_t k = integer || fp8 ? 32 : w.a == WgmmaType::tf32 ? 8 : 16;
  if (w.k != k) throw Fault(op + ": ." + type_name(w.a) + " operands take K = " + std::to_string(k) + ", not " + std::to_string(w.k));
  const bool n_ok = integer ? (w.n == 8 || w.n == 16 || w.n == 24 || (w.n % 16 == 0 && w.n >= 32 && w.n <= 256))
                            : (w.n % 8 == 0 && w.n >= 8 && w.n <= 256);
  if (!n_ok) throw Fault(op + ": N = " + std::to_string(w.n) + " is not a shape the ISA lists for these types");
  return w;
}

void wgmma_execute(const Wgmma& op, const WgmmaOperands& x, Memory& shared, std::span<uint32_t> d) {
  const uint32_t d_regs = wgmma_d_registers(op), n = op.n, k = op.k;
  if (d.size() != 128 * d_regs)
    throw Fault("wgmma.mma_async m64n" + std::to_string(n) + ": D is " + std::to_string(d_regs) + " registers of 128 threads, not " +
                std::to_string(d.size()) + " values");
  if (x.a_in_registers && x.a_registers.size() != 128 * wgmma_a_registers)
    throw Fault("wgmma.mma_async: A from registers is 4 registers of 128 threads, not " + std::to_string(x.a_registers.size()) + " values");
  check_immediates(op, x);

  thread_local std::array<double, 64 * 32> a;
  thread_local std::array<double, 256 * 32> b;
  load_shared_operand(shared, x.b_desc, x.transpose_b, op.b, x.scale_b, n, k, b.data());
  if (x.a_in_registers) load_register_a(x.a_registers, op.a, x.scale_a, k, a.data());
  else load_shared_operand(shared, x.a_desc, x.transpose_a, op.a, x.scale_a, 64, k, a.data());

  for (uint32_t th = 0; th < 128; ++th) {
    const uint32_t w = th / 32, g = th % 32 / 4, tq = th % 4;
    uint32_t* regs = d.data() + size_t(th) * d_regs;
    for (uint32_t i = 0; i < n / 2; ++i) {
      const uint32_t row = 16 * w + g + 8 * (i / 2 % 2), col = 8 * (i / 4) + 2 * tq + i % 2;
      double acc = 0;
      for (uint32_t kk = 0; kk < k; ++kk) acc += a[row * k + kk] * b[col * k + kk];
      switch (op.d) {
        case WgmmaAccumulator::f32:
          if (x.scale_d) acc += double(std::bit_cast<float>(regs[i]));
          regs[i] = uint32_t(encode(NumberFormat::f32, acc));
          break;
        case WgmmaAccumulator::f16: {
          const uint32_t shift = 16 * (i % 2);
          if (x.scale_d) acc += decode(NumberFormat::f16, regs[i / 2] >> shift & 0xFFFFu);
          regs[i / 2] = (regs[i / 2] & ~(0xFFFFu << shift)) | uint32_t(encode(NumberFormat::f16, acc)) << shift;
          break;
        }
        case WgmmaAccumulator::s32: {
          int64_t sum = int64_t(acc) + (x.scale_d ? int64_t(int32_t(regs[i])) : 0);
          if (op.satfinite) sum = std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX);
          regs[i] = uint32_t(uint64_t(sum));
          break;
        }
      }
    }
  }
}

}  // namespace cutejit::emulator
