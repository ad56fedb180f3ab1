// cvt and cvt.pack, bound to the semantics of cvt_instruction.cpp (every integer and float type,
// the narrow formats, rounding, saturation); cvta between generic and state-space addresses, and
// isspacep.
#include "emulator/cvt_instruction.hpp"
#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

namespace {

void exec_cvt(const Instruction& in, ExecContext& c) {
  const Conversion& conv = in.as<Conversion>();
  const auto& o = in.operands;
  c.each(c.active, [&](int l) {
    uint64_t sources[3];
    for (size_t i = 0; i < conv.sources; ++i) sources[i] = c.get(o[1 + i], l);
    uint64_t d = conv(std::span<const uint64_t>(sources, conv.sources));
    // A signed destination narrower than its register is sign-extended into it.
    if (conv.destination_signed && conv.destination_bits < 64) d = uint64_t(sign_extend(d, conv.destination_bits));
    c.set(o[0], l, d, 64);
  });
}

enum Cvta : uint16_t { to_generic, from_generic };

void exec_cvta(const Instruction& in, ExecContext& c) {
  uint64_t window = in.space == Space::local                                          ? local_window
                    : in.space == Space::param                                        ? param_window
                    : in.space == Space::shared_cta || in.space == Space::shared_cluster ? shared_window
                                                                                         : 0;
  int bits = type_bits(in.type);
  c.each(c.active, [&](int l) {
    uint64_t a = c.get(in.operands[1], l);
    c.set(in.operands[0], l, in.op == to_generic ? a + window : a - window, bits);
  });
}

void exec_isspacep(const Instruction& in, ExecContext& c) {
  c.each(c.active, [&](int l) {
    uint64_t a = c.get(in.operands[1], l);
    bool shared = a >= shared_window && a < shared_window + window_size, local = a >= local_window && a < local_window + window_size;
    bool r = in.space == Space::shared_cta || in.space == Space::shared_cluster ? shared : in.space == Space::local ? local : !shared && !local;
    c.set(in.operands[0], l, r, 1);
  });
}

}  // namespace

bool decode_conversion(Instruction& in, const Opcode& op) {
  std::string_view n = op[0];
  if (n == "cvta") return bind(in, exec_cvta, has(op, "to") ? from_generic : to_generic);
  if (n == "isspacep") return bind(in, exec_isspacep);
  if (n != "cvt") return false;
  std::optional<Conversion> conv = parse_cvt(joined(op));
  if (!conv) return false;
  if (in.operands.size() != 1 + size_t(conv->sources))
    throw Fault(joined(op) + " takes " + std::to_string(conv->sources) + " source(s), not " + std::to_string(in.operands.size() - 1));
  in.decoded = std::make_shared<Conversion>(*conv);
  return bind(in, exec_cvt);
}

}  // namespace cutejit::emulator
