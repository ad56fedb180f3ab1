// PTX text -> Module, the declarations: the module's variables placed, each function's header
// read (a .func's parameters and return values become slots of its local memory, as a call's
// arguments are of the caller's), its registers, shared and local memory laid out, its body
// read statement by statement, instructions handed to ptx_instructions.cpp.
#include "emulator/ptx_parser.hpp"

#include <cctype>
#include <cstring>

#include "emulator/fault.hpp"
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

namespace {
uint32_t align_up(uint32_t v, uint32_t a) { return a > 1 ? (v + a - 1) / a * a : v; }
}  // namespace

void refuse(const Statement& s, const std::string& what) {
  throw Fault("PTX line " + std::to_string(s.ptx_line) + ": " + what + " (in '" + s.text + "')");
}

Parser::Parser(std::string_view text, const std::function<uint64_t(const GlobalVariable&)>& place)
    : statements_(split_statements(text)), place_(place), module_(std::make_unique<Module>()) {}

std::unique_ptr<Module> Parser::run() {
  // The .file table comes last in LLVM's output; instructions name their lines through it.
  for (const Statement& s : statements_)
    if (s.kind == Statement::Kind::statement && s.text.starts_with(".file")) file_directive(s);
  for (pos_ = 0; pos_ < statements_.size(); ++pos_) {
    const Statement& s = statements_[pos_];
    if (s.kind != Statement::Kind::statement) refuse(s, "a block or label outside a function");
    std::string_view t = s.text;
    if (t.starts_with(".version") || t.starts_with(".address_size") || t.starts_with(".loc")) continue;
    if (t.starts_with(".target")) {
      std::vector<std::string_view> w = words(t);
      if (w.size() > 1) module_->target = std::string(trim(w[1].substr(0, w[1].find(','))));
      continue;
    }
    if (t.starts_with(".file")) continue;
    if (t.find(".entry") != std::string_view::npos || t.find(".func") != std::string_view::npos) {
      function(s);
      continue;
    }
    variable(s, nullptr);
  }
  return std::move(module_);
}

void Parser::file_directive(const Statement& s) {
  std::vector<std::string_view> w = words(s.text);
  uint64_t index = 0;
  if (w.size() < 3 || !parse_integer(w[1], index) || index > 100000) refuse(s, "a malformed .file directive");
  size_t q = s.text.find('"');
  std::string name = q == std::string::npos ? std::string(w[2]) : s.text.substr(q + 1, s.text.find('"', q + 1) - q - 1);
  if (module_->files.size() <= index) module_->files.resize(index + 1, "?");
  module_->files[index] = name;
}

/// A .global/.const/.shared/.local variable, at module scope (fn == nullptr) or in a function.
void Parser::variable(const Statement& s, Function* fn) {
  std::string_view t = s.text;
  std::vector<std::string_view> w = words(t.substr(0, t.find('=')));
  Space space = Space::global;
  bool is_extern = false;
  uint32_t align = 1, element = 1;
  std::string_view name;
  bool have_space = false;
  for (std::string_view x : w) {
    if (x == ".extern") is_extern = true;
    else if (x == ".visible" || x == ".weak" || x == ".common") continue;
    else if (x == ".global") space = Space::global, have_space = true;
    else if (x == ".const") space = Space::constant, have_space = true;
    else if (x == ".shared") space = Space::shared_cta, have_space = true;
    else if (x == ".local") space = Space::local, have_space = true;
    else if (x == ".align") continue;
    else if (x.starts_with(".")) {
      Type ty = parse_type(x.substr(1));
      if (ty == Type::none) refuse(s, "an unknown declaration keyword " + std::string(x));
      element = std::max(1, type_bits(ty) / 8);
    } else if (std::isdigit(static_cast<unsigned char>(x[0]))) {
      uint64_t a = 0;
      if (!parse_integer(x, a) || a == 0 || a > 4096) refuse(s, "an alignment of " + std::string(x));
      align = uint32_t(a);
    } else {
      name = x;
    }
  }
  if (!have_space || name.empty()) refuse(s, "a declaration the emulated device does not know");
  uint64_t count = 1;
  size_t bracket = name.find('[');
  std::string base_name(name.substr(0, bracket));
  bool unsized = false;
  if (bracket != std::string_view::npos) {
    std::string_view n = name.substr(bracket + 1, name.find(']') - bracket - 1);
    if (n.empty()) unsized = true;
    else if (!parse_integer(n, count) || count > (uint64_t(1) << 32)) refuse(s, "an array size of " + std::string(n));
  }
  uint64_t bytes = count * element;
  align = std::max(align, element);
  if (space == Space::shared_cta) {
    // Each kernel lays out its shared memory; a .func's own would have to live in every caller's.
    if (fn && !fn->entry) refuse(s, "a .shared variable declared inside a .func (the emulated device places shared variables of the module or a kernel only)");
    if (is_extern || unsized) {
      dynamic_shared_align_ = std::max(dynamic_shared_align_, std::max<uint32_t>(align, 16));
      dynamic_shared_names_.push_back(base_name);
      return;
    }
    shared_bytes_ = align_up(shared_bytes_, align);
    symbols_[base_name] = Symbol{Space::shared_cta, shared_base + shared_bytes_};
    shared_bytes_ += uint32_t(bytes);
    if (!fn) module_shared_bytes_ = shared_bytes_;
    return;
  }
  if (space == Space::local) {
    if (!fn) refuse(s, "a .local variable at module scope");
    fn->local_bytes = align_up(fn->local_bytes, align);
    symbols_[base_name] = Symbol{Space::local, local_base + fn->local_bytes};
    fn->local_bytes += uint32_t(bytes);
    return;
  }
  GlobalVariable g;
  g.name = base_name;
  g.space = space;
  g.align = align;
  g.init.assign(bytes, 0);
  size_t eq = t.find('=');
  if (eq != std::string_view::npos) {
    std::string_view init = trim(t.substr(eq + 1));
    if (init.starts_with("{")) init = init.substr(1, init.rfind('}') - 1);
    size_t i = 0;
    for (std::string_view v : split_operands(init)) {
      uint64_t x = 0;
      if (!parse_immediate(v, x)) refuse(s, "an initialiser the emulated device cannot read: " + std::string(v));
      if ((i + 1) * element > g.init.size()) break;
      std::memcpy(g.init.data() + i * element, &x, element);
      ++i;
    }
  }
  uint64_t address = place_(g);
  symbols_[base_name] = Symbol{space, address};
  module_->globals.push_back(std::move(g));
}

void Parser::function(const Statement& s) {
  std::string_view t = s.text;
  // A declaration (`.extern .func … ;`) names a function defined elsewhere: link_ptx finds it.
  if (t.starts_with(".extern")) return;
  Function fn;
  fn.entry = t.find(".entry") != std::string_view::npos;
  size_t kw = t.find(fn.entry ? ".entry" : ".func");
  for (std::string_view w : words(t.substr(0, kw))) fn.visible |= w == ".visible" || w == ".weak";
  std::string_view rest = trim(t.substr(kw + (fn.entry ? 6 : 5)));
  if (!fn.entry && rest.starts_with("(")) {  // the return values: `(.param .b32 func_retval0) name(…)`
    size_t close = rest.find(')');
    if (close == std::string_view::npos) refuse(s, "a .func whose return values have no closing parenthesis");
    for (std::string_view p : split_operands(rest.substr(1, close - 1))) parameter(s, fn, p, fn.returns);
    rest = trim(rest.substr(close + 1));
  }
  size_t open = rest.find('(');
  for (std::string_view w : words(rest.substr(0, open)))
    if (!w.starts_with(".")) {
      fn.name = std::string(w);
      break;
    }
  if (fn.name.empty()) refuse(s, "a function without a name");
  size_t close = rest.rfind(')');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
    for (std::string_view p : split_operands(rest.substr(open + 1, close - open - 1))) parameter(s, fn, p, fn.params);
    performance_directives(s, fn, rest.substr(close + 1));
  }
  fn.param_bytes = align_up(fn.param_bytes, 8);
  if (++pos_ >= statements_.size() || statements_[pos_].kind != Statement::Kind::open) {
    --pos_;
    return;  // a prototype
  }
  body(fn);
  module_->functions.push_back(std::move(fn));
}

/// A kernel's parameter lies in its parameter space; a .func's, like its return value, in a slot
/// of its local memory, which a call fills with the argument and reads the result from.
void Parser::parameter(const Statement& s, Function& fn, std::string_view p, std::vector<Parameter>& into) {
  uint32_t align = 0, element = 0;
  std::string_view name;
  for (std::string_view x : words(p)) {
    if (x == ".reg") refuse(s, "a function parameter in a register (.reg): the emulated device passes .param parameters only");
    if (x == ".param" || x == ".ptr" || x == ".global" || x == ".shared" || x == ".const" || x == ".local" || x == ".align") continue;
    if (x.starts_with(".")) {
      Type ty = parse_type(x.substr(1));
      if (ty == Type::none) refuse(s, "a parameter of type " + std::string(x));
      element = std::max(1, type_bits(ty) / 8);
    } else if (std::isdigit(static_cast<unsigned char>(x[0]))) {
      uint64_t a = 0;
      parse_integer(x, a);
      align = uint32_t(a);
    } else {
      name = x;
    }
  }
  if (name.empty() || element == 0) refuse(s, "a parameter without a name or a type: '" + std::string(p) + "'");
  uint64_t count = 1;
  size_t bracket = name.find('[');
  if (bracket != std::string_view::npos) parse_integer(name.substr(bracket + 1, name.find(']') - bracket - 1), count);
  Parameter param;
  param.name = std::string(name.substr(0, bracket));
  param.bytes = uint32_t(count * element);
  if (fn.entry) {
    fn.param_bytes = align_up(fn.param_bytes, std::max(align, element));
    param.offset = fn.param_bytes;
    fn.param_bytes += param.bytes;
    symbols_[param.name] = Symbol{Space::param, param.offset};
  } else {
    param.offset = local_slot(fn, param.bytes, std::max(align, element));
    symbols_[param.name] = Symbol{Space::local, param.offset};
  }
  into.push_back(std::move(param));
}

void Parser::performance_directives(const Statement& s, Function& fn, std::string_view t) {
  std::vector<std::string_view> w = words(t);
  auto three = [&](size_t i, uint32_t out[3]) {
    std::string joined;
    for (size_t j = i + 1; j < w.size() && !w[j].starts_with("."); ++j) joined += std::string(w[j]);
    auto parts = split_operands(joined);
    for (size_t k = 0; k < 3; ++k) {
      uint64_t v = 1;
      if (k < parts.size()) parse_integer(parts[k], v);
      out[k] = uint32_t(v);
    }
  };
  for (size_t i = 0; i < w.size(); ++i) {
    uint32_t d[3];
    if (w[i] == ".maxntid" || w[i] == ".reqntid") {
      three(i, d);
      fn.max_threads = d[0] * d[1] * d[2];
      if (w[i] == ".reqntid") std::copy(d, d + 3, fn.required_block);
    } else if (w[i] == ".reqnctapercluster") {
      three(i, fn.required_cluster);
    } else if (w[i] == ".explicitcluster") {
      fn.explicit_cluster = true;
    }
  }
}

/// A register's slots: one 64-bit slot, two for a .b128 register (low half first).
uint32_t Parser::new_register(const Statement& s, const std::string& name, uint32_t slots) {
  if (scopes_.back().registers.count(name)) refuse(s, "register " + name + " declared twice");
  scopes_.back().registers[name] = registers_;
  registers_ += slots;
  return registers_ - slots;
}

void Parser::register_declaration(const Statement& s) {
  std::vector<std::string_view> w = words(s.text);
  if (w.size() < 3) refuse(s, "a register declaration without a name");
  uint32_t slots = w[1] == ".b128" ? 2 : 1;
  std::string joined;
  for (size_t i = 2; i < w.size(); ++i) joined += std::string(w[i]);
  for (std::string_view r : split_operands(joined)) {
    size_t lt = r.find('<');
    if (lt == std::string_view::npos) {
      new_register(s, std::string(r), slots);
      continue;
    }
    uint64_t n = 0;
    if (!parse_integer(r.substr(lt + 1, r.find('>') - lt - 1), n) || n > 1000000) refuse(s, "a register range");
    std::string prefix(r.substr(0, lt));
    for (uint64_t i = 0; i < n; ++i) new_register(s, prefix + std::to_string(i), slots);
  }
}

uint32_t Parser::register_slot(const Statement& s, std::string_view name) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto r = it->registers.find(name);
    if (r != it->registers.end()) return r->second;
  }
  refuse(s, "register " + std::string(name) + " is not declared");
}

/// PTX register names need no `%` (inline assembly's `.reg .pred P1;`): a declared name is a register.
bool Parser::is_register(std::string_view name) const {
  for (const Scope& sc : scopes_)
    if (sc.registers.count(name)) return true;
  return false;
}

void Parser::body(Function& fn) {
  registers_ = 0;
  shared_bytes_ = module_shared_bytes_;
  scopes_.assign(1, Scope{});
  SourceLine where;
  int depth = 1;  // function() consumed the opening brace
  for (++pos_; pos_ < statements_.size(); ++pos_) {
    const Statement& s = statements_[pos_];
    switch (s.kind) {
      case Statement::Kind::open:
        if (depth++ > 0) scopes_.emplace_back();
        continue;
      case Statement::Kind::close:
        if (--depth == 0) {
          resolve_branches(fn, 0, s);
          finish_layout(fn);
          return;
        }
        resolve_branches(fn, scopes_.size() - 1, s);
        scopes_.pop_back();
        continue;
      case Statement::Kind::label:
        scopes_.back().labels[s.text] = uint32_t(fn.code.size());
        continue;
      case Statement::Kind::statement: break;
    }
    std::string_view t = s.text;
    if (t.starts_with(".loc") && !t.starts_with(".local")) {
      std::vector<std::string_view> w = words(t);
      uint64_t file = 0, line = 0;
      if (w.size() >= 3 && parse_integer(w[1], file) && parse_integer(w[2], line)) where = SourceLine{uint32_t(file), uint32_t(line)};
      continue;
    }
    if (t.starts_with(".reg")) {
      register_declaration(s);
      continue;
    }
    if (t.starts_with(".pragma") || t.starts_with(".file")) continue;
    if (t.starts_with(".shared") || t.starts_with(".local") || t.starts_with(".global") || t.starts_with(".const")) {
      variable(s, &fn);
      continue;
    }
    if (t.starts_with(".param")) {  // a call's argument slot: lives in the caller's local space
      call_parameter(s, fn);
      continue;
    }
    if (t.starts_with(".")) refuse(s, "a directive the emulated device does not know");
    instruction(s, fn, where);
  }
  throw Fault("PTX: function " + fn.name + " has no closing brace");
}

uint64_t Parser::local_slot(Function& fn, uint64_t bytes, uint32_t align) {
  fn.local_bytes = align_up(fn.local_bytes, std::max<uint32_t>(align, 8));
  uint64_t address = local_window + local_base + fn.local_bytes;
  fn.local_bytes += uint32_t(bytes);
  return address;
}

/// A call's argument or result slot (`.param .b32 param0;` in the call's block): local memory
/// of the caller, reached by `st.param [param0]` and by the call, as a generic local address.
void Parser::call_parameter(const Statement& s, Function& fn) {
  uint32_t element = 4, align = 0;
  std::string_view name;
  for (std::string_view x : words(s.text)) {
    if (x == ".param" || x == ".align") continue;
    if (x.starts_with(".")) element = std::max(1, type_bits(parse_type(x.substr(1))) / 8);
    else if (std::isdigit(static_cast<unsigned char>(x[0]))) {
      uint64_t a = 0;
      parse_integer(x, a);
      align = uint32_t(a);
    } else name = x;
  }
  uint64_t count = 1;
  size_t bracket = name.find('[');
  if (bracket != std::string_view::npos) parse_integer(name.substr(bracket + 1, name.find(']') - bracket - 1), count);
  symbols_[std::string(name.substr(0, bracket))] = Symbol{Space::local, local_slot(fn, count * element, std::max(align, element))};
}

void Parser::resolve_branches(Function& fn, size_t scope, const Statement& s) {
  Scope& sc = scopes_[scope];
  std::vector<std::pair<std::string, size_t>> unresolved;
  for (auto& [name, index] : sc.branches) {
    auto it = sc.labels.find(name);
    if (it == sc.labels.end()) {
      if (scope == 0) refuse(s, "a branch to the undefined label " + name);
      unresolved.push_back({name, index});
      continue;
    }
    for (Operand& o : fn.code[index].operands)
      if (o.kind == Operand::Kind::label && o.symbol == name) o.imm = it->second;
  }
  if (scope > 0)
    for (auto& u : unresolved) scopes_[scope - 1].branches.push_back(u);
}

void Parser::finish_layout(Function& fn) {
  uint32_t dyn = align_up(shared_base + shared_bytes_, std::max<uint32_t>(dynamic_shared_align_, 16));
  fn.static_shared_bytes = shared_bytes_;
  fn.dynamic_shared_offset = dyn;
  fn.registers = registers_;
  fn.local_bytes = align_up(fn.local_bytes, 16);
  // Decoded last: the dynamic shared array's address is known only now.
  auto place = [&](Operand& o) {
    bool symbol = o.kind == Operand::Kind::symbol, address = o.kind == Operand::Kind::address && !o.symbol.empty();
    if (!(symbol || address) || !is_dynamic_shared(o.symbol)) return;
    if (symbol) o.kind = Operand::Kind::imm;
    o.imm += dyn;
    fn.names_dynamic_shared = true;
  };
  for (Instruction& in : fn.code)
    for (Operand& o : in.operands) place(o);
  for (Operand& o : fn.vector_elements) place(o);
}

bool Parser::is_dynamic_shared(std::string_view name) const {
  for (const std::string& n : dynamic_shared_names_)
    if (n == name) return true;
  return false;
}

std::unique_ptr<Module> parse_ptx(std::string_view text, const std::function<uint64_t(const GlobalVariable&)>& place_global) {
  return Parser(text, place_global).run();
}

const Function* Module::find(std::string_view name) const {
  for (const Function& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

std::string Module::where(const SourceLine& s) const {
  if (s.file == 0 || s.file >= files.size()) return "";
  return files[s.file] + ":" + std::to_string(s.line);
}

}  // namespace cutejit::emulator
