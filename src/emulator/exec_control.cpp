// Control flow: bra, exit, trap, nanosleep, and the one external call cutejit's PTX makes,
// vprintf (the ISA's "Formatted output" ABI: a format string and a buffer of arguments, each
// aligned to its size). Calls of .func functions and `ret` are exec_call.cpp's.
#include <cstdio>
#include <string>

#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

void exit_lanes(ExecContext& c, uint32_t lanes) {
  Cta& cta = c.cta();
  c.each(lanes, [&](int l) {
    c.warp.state[l] = LaneState::exited;
    c.warp.calls[l].clear();
    ++cta.exited;
  });
  // Lanes waiting in a collective for these ones try again, and find them gone.
  for (int l = 0; l < 32; ++l)
    if (c.warp.state[l] == LaneState::at_collective) c.warp.state[l] = LaneState::ready;
  // Barriers that counted every live thread may now be full.
  for (uint32_t id = 0; id < cta.barriers.size(); ++id) c.grid.check_barrier(cta, id);
  c.grid.check_cluster_barrier(*cta.cluster);
}

namespace {

void exec_bra(const Instruction& in, ExecContext& c) {
  uint32_t target = uint32_t(in.operands[0].imm);
  c.each(c.active, [&](int l) { c.warp.pc[l] = target; });
}

void exec_exit(const Instruction& in, ExecContext& c) { exit_lanes(c, c.active); }

void exec_trap(const Instruction& in, ExecContext& c) { throw Fault("the kernel executed trap"); }
void exec_nothing(const Instruction&, ExecContext&) {}

std::string read_string(ExecContext& c, uint64_t address, int l) {
  std::string s;
  for (char ch; s.size() < 4096; ++address) {
    c.read(Space::generic, address, &ch, 1, l);
    if (!ch) break;
    s += ch;
  }
  return s;
}

/// One vprintf: the format's conversions take their arguments from the buffer in order.
int vprintf_lane(ExecContext& c, uint64_t format, uint64_t args, int l) {
  std::string f = read_string(c, format, l), out;
  uint64_t at = args;
  auto take = [&](size_t bytes) {
    at = (at + bytes - 1) / bytes * bytes;
    uint64_t v = 0;
    c.read(Space::generic, at, &v, bytes, l);
    at += bytes;
    return v;
  };
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out += f[i];
      continue;
    }
    size_t j = i + 1;
    while (j < f.size() && std::string_view("-+ #0123456789.").find(f[j]) != std::string_view::npos) ++j;
    bool wide = false;
    while (j < f.size() && (f[j] == 'l' || f[j] == 'h' || f[j] == 'z' || f[j] == 'j' || f[j] == 't')) wide |= f[j] != 'h', ++j;
    if (j >= f.size()) break;
    std::string spec = f.substr(i, j - i + 1);
    char conv = f[j];
    char buf[512];
    switch (conv) {
      case '%': out += '%'; break;
      case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c': {
        uint64_t v = take(wide ? 8 : 4);
        std::string s = spec;
        s.erase(std::remove_if(s.begin(), s.end(), [](char ch) { return ch == 'l' || ch == 'h' || ch == 'z' || ch == 'j' || ch == 't'; }), s.end());
        s.insert(s.size() - 1, "ll");
        if (conv == 'c') std::snprintf(buf, sizeof buf, "%c", int(v));
        else if (conv == 'd' || conv == 'i') std::snprintf(buf, sizeof buf, s.c_str(), (long long)(wide ? int64_t(v) : int64_t(int32_t(v))));
        else std::snprintf(buf, sizeof buf, s.c_str(), (unsigned long long)(wide ? v : uint32_t(v)));
        out += buf;
        break;
      }
      case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
        std::snprintf(buf, sizeof buf, spec.c_str(), std::bit_cast<double>(take(8)));
        out += buf;
        break;
      case 'p': std::snprintf(buf, sizeof buf, "%p", reinterpret_cast<void*>(take(8))); out += buf; break;
      case 's': out += read_string(c, take(8), l); break;
      default: out += spec;
    }
    i = j;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return int(out.size());
}

// call (retval), vprintf, (format, args)
void exec_vprintf(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  size_t results = in.op;
  c.each(c.active, [&](int l) {
    uint64_t format = 0, args = 0;
    c.read(Space::param, o[1 + results].imm, &format, 8, l);
    c.read(Space::param, o[2 + results].imm, &args, 8, l);
    int32_t n = vprintf_lane(c, format, args, l);
    if (results) c.write(Space::param, o[1].imm, &n, 4, l);
  });
  std::fflush(stdout);
}

}  // namespace

bool decode_control(Instruction& in, const Opcode& op) {
  std::string_view n = op[0];
  if (n == "bra") return bind(in, exec_bra);
  if (n == "exit") return bind(in, exec_exit);
  if (n == "trap") return bind(in, exec_trap);
  if (n == "nanosleep" || n == "brkpt" || n == "pmevent") return bind(in, exec_nothing);
  // vprintf is the device runtime's, defined in no PTX module; any other callee is linked.
  if (n == "call" && !in.operands.empty() && in.operands[0].symbol == "vprintf") {
    if (in.operands.size() != 3 + size_t(in.op)) throw Fault("a vprintf call without its two arguments");
    return bind(in, exec_vprintf, in.op);
  }
  return false;
}

}  // namespace cutejit::emulator
