// Warp collectives: shfl.sync, vote.sync, match.sync, redux.sync, elect.sync, bar.warp.sync and
// activemask (the ISA's "Parallel Synchronization and Communication" section). A collective runs
// once every lane its member mask names has reached it; the lanes that arrive first wait. A lane
// of the mask that has exited, or lanes that disagree on the mask, are faults.
#include <cmath>

#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

namespace {

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

/// True when every lane of the member mask is here; otherwise holds the active lanes.
bool gathered(ExecContext& c, const Operand& mask_operand) {
  uint32_t mask = 0;
  bool first = true;
  c.each(c.active, [&](int l) {
    uint32_t m = uint32_t(c.get(mask_operand, l));
    if (!first && m != mask)
      throw Fault("lanes reach this collective with different member masks (" + hex32(mask) + " and " + hex32(m) + ")");
    if (!(m >> l & 1)) throw Fault("lane " + std::to_string(l) + " executes a collective whose member mask " + hex32(m) + " leaves it out");
    mask = m, first = false;
  });
  c.lane = -1;
  // The ISA waits for the non-exited lanes of the mask: exited (or absent) lanes take no part.
  uint32_t gone = 0;
  for (int l = 0; l < 32; ++l)
    gone |= uint32_t(c.warp.state[l] == LaneState::exited || c.warp.state[l] == LaneState::inactive) << l;
  uint32_t missing = mask & ~c.active & ~gone;
  if (!missing) {
    ++c.cta().cluster->epoch;  // the lanes synchronise here
    return true;
  }
  for (uint32_t m = missing; m; m &= m - 1) {
    int l = std::countr_zero(m);
    if (c.group >> l & 1)
      throw Fault("the member mask " + hex32(mask) + " names lane " + std::to_string(l) + ", whose guard predicate is false here");
  }
  c.hold(c.active, LaneState::at_collective);
  return false;
}

enum Shfl : uint16_t { up, down, bfly, idx };

void exec_shfl(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  bool pair = in.flags & (1u << 31);
  size_t a = pair ? 2 : 1;
  if (!gathered(c, o[a + 3])) return;
  std::array<uint64_t, 32> value{};
  for (int l = 0; l < 32; ++l)
    if (c.warp.state[l] != LaneState::inactive) value[l] = c.get(o[a], l);
  c.each(c.active, [&](int l) {
    uint32_t b = uint32_t(c.get(o[a + 1], l)) & 0x1f, cc = uint32_t(c.get(o[a + 2], l));
    uint32_t clamp = cc & 0x1f, seg = (cc >> 8) & 0x1f, lane = uint32_t(l);
    uint32_t max_lane = (lane & seg) | (clamp & ~seg), min_lane = lane & seg;
    int64_t j = 0;
    bool ok = false;
    switch (Shfl(in.op)) {
      case up: j = int64_t(lane) - b, ok = j >= int64_t(max_lane); break;
      case down: j = int64_t(lane) + b, ok = j <= int64_t(max_lane); break;
      case bfly: j = int64_t(lane ^ b), ok = j <= int64_t(max_lane); break;
      case idx: j = int64_t(min_lane | (b & ~seg)), ok = j <= int64_t(max_lane); break;
    }
    if (!ok) j = l;
    if (!(c.active >> j & 1))  // the ISA leaves a value from a lane not taking part undefined
      throw Fault("lane " + std::to_string(l) + " reads lane " + std::to_string(j) +
                  ", which has exited or is not in the member mask");
    c.set(o[0], l, value[size_t(j)], 32);
    if (pair) c.set(o[1], l, ok, 1);
  });
}

enum Vote : uint16_t { v_all, v_any, v_uni, v_ballot };

void exec_vote(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  if (!gathered(c, o[2])) return;
  uint32_t ballot = 0;
  c.each(c.active, [&](int l) { ballot |= uint32_t(c.get(o[1], l) != 0) << l; });
  c.each(c.active, [&](int l) {
    switch (Vote(in.op)) {
      case v_all: c.set(o[0], l, ballot == c.active, 1); break;
      case v_any: c.set(o[0], l, ballot != 0, 1); break;
      case v_uni: c.set(o[0], l, ballot == 0 || ballot == c.active, 1); break;
      case v_ballot: c.set(o[0], l, ballot, 32); break;
    }
  });
}

void exec_activemask(const Instruction& in, ExecContext& c) {
  c.each(c.active, [&](int l) { c.set(in.operands[0], l, c.active, 32); });
}

void exec_warp_sync(const Instruction& in, ExecContext& c) { gathered(c, in.operands[0]); }

void exec_match(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  bool pair = in.flags & (1u << 31);
  size_t a = pair ? 2 : 1;
  if (!gathered(c, o[a + 1])) return;
  int bits = type_bits(in.type);
  std::array<uint64_t, 32> v{};
  c.each(c.active, [&](int l) { v[l] = mask_bits(c.get(o[a], l), bits); });
  c.each(c.active, [&](int l) {
    uint32_t same = 0;
    for (uint32_t m = c.active; m; m &= m - 1) {
      int k = std::countr_zero(m);
      same |= uint32_t(v[k] == v[l]) << k;
    }
    if (in.op == 0) {
      c.set(o[0], l, same, 32);
    } else {
      bool all = same == c.active;
      c.set(o[0], l, all ? c.active : 0, 32);
      if (pair) c.set(o[1], l, all, 1);
    }
  });
}

enum Redux : uint16_t { r_add, r_min, r_max, r_and, r_or, r_xor };
constexpr uint32_t flag_abs = 1, flag_nan = 2;

void exec_redux(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  if (!gathered(c, o[2])) return;
  uint64_t r = 0;
  double f = 0;
  bool first = true;
  c.each(c.active, [&](int l) {
    uint64_t v = c.get(o[1], l) & 0xffffffffu;
    if (in.type == Type::f32) {
      double x = as_f32(v);
      if (in.flags & flag_abs) x = std::fabs(x);
      if (first) f = x;
      else if (std::isnan(x) || std::isnan(f)) f = (in.flags & flag_nan) ? NAN : (std::isnan(f) ? x : f);
      else f = in.op == r_min ? std::min(f, x) : std::max(f, x);
    } else if (first) {
      r = v;
    } else {
      bool sign = is_signed(in.type);
      switch (Redux(in.op)) {
        case r_add: r = (r + v) & 0xffffffffu; break;
        case r_min: r = (sign ? sign_extend(v, 32) < sign_extend(r, 32) : v < r) ? v : r; break;
        case r_max: r = (sign ? sign_extend(v, 32) > sign_extend(r, 32) : v > r) ? v : r; break;
        case r_and: r &= v; break;
        case r_or: r |= v; break;
        case r_xor: r ^= v; break;
      }
    }
    first = false;
  });
  if (in.type == Type::f32) r = bits_of(float(f));
  c.each(c.active, [&](int l) { c.set(o[0], l, r, 32); });
}

// elect.sync d|p, membermask: one lane of the mask (the lowest) is elected.
void exec_elect(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  if (!gathered(c, o[2])) return;
  int leader = std::countr_zero(c.active);
  c.each(c.active, [&](int l) {
    c.set(o[0], l, uint64_t(leader), 32);
    c.set(o[1], l, l == leader, 1);
  });
}

}  // namespace

bool whole_warp(ExecContext& c) {
  uint32_t live = 0;
  for (int l = 0; l < 32; ++l) live |= uint32_t(c.warp.state[l] != LaneState::inactive && c.warp.state[l] != LaneState::exited) << l;
  if (c.active != c.group) throw Fault("an .aligned instruction under a predicate that differs between the warp's lanes");
  if (live != 0xffffffffu) throw Fault("an .aligned instruction in a warp whose lanes have exited (or a block that is not whole warps)");
  if (c.active == live) {
    ++c.cta().cluster->epoch;  // the lanes synchronise here
    return true;
  }
  c.hold(c.active, LaneState::at_collective);
  return false;
}

bool decode_warp(Instruction& in, const Opcode& op) {
  std::string_view n = op[0];
  if (n == "shfl") {
    static const std::pair<std::string_view, Shfl> modes[] = {{"up", up}, {"down", down}, {"bfly", bfly}, {"idx", idx}};
    for (auto& [name, m] : modes)
      if (has(op, name)) return bind(in, exec_shfl, m);
    return false;
  }
  if (n == "vote") {
    if (has(op, "ballot")) return bind(in, exec_vote, v_ballot);
    if (has(op, "all")) return bind(in, exec_vote, v_all);
    if (has(op, "any")) return bind(in, exec_vote, v_any);
    if (has(op, "uni")) return bind(in, exec_vote, v_uni);
    return false;
  }
  if (n == "activemask") return bind(in, exec_activemask);
  if (n == "bar" && op.size() > 1 && op[1] == "warp") return bind(in, exec_warp_sync);
  if (n == "match") return bind(in, exec_match, has(op, "all") ? 1 : 0);
  if (n == "redux") {
    if (has(op, "abs")) in.flags |= flag_abs;
    if (has(op, "NaN")) in.flags |= flag_nan;
    static const std::pair<std::string_view, Redux> ops[] = {{"add", r_add}, {"min", r_min}, {"max", r_max},
                                                             {"and", r_and}, {"or", r_or}, {"xor", r_xor}};
    for (auto& [name, r] : ops)
      if (has(op, name)) return bind(in, exec_redux, r);
    return false;
  }
  if (n == "elect") {
    if (in.operands.size() != 3) throw Fault("elect.sync needs a destination, a predicate and a member mask");
    return bind(in, exec_elect);
  }
  return false;
}

}  // namespace cutejit::emulator
