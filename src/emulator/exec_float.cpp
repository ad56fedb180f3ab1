// Floating-point instructions on f32, f64, f16, bf16 and their pairs, bound to the semantics of
// float_arithmetic.cpp (rounding modes, .ftz, .sat, .relu, NaN rules, the approximate functions).
#include "emulator/exec_support.hpp"
#include "emulator/float_arithmetic.hpp"
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

namespace {

void exec_float(const Instruction& in, ExecContext& c) {
  const FloatInstruction& f = in.as<FloatInstruction>();
  const auto& o = in.operands;
  size_t n = o.size() - 1;
  int bits = f.op == FloatOp::testp ? 1 : f.register_bits;
  c.each(c.active, [&](int l) {
    uint64_t sources[3];
    for (size_t i = 0; i < n; ++i) sources[i] = c.get(o[1 + i], l);
    c.set(o[0], l, f(std::span<const uint64_t>(sources, n)), bits);
  });
}

}  // namespace

bool decode_float(Instruction& in, const Opcode& op) {
  if (!is_float(in.type) || op[0] == "mov" || op[0] == "setp" || op[0] == "selp" || op[0] == "ld" || op[0] == "st") return false;
  std::optional<FloatInstruction> f = parse_float_instruction(joined(op));
  if (!f) return false;
  size_t sources = in.operands.empty() ? 0 : in.operands.size() - 1;
  if (sources < f->min_sources || sources > f->max_sources)
    throw Fault(joined(op) + " takes " + std::to_string(f->min_sources) + " to " + std::to_string(f->max_sources) + " sources, not " +
                std::to_string(sources));
  in.decoded = std::make_shared<FloatInstruction>(*f);
  return bind(in, exec_float);
}

}  // namespace cutejit::emulator
