// Loads, stores and atomics in every state space and vector width (the ISA's "Data Movement and
// Conversion" and "Parallel Synchronization" sections), mapa and getctarank for distributed
// shared memory, and the cache hints that have no effect on results (prefetch, createpolicy…).
// Atomics on global memory are atomic on the host, since CTAs run on several host threads.
#include <atomic>
#include <cmath>

#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

namespace {

constexpr uint32_t flag_strong = 2;  ///< .relaxed, .acquire, .release or .volatile (red uses bit 0)

void exec_ld(const Instruction& in, ExecContext& c) {
  const Operand& d = in.operands[0];
  c.strong = in.flags & flag_strong;
  int bits = type_bits(in.type);
  size_t bytes = size_t(std::max(bits / 8, 1));
  uint32_t n = in.width;
  c.each(c.active, [&](int l) {
    uint64_t a = c.address(in.operands[1], l);
    uint8_t buf[128];
    if (n * bytes > sizeof buf) throw Fault("a load wider than 128 bytes");
    c.read(in.space, a, buf, n * bytes, l);
    for (uint32_t i = 0; i < n; ++i) {
      const Operand& dst = d.kind == Operand::Kind::vector ? c.element(d, i) : d;
      if (bits == 128) {  // a .b128 register is two slots, low half first
        if (dst.kind != Operand::Kind::reg) throw Fault("a 128-bit load into something other than a register");
        std::memcpy(&c.warp.reg(dst.reg, l), buf + i * bytes, 8);
        std::memcpy(&c.warp.reg(dst.reg + 1, l), buf + i * bytes + 8, 8);
        continue;
      }
      uint64_t v = 0;
      std::memcpy(&v, buf + i * bytes, bytes);
      if (is_signed(in.type)) v = uint64_t(sign_extend(v, bits));
      c.set(dst, l, v, 64);
    }
  });
}

void exec_st(const Instruction& in, ExecContext& c) {
  const Operand& s = in.operands[1];
  c.strong = in.flags & flag_strong;
  int bits = type_bits(in.type);
  size_t bytes = size_t(std::max(bits / 8, 1));
  uint32_t n = in.width;
  c.each(c.active, [&](int l) {
    uint64_t a = c.address(in.operands[0], l);
    uint8_t buf[128];
    if (n * bytes > sizeof buf) throw Fault("a store wider than 128 bytes");
    for (uint32_t i = 0; i < n; ++i) {
      const Operand& src = s.kind == Operand::Kind::vector ? c.element(s, i) : s;
      if (bits == 128) {
        if (src.kind != Operand::Kind::reg) throw Fault("a 128-bit store of something other than a register");
        std::memcpy(buf + i * bytes, &c.warp.reg(src.reg, l), 8);
        std::memcpy(buf + i * bytes + 8, &c.warp.reg(src.reg + 1, l), 8);
        continue;
      }
      uint64_t v = c.get(src, l);
      std::memcpy(buf + i * bytes, &v, bytes);
    }
    c.write(in.space, a, buf, n * bytes, l);
  });
}

enum AtomOp : uint16_t { a_add, a_min, a_max, a_inc, a_dec, a_and, a_or, a_xor, a_exch, a_cas };

uint64_t combine(AtomOp op, Type t, uint64_t old, uint64_t b, uint64_t c) {
  int bits = type_bits(t);
  if (is_float(t)) {
    if (t == Type::f16x2 || t == Type::bf16x2) {
      Type h = t == Type::f16x2 ? Type::f16 : Type::bf16;
      uint64_t r = 0;
      for (int i = 0; i < 2; ++i) {
        double x = decode(format_of(h), (old >> (16 * i)) & 0xffff), y = decode(format_of(h), (b >> (16 * i)) & 0xffff);
        double z = op == a_add ? x + y : op == a_min ? std::fmin(x, y) : std::fmax(x, y);
        r |= (encode(format_of(h), z) & 0xffff) << (16 * i);
      }
      return r;
    }
    NumberFormat f = format_of(t);
    double x = decode(f, old), y = decode(f, b);
    if (op == a_exch) return b;
    if (t == Type::f32 && op == a_add) {  // the ISA: atom.add.f32 flushes subnormal inputs and results
      x = flush_subnormal(f, x), y = flush_subnormal(f, y);
      return encode(f, flush_subnormal(f, double(float(x) + float(y))));
    }
    // An f64 sum rounds once from the exact sum; min and max are exact.
    double z = op == a_add ? x + y : op == a_min ? std::fmin(x, y) : std::fmax(x, y);
    return encode(f, z);
  }
  bool sign = is_signed(t);
  switch (op) {
    case a_add: return old + b;
    case a_min: return (sign ? sign_extend(old, bits) < sign_extend(b, bits) : mask_bits(old, bits) < mask_bits(b, bits)) ? old : b;
    case a_max: return (sign ? sign_extend(old, bits) > sign_extend(b, bits) : mask_bits(old, bits) > mask_bits(b, bits)) ? old : b;
    case a_inc: return mask_bits(old, bits) >= mask_bits(b, bits) ? 0 : old + 1;
    case a_dec: return (mask_bits(old, bits) == 0 || mask_bits(old, bits) > mask_bits(b, bits)) ? b : old - 1;
    case a_and: return old & b;
    case a_or: return old | b;
    case a_xor: return old ^ b;
    case a_exch: return b;
    case a_cas: return mask_bits(old, bits) == mask_bits(b, bits) ? c : old;
  }
  return old;
}

template <class T>
uint64_t atomic_update(uint8_t* p, AtomOp op, Type t, uint64_t b, uint64_t c) {
  std::atomic_ref<T> ref(*reinterpret_cast<T*>(p));
  T old = ref.load();
  while (!ref.compare_exchange_weak(old, T(combine(op, t, old, b, c)))) {}
  return old;
}

void exec_atom(const Instruction& in, ExecContext& c) {
  bool red = in.flags & 1;
  const auto& o = in.operands;
  size_t a = red ? 0 : 1;
  int bits = type_bits(in.type);
  size_t bytes = size_t(bits / 8);
  c.each(c.active, [&](int l) {
    uint64_t address = c.address(o[a], l);
    uint64_t b = c.get(o[a + 1], l), cc = o.size() > a + 2 ? c.get(o[a + 2], l) : 0;
    uint64_t old = 0;
    Space s = in.space;
    bool global = s == Space::global || (s == Space::generic && !(address >= shared_window && address < shared_window + window_size) &&
                                         !(address >= local_window && address < local_window + window_size));
    if (global) {
      uint8_t* p = c.global_bytes(address, bytes);
      switch (bytes) {
        case 2: old = atomic_update<uint16_t>(p, AtomOp(in.op), in.type, b, cc); break;
        case 4: old = atomic_update<uint32_t>(p, AtomOp(in.op), in.type, b, cc); break;
        case 8: old = atomic_update<uint64_t>(p, AtomOp(in.op), in.type, b, cc); break;
        default: throw Fault("an atomic of " + std::to_string(bytes) + " bytes");
      }
    } else if (s == Space::local || (s == Space::generic && address >= local_window)) {
      c.read(s, address, &old, bytes, l);
      uint64_t v = combine(AtomOp(in.op), in.type, old, b, cc);
      c.write(s, address, &v, bytes, l);
    } else {
      // Shared memory belongs to one cluster, which one host thread runs. Atomics of several
      // threads on one word are no race: the word is marked as the async proxy's.
      auto [cta, off] = c.shared_location(s, address, bytes, l);
      if (cta->written[off].writer == SharedByte::nobody) throw Fault("an atomic on shared memory that nothing has written");
      std::memcpy(&old, cta->shared.data() + off, bytes);
      uint64_t v = combine(AtomOp(in.op), in.type, old, b, cc);
      std::memcpy(cta->shared.data() + off, &v, bytes);
      cta->record_write(off, bytes, SharedByte::async_proxy);
    }
    if (!red) c.set(o[0], l, is_signed(in.type) ? uint64_t(sign_extend(old, bits)) : old, 64);
  });
}

// mapa: the same shared variable in the CTA of another rank.
void exec_mapa(const Instruction& in, ExecContext& c) {
  bool generic = in.space == Space::generic;
  c.each(c.active, [&](int l) {
    uint64_t a = c.get(in.operands[1], l);
    uint64_t rank = c.get(in.operands[2], l) & 0xffffffffu;
    if (rank >= c.cta().cluster->ctas.size())
      throw Fault("mapa names CTA rank " + std::to_string(rank) + " of a cluster of " + std::to_string(c.cta().cluster->ctas.size()));
    uint64_t offset = (generic ? a - shared_window : a) & ((uint64_t(1) << cluster_rank_shift) - 1);
    uint64_t r = ((rank + 1) << cluster_rank_shift) | offset;
    c.set(in.operands[0], l, generic ? r + shared_window : r, type_bits(in.type));
  });
}

void exec_getctarank(const Instruction& in, ExecContext& c) {
  c.each(c.active, [&](int l) {
    uint64_t a = c.get(in.operands[1], l);
    if (in.space == Space::generic) a -= shared_window;
    uint64_t rank = a >> cluster_rank_shift;
    c.set(in.operands[0], l, rank ? rank - 1 : c.cta().rank, 32);
  });
}

void exec_nothing(const Instruction&, ExecContext&) {}

void exec_createpolicy(const Instruction& in, ExecContext& c) {
  c.each(c.active, [&](int l) { c.set(in.operands[0], l, 0, 64); });
}

}  // namespace

bool decode_memory(Instruction& in, const Opcode& op) {
  std::string_view n = op[0];
  for (size_t i = 1; i < op.size(); ++i)
    if (op[i] == "v2") in.width = 2;
    else if (op[i] == "v4") in.width = 4;
    else if (op[i] == "v8") in.width = 8;
  if (has(op, "volatile") || has(op, "relaxed") || has(op, "acquire") || has(op, "release")) in.flags |= flag_strong;
  if (n == "ld" || n == "ldu") return bind(in, exec_ld);
  if (n == "st" && !has(op, "async")) return bind(in, exec_st);
  if (n == "atom" || n == "red") {
    if (n == "red") in.flags |= 1;
    static const std::pair<std::string_view, AtomOp> ops[] = {{"add", a_add}, {"min", a_min}, {"max", a_max}, {"inc", a_inc},
                                                              {"dec", a_dec}, {"and", a_and}, {"or", a_or}, {"xor", a_xor},
                                                              {"exch", a_exch}, {"cas", a_cas}};
    for (auto& [name, a] : ops)
      if (has(op, name)) return bind(in, exec_atom, a);
    return false;
  }
  if (n == "mapa") return bind(in, exec_mapa);
  if (n == "getctarank") return bind(in, exec_getctarank);
  if (n == "prefetch" || n == "prefetchu" || n == "applypriority" || n == "discard") return bind(in, exec_nothing);
  if (n == "createpolicy") return bind(in, exec_createpolicy);
  return false;
}

}  // namespace cutejit::emulator
