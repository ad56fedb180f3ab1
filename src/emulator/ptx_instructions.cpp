// PTX text -> Module, the instructions: each statement's guard, opcode and operands read
// against the declarations (registers by scope, symbols by address, labels by name), and its
// executor bound by the instruction set.
#include <cctype>
#include <map>

#include "emulator/fault.hpp"
#include "emulator/instruction_set.hpp"
#include "emulator/ptx_parser.hpp"

namespace cutejit::emulator {

namespace {

const std::map<std::string_view, Special>& specials() {
  static const std::map<std::string_view, Special> m = {
      {"%tid.x", Special::tid_x}, {"%tid.y", Special::tid_y}, {"%tid.z", Special::tid_z},
      {"%ntid.x", Special::ntid_x}, {"%ntid.y", Special::ntid_y}, {"%ntid.z", Special::ntid_z},
      {"%ctaid.x", Special::ctaid_x}, {"%ctaid.y", Special::ctaid_y}, {"%ctaid.z", Special::ctaid_z},
      {"%nctaid.x", Special::nctaid_x}, {"%nctaid.y", Special::nctaid_y}, {"%nctaid.z", Special::nctaid_z},
      {"%laneid", Special::laneid}, {"%warpid", Special::warpid}, {"%nwarpid", Special::nwarpid},
      {"%smid", Special::smid}, {"%nsmid", Special::nsmid}, {"%gridid", Special::gridid},
      {"%lanemask_eq", Special::lanemask_eq}, {"%lanemask_le", Special::lanemask_le}, {"%lanemask_lt", Special::lanemask_lt},
      {"%lanemask_ge", Special::lanemask_ge}, {"%lanemask_gt", Special::lanemask_gt},
      {"%clock", Special::clock}, {"%clock64", Special::clock64}, {"%globaltimer", Special::globaltimer},
      {"%dynamic_smem_size", Special::dynamic_smem_size}, {"%total_smem_size", Special::total_smem_size},
      {"%cluster_ctaid.x", Special::cluster_ctaid_x}, {"%cluster_ctaid.y", Special::cluster_ctaid_y},
      {"%cluster_ctaid.z", Special::cluster_ctaid_z}, {"%cluster_nctaid.x", Special::cluster_nctaid_x},
      {"%cluster_nctaid.y", Special::cluster_nctaid_y}, {"%cluster_nctaid.z", Special::cluster_nctaid_z},
      {"%clusterid.x", Special::clusterid_x}, {"%clusterid.y", Special::clusterid_y}, {"%clusterid.z", Special::clusterid_z},
      {"%nclusterid.x", Special::nclusterid_x}, {"%nclusterid.y", Special::nclusterid_y},
      {"%nclusterid.z", Special::nclusterid_z}, {"%cluster_ctarank", Special::cluster_ctarank},
      {"%cluster_nctarank", Special::cluster_nctarank}, {"%is_explicit_cluster", Special::is_explicit_cluster},
  };
  return m;
}

}  // namespace

Operand Parser::operand(const Statement& s, Function& fn, std::string_view t) {
  Operand o;
  if (t.empty()) refuse(s, "an empty operand");
  if (t == "_") {
    o.kind = Operand::Kind::sink;
    return o;
  }
  if (t[0] == '!') {
    o = operand(s, fn, trim(t.substr(1)));
    o.negated = true;
    return o;
  }
  if (t[0] == '{') return vector_operand(s, fn, split_operands(t.substr(1, t.rfind('}') - 1)));
  if (t[0] == '[') {
    std::string_view inner = trim(t.substr(1, t.rfind(']') - 1));
    std::vector<std::string_view> parts = split_operands(inner);
    if (parts.size() > 1) return vector_operand(s, fn, parts);  // [tensorMap, {coordinates}]: a vector of its parts
    o.kind = Operand::Kind::address;
    // [base], [base+imm], [base+-imm], [imm], [symbol+imm]
    size_t plus = inner.find('+', 1);
    std::string_view base = trim(inner.substr(0, plus));
    int64_t offset = 0;
    if (plus != std::string_view::npos) {
      uint64_t v = 0;
      if (!parse_integer(trim(inner.substr(plus + 1)), v)) refuse(s, "an address offset " + std::string(inner));
      offset = int64_t(v);
    }
    uint64_t v = 0;
    if (base.starts_with("%") || is_register(base)) {
      o.has_base = true;
      o.reg = register_slot(s, base);
    } else if (parse_integer(base, v)) {
      offset += int64_t(v);
    } else {
      auto it = symbols_.find(std::string(base));
      if (it == symbols_.end() && !is_dynamic_shared(base)) refuse(s, "an unknown symbol " + std::string(base));
      o.symbol = std::string(base);
      if (it != symbols_.end()) offset += int64_t(it->second.address), o.local = it->second.space == Space::local;
    }
    o.imm = uint64_t(offset);
    return o;
  }
  if (t[0] == '%') {
    auto sp = specials().find(t);
    if (sp != specials().end()) {
      o.kind = Operand::Kind::special;
      o.special = sp->second;
      return o;
    }
    o.kind = Operand::Kind::reg;
    o.reg = register_slot(s, t);
    return o;
  }
  uint64_t v = 0;
  if (std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '-') {
    if (!parse_immediate(t, v, f32_operands_)) refuse(s, "an immediate " + std::string(t));
    o.kind = Operand::Kind::imm;
    o.imm = v;
    return o;
  }
  if (is_register(t)) {
    o.kind = Operand::Kind::reg;
    o.reg = register_slot(s, t);
    return o;
  }
  // A symbol: a variable's address, or a label or function named by a branch or call.
  o.symbol = std::string(t);
  auto it = symbols_.find(o.symbol);
  if (it != symbols_.end()) {
    o.kind = Operand::Kind::imm;
    o.imm = it->second.address;
    o.local = it->second.space == Space::local;
    return o;
  }
  o.kind = is_dynamic_shared(t) ? Operand::Kind::symbol : Operand::Kind::label;
  return o;
}

Operand Parser::vector_operand(const Statement& s, Function& fn, const std::vector<std::string_view>& parts) {
  Operand o;
  o.kind = Operand::Kind::vector;
  std::vector<Operand> elements;
  for (std::string_view e : parts) elements.push_back(operand(s, fn, e));
  o.first = uint32_t(fn.vector_elements.size());
  o.count = uint32_t(elements.size());
  for (Operand& e : elements) fn.vector_elements.push_back(std::move(e));
  return o;
}

void Parser::instruction(const Statement& s, Function& fn, SourceLine where) {
  Instruction in;
  in.text = s.text;
  in.where = where;
  std::string_view t = s.text;
  if (t[0] == '@') {
    size_t sp = t.find_first_of(" \t");
    std::string_view g = t.substr(1, sp - 1);
    if (g.starts_with("!")) in.guard_negated = true, g.remove_prefix(1);
    in.guard = int32_t(register_slot(s, g));
    t = trim(t.substr(sp));
  }
  size_t sp = t.find_first_of(" \t");
  std::string_view opcode = t.substr(0, sp);
  std::string_view rest = sp == std::string_view::npos ? std::string_view() : trim(t.substr(sp));
  Opcode op = split_opcode(opcode);
  std::vector<Type> types = types_of(op);
  f32_operands_ = !types.empty() && types.back() == Type::f32;
  if (op[0] == "call") {
    call(s, fn, in, rest);
  } else {
    for (std::string_view x : split_operands(rest)) {
      // setp's two destinations: `%p1|%p2`
      size_t bar = x.find('|');
      if (bar != std::string_view::npos && (x[0] == '%' || x[0] == '_')) {
        in.operands.push_back(operand(s, fn, trim(x.substr(0, bar))));
        in.operands.push_back(operand(s, fn, trim(x.substr(bar + 1))));
        in.flags |= 1u << 31;  // marks the pair for setp's decoder
        continue;
      }
      in.operands.push_back(operand(s, fn, x));
    }
  }
  for (Operand& o : in.operands)
    if (o.kind == Operand::Kind::label && op[0] != "call") scopes_.back().branches.push_back({o.symbol, fn.code.size()});
  try {
    decode_instruction(in, op, opcode);
  } catch (const Fault& f) {
    std::string at = module_->where(where);
    throw Fault((at.empty() ? "" : at + ": ") + f.what());
  }
  fn.code.push_back(std::move(in));
}

// call(.uni) (ret), name, (args…);  — operands: the callee as a label, then each result, then
// each argument (in.op counts the results). link_ptx resolves the callee.
void Parser::call(const Statement& s, Function& fn, Instruction& in, std::string_view rest) {
  Operand callee;
  std::vector<Operand> results, args;
  bool seen_callee = false;
  for (std::string_view p : split_operands(rest)) {
    if (p.starts_with("(")) {
      auto& list = seen_callee ? args : results;
      for (std::string_view a : split_operands(p.substr(1, p.rfind(')') - 1))) list.push_back(operand(s, fn, a));
      continue;
    }
    // An indirect call names a register, then a prototype or a list of targets after the arguments.
    if (seen_callee || p.starts_with("%") || is_register(p))
      refuse(s, "an indirect call (through a function pointer): the emulated device runs calls of a named function only");
    callee.kind = Operand::Kind::label;
    callee.symbol = std::string(p);
    seen_callee = true;
  }
  if (!seen_callee) refuse(s, "a call without a function");
  in.operands.push_back(callee);
  in.op = uint16_t(results.size());
  for (Operand& r : results) in.operands.push_back(r);
  for (Operand& a : args) in.operands.push_back(a);
}

}  // namespace cutejit::emulator
