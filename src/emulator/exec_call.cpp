// Calls of .func functions and their returns (the ISA's `call` and `ret`): a call passes its
// arguments by value into the callee's parameter slots, pushes its own pc on the thread's call
// stack and jumps to the callee's code, which link_ptx placed after the kernel's; `ret` copies
// the return values into the call's result slots and resumes after the call, or ends the
// thread when its stack is empty (a kernel's `ret`). The calls to vprintf are exec_control's.
#include <cstring>

#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

namespace {

/// The bytes of a call's argument or result: a .param variable of the caller (a slot of its local
/// memory), else a register or an immediate, which the ISA also allows as an argument.
void read_value(ExecContext& c, const Operand& o, void* out, uint32_t bytes, int l) {
  if (o.kind == Operand::Kind::imm && o.local) return c.read(Space::generic, o.imm, out, bytes, l);
  if (bytes > 8) throw Fault("an argument of " + std::to_string(bytes) + " bytes in a register");
  uint64_t v = c.get(o, l);
  std::memcpy(out, &v, bytes);
}

void write_value(ExecContext& c, const Operand& o, const void* in, uint32_t bytes, int l) {
  if (o.kind == Operand::Kind::imm && o.local) return c.write(Space::generic, o.imm, in, bytes, l);
  if (bytes > 8) throw Fault("a return value of " + std::to_string(bytes) + " bytes in a register");
  uint64_t v = 0;
  std::memcpy(&v, in, bytes);
  c.set(o, l, v, int(bytes * 8));
}

void copy(ExecContext& c, const Operand& from, const Parameter& to, int l) {
  uint8_t buf[256];
  if (to.bytes > sizeof buf) throw Fault("a parameter of " + std::to_string(to.bytes) + " bytes (the emulated device passes up to 256)");
  read_value(c, from, buf, to.bytes, l);
  c.write(Space::generic, to.offset, buf, to.bytes, l);
}

// call (results…), name, (arguments…)
void exec_call(const Instruction& in, ExecContext& c) {
  if (!in.decoded) throw Fault("the call of '" + in.operands[0].symbol + "' was never linked to its definition (link_ptx resolves calls)");
  const CallTarget& t = in.as<CallTarget>();
  const size_t first_argument = 1 + size_t(in.op);
  c.each(c.active, [&](int l) {
    for (size_t i = 0; i < t.params.size(); ++i) copy(c, in.operands[first_argument + i], t.params[i], l);
    c.warp.calls[l].push_back(c.pc);
    c.warp.pc[l] = t.pc;
  });
}

void exec_ret(const Instruction& in, ExecContext& c) {
  uint32_t ending = 0;
  c.each(c.active, [&](int l) {
    std::vector<uint32_t>& calls = c.warp.calls[l];
    if (calls.empty()) {
      ending |= 1u << l;
      return;
    }
    const uint32_t at = calls.back();
    calls.pop_back();
    const Instruction& call = c.fn.code[at];
    const CallTarget& t = call.as<CallTarget>();
    uint8_t buf[256];
    for (size_t i = 0; i < t.returns.size(); ++i) {
      const Parameter& r = t.returns[i];
      if (r.bytes > sizeof buf) throw Fault("a return value of " + std::to_string(r.bytes) + " bytes (the emulated device passes up to 256)");
      c.read(Space::generic, r.offset, buf, r.bytes, l);
      write_value(c, call.operands[1 + i], buf, r.bytes, l);
    }
    c.warp.pc[l] = at + 1;
  });
  if (ending) exit_lanes(c, ending);
}

}  // namespace

bool is_function_call(const Instruction& in) { return in.execute == exec_call; }

bool decode_call(Instruction& in, const Opcode& op) {
  std::string_view n = op[0];
  if (n == "ret") return bind(in, exec_ret);
  if (n == "call") return bind(in, exec_call, in.op);
  return false;
}

}  // namespace cutejit::emulator
