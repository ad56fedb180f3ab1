#include "emulator/instruction_set.hpp"

#include <map>

#include "emulator/fault.hpp"

namespace cutejit::emulator {

namespace {
const std::map<std::string_view, Type>& type_names() {
  static const std::map<std::string_view, Type> m = {
      {"pred", Type::pred}, {"b8", Type::b8}, {"b16", Type::b16}, {"b32", Type::b32}, {"b64", Type::b64}, {"b128", Type::b128},
      {"u8", Type::u8}, {"u16", Type::u16}, {"u32", Type::u32}, {"u64", Type::u64}, {"s8", Type::s8}, {"s16", Type::s16},
      {"s32", Type::s32}, {"s64", Type::s64}, {"f16", Type::f16}, {"f16x2", Type::f16x2}, {"bf16", Type::bf16},
      {"bf16x2", Type::bf16x2}, {"f32", Type::f32}, {"f64", Type::f64}, {"tf32", Type::tf32}, {"e4m3", Type::e4m3},
      {"e5m2", Type::e5m2}, {"e2m3", Type::e2m3}, {"e3m2", Type::e3m2}, {"e2m1", Type::e2m1}, {"ue8m0", Type::ue8m0},
      {"ue4m3", Type::ue4m3}, {"e4m3x2", Type::e4m3x2}, {"e5m2x2", Type::e5m2x2}, {"e2m3x2", Type::e2m3x2},
      {"e3m2x2", Type::e3m2x2}, {"e2m1x2", Type::e2m1x2}, {"ue8m0x2", Type::ue8m0x2}, {"s4", Type::s4}, {"u4", Type::u4},
  };
  return m;
}
}  // namespace

Type parse_type(std::string_view s) {
  auto it = type_names().find(s);
  return it == type_names().end() ? Type::none : it->second;
}

int type_bits(Type t) {
  switch (t) {
    case Type::pred: return 1;
    case Type::b8: case Type::u8: case Type::s8: case Type::e4m3: case Type::e5m2: case Type::e2m3: case Type::e3m2:
    case Type::ue8m0: case Type::ue4m3: return 8;
    case Type::e2m1: case Type::s4: case Type::u4: return 4;
    case Type::b16: case Type::u16: case Type::s16: case Type::f16: case Type::bf16: case Type::e4m3x2: case Type::e5m2x2:
    case Type::e2m3x2: case Type::e3m2x2: case Type::ue8m0x2: return 16;
    case Type::e2m1x2: return 8;
    case Type::b32: case Type::u32: case Type::s32: case Type::f32: case Type::f16x2: case Type::bf16x2: case Type::tf32: return 32;
    case Type::b64: case Type::u64: case Type::s64: case Type::f64: return 64;
    case Type::b128: return 128;
    case Type::none: return 0;
  }
  return 0;
}

bool is_signed(Type t) { return t == Type::s8 || t == Type::s16 || t == Type::s32 || t == Type::s64 || t == Type::s4; }
bool is_float(Type t) {
  return t == Type::f16 || t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2 || t == Type::f32 || t == Type::f64 || t == Type::tf32;
}

bool has(const Opcode& op, std::string_view modifier) {
  for (size_t i = 1; i < op.size(); ++i)
    if (op[i] == modifier) return true;
  return false;
}

std::string joined(const Opcode& op) {
  std::string s;
  for (std::string_view part : op) s += (s.empty() ? "" : ".") + std::string(part);
  return s;
}

std::vector<Type> types_of(const Opcode& op) {
  std::vector<Type> out;
  for (size_t i = 1; i < op.size(); ++i)
    if (Type t = parse_type(op[i]); t != Type::none) out.push_back(t);
  return out;
}

Space space_of(const Opcode& op) {
  for (size_t i = 1; i < op.size(); ++i) {
    std::string_view m = op[i];
    if (m == "global") return Space::global;
    if (m == "shared" || m == "shared::cta") return Space::shared_cta;
    if (m == "shared::cluster") return Space::shared_cluster;
    if (m == "local") return Space::local;
    if (m == "param" || m == "param::entry" || m == "param::func") return Space::param;
    if (m == "const") return Space::constant;
  }
  return Space::generic;
}

void check_tensor_memory_at_exit(Cta& cta);  // exec_tcgen05.cpp
void check_cta_end(Cta& cta) { check_tensor_memory_at_exit(cta); }

void decode_instruction(Instruction& in, const Opcode& op, std::string_view opcode_text) {
  std::vector<Type> types = types_of(op);
  if (!types.empty()) in.type = types.back();
  if (types.size() > 1) in.type2 = types[types.size() - 2];
  in.space = space_of(op);
  for (auto decode : {decode_control, decode_call, decode_memory, decode_sync, decode_warp, decode_async, decode_matrix, decode_cluster_launch_control, decode_conversion,
                      decode_float, decode_arithmetic})
    if (decode(in, op)) return;
  throw Fault("the emulated device does not cover the instruction '" + std::string(opcode_text) +
              "' yet (docs/emulator.md lists what it covers)");
}

}  // namespace cutejit::emulator
