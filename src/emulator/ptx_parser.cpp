// PTX text -> Module: declarations laid out (parameters, shared and local variables, registers),
// each instruction's operands resolved and its executor bound by the instruction set.
#include <bit>
#include <cctype>
#include <charconv>
#include <cstring>
#include <functional>
#include <map>

#include "emulator/fault.hpp"
#include "emulator/instruction_set.hpp"
#include "emulator/ptx_program.hpp"
#include "emulator/ptx_text.hpp"

namespace cutejit::emulator {

namespace {

[[noreturn]] void refuse(const Statement& s, const std::string& what) {
  throw Fault("PTX line " + std::to_string(s.ptx_line) + ": " + what + " (in '" + s.text + "')");
}

uint32_t align_up(uint32_t v, uint32_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

bool parse_integer(std::string_view s, uint64_t& out) {
  bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  if (!s.empty() && (s.back() == 'U' || s.back() == 'u')) s.remove_suffix(1);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s.remove_prefix(2);
  else if (s.size() > 1 && s[0] == '0') base = 8, s.remove_prefix(1);
  if (s.empty()) return base == 8 ? (out = 0, true) : false;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return false;
  out = negative ? uint64_t(0) - v : v;
  return true;
}

/// `0f3F800000` (f32 bits), `0d…` (f64 bits), or an integer.
bool parse_immediate(std::string_view s, uint64_t& out, bool f32 = false) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')) {
    auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), out, 16);
    return ec == std::errc() && p == s.data() + s.size();
  }
  // A decimal floating-point constant (`1.0`, `2e-3`) is an f64 value (the ISA's constants), made
  // f32 when the instruction reads its operand as f32.
  std::string_view digits = s.starts_with("-") ? s.substr(1) : s;
  bool hex = digits.size() > 1 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  if (!hex && s.find_first_of(".eE") != std::string_view::npos) {
    double d = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (ec != std::errc() || p != s.data() + s.size()) return false;
    out = f32 ? uint64_t(std::bit_cast<uint32_t>(float(d))) : std::bit_cast<uint64_t>(d);
    return true;
  }
  return parse_integer(s, out);
}

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

struct Symbol {
  Space space;
  uint64_t address;
};

/// Declared names, innermost block last: registers and labels of an inline-assembly block do
/// not clash with the function's or another block's.
struct Scope {
  std::map<std::string, uint32_t, std::less<>> registers;
  std::map<std::string, uint32_t, std::less<>> labels;
  std::vector<std::pair<std::string, size_t>> branches;  ///< label name, instruction index
};

class Parser {
 public:
  Parser(std::string_view text, const std::function<uint64_t(const GlobalVariable&)>& place)
      : statements_(split_statements(text)), place_(place), module_(std::make_unique<Module>()) {}

  std::unique_ptr<Module> run() {
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

 private:
  void file_directive(const Statement& s) {
    std::vector<std::string_view> w = words(s.text);
    uint64_t index = 0;
    if (w.size() < 3 || !parse_integer(w[1], index) || index > 100000) refuse(s, "a malformed .file directive");
    size_t q = s.text.find('"');
    std::string name = q == std::string::npos ? std::string(w[2]) : s.text.substr(q + 1, s.text.find('"', q + 1) - q - 1);
    if (module_->files.size() <= index) module_->files.resize(index + 1, "?");
    module_->files[index] = name;
  }

  /// A .global/.const/.shared/.local variable, at module scope (fn == nullptr) or in a function.
  void variable(const Statement& s, Function* fn) {
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

  void function(const Statement& s) {
    std::string_view t = s.text;
    Function fn;
    fn.entry = t.find(".entry") != std::string_view::npos;
    // A declaration (`.extern .func … ;`) names a function defined elsewhere: only calls matter.
    if (t.starts_with(".extern")) return;
    size_t open = t.find('(');
    std::string_view head = t.substr(0, open);
    size_t kw = head.find(fn.entry ? ".entry" : ".func");
    std::string_view rest = trim(head.substr(kw + (fn.entry ? 6 : 5)));
    if (!fn.entry && rest.starts_with("(")) refuse(s, "a .func with a return value");
    fn.name = std::string(words(rest).empty() ? std::string_view() : words(rest).back());
    size_t close = t.rfind(')');
    if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
      for (std::string_view p : split_operands(t.substr(open + 1, close - open - 1))) parameter(s, fn, p);
      performance_directives(s, fn, t.substr(close + 1));
    }
    fn.param_bytes = align_up(fn.param_bytes, 8);
    if (++pos_ >= statements_.size() || statements_[pos_].kind != Statement::Kind::open) {
      --pos_;
      return;  // a prototype
    }
    body(fn);
    module_->functions.push_back(std::move(fn));
  }

  void parameter(const Statement& s, Function& fn, std::string_view p) {
    uint32_t align = 0, element = 0;
    std::string_view name;
    for (std::string_view x : words(p)) {
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
    uint64_t count = 1;
    size_t bracket = name.find('[');
    if (bracket != std::string_view::npos) parse_integer(name.substr(bracket + 1, name.find(']') - bracket - 1), count);
    Parameter param;
    param.name = std::string(name.substr(0, bracket));
    param.bytes = uint32_t(count * element);
    fn.param_bytes = align_up(fn.param_bytes, std::max(align, element));
    param.offset = fn.param_bytes;
    fn.param_bytes += param.bytes;
    symbols_[param.name] = Symbol{Space::param, param.offset};
    fn.params.push_back(std::move(param));
  }

  void performance_directives(const Statement& s, Function& fn, std::string_view t) {
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
  uint32_t new_register(const Statement& s, const std::string& name, uint32_t slots) {
    if (scopes_.back().registers.count(name)) refuse(s, "register " + name + " declared twice");
    scopes_.back().registers[name] = registers_;
    registers_ += slots;
    return registers_ - slots;
  }

  void register_declaration(const Statement& s) {
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

  uint32_t register_slot(const Statement& s, std::string_view name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto r = it->registers.find(name);
      if (r != it->registers.end()) return r->second;
    }
    refuse(s, "register " + std::string(name) + " is not declared");
  }

  /// PTX register names need no `%` (inline assembly's `.reg .pred P1;`): a declared name is a register.
  bool is_register(std::string_view name) const {
    for (const Scope& sc : scopes_)
      if (sc.registers.count(name)) return true;
    return false;
  }

  void body(Function& fn) {
    fn_ = &fn;
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

  void call_parameter(const Statement& s, Function& fn) {
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
    fn.local_bytes = align_up(fn.local_bytes, std::max<uint32_t>(align, std::max<uint32_t>(element, 8)));
    // A generic local address: `st.param [param0]` and a callee's `ld.param` reach it as local.
    symbols_[std::string(name.substr(0, bracket))] = Symbol{Space::local, local_window + local_base + fn.local_bytes};
    fn.local_bytes += uint32_t(count * element);
  }

  void resolve_branches(Function& fn, size_t scope, const Statement& s) {
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

  void finish_layout(Function& fn) {
    uint32_t dyn = align_up(shared_base + shared_bytes_, std::max<uint32_t>(dynamic_shared_align_, 16));
    fn.static_shared_bytes = shared_bytes_;
    fn.dynamic_shared_offset = dyn;
    fn.registers = registers_;
    fn.local_bytes = align_up(fn.local_bytes, 16);
    // Decoded last: the dynamic shared array's address is known only now.
    for (Instruction& in : fn.code)
      for (Operand& o : in.operands)
        if (o.kind == Operand::Kind::symbol && is_dynamic_shared(o.symbol)) o.kind = Operand::Kind::imm, o.imm += dyn;
        else if (o.kind == Operand::Kind::address && !o.symbol.empty() && is_dynamic_shared(o.symbol)) o.imm += dyn;
    for (Operand& o : fn.vector_elements)
      if (o.kind == Operand::Kind::symbol && is_dynamic_shared(o.symbol)) o.kind = Operand::Kind::imm, o.imm += dyn;
  }

  bool is_dynamic_shared(std::string_view name) const {
    for (const std::string& n : dynamic_shared_names_)
      if (n == name) return true;
    return false;
  }

  Operand operand(const Statement& s, Function& fn, std::string_view t) {
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
    if (t[0] == '{') {
      o.kind = Operand::Kind::vector;
      std::vector<Operand> elements;
      for (std::string_view e : split_operands(t.substr(1, t.rfind('}') - 1))) elements.push_back(operand(s, fn, e));
      o.first = uint32_t(fn.vector_elements.size());
      o.count = uint32_t(elements.size());
      for (Operand& e : elements) fn.vector_elements.push_back(std::move(e));
      return o;
    }
    if (t[0] == '[') {
      std::string_view inner = trim(t.substr(1, t.rfind(']') - 1));
      std::vector<std::string_view> parts = split_operands(inner);
      if (parts.size() > 1) {  // [tensorMap, {coordinates}]: a vector of its parts
        o.kind = Operand::Kind::vector;
        std::vector<Operand> elements;
        for (std::string_view e : parts) elements.push_back(operand(s, fn, e));
        o.first = uint32_t(fn.vector_elements.size());
        o.count = uint32_t(elements.size());
        for (Operand& e : elements) fn.vector_elements.push_back(std::move(e));
        return o;
      }
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
        if (it != symbols_.end()) offset += int64_t(it->second.address);
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
      return o;
    }
    o.kind = is_dynamic_shared(t) ? Operand::Kind::symbol : Operand::Kind::label;
    return o;
  }

  void instruction(const Statement& s, Function& fn, SourceLine where) {
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

  // call(.uni) (ret), name, (args…);  — operands: the callee as a label, then each argument.
  void call(const Statement& s, Function& fn, Instruction& in, std::string_view rest) {
    std::vector<std::string_view> parts = split_operands(rest);
    Operand callee;
    std::vector<Operand> results, args;
    bool seen_callee = false;
    for (std::string_view p : parts) {
      if (p.starts_with("(")) {
        auto& list = seen_callee ? args : results;
        for (std::string_view a : split_operands(p.substr(1, p.rfind(')') - 1))) list.push_back(operand(s, fn, a));
      } else {
        callee.kind = Operand::Kind::label;
        callee.symbol = std::string(p);
        seen_callee = true;
      }
    }
    in.operands.push_back(callee);
    in.op = uint16_t(results.size());
    for (Operand& r : results) in.operands.push_back(r);
    for (Operand& a : args) in.operands.push_back(a);
  }

  static constexpr uint32_t local_base = 16;  ///< local addresses below it fault (null pointers)

  std::vector<Statement> statements_;
  const std::function<uint64_t(const GlobalVariable&)>& place_;
  std::unique_ptr<Module> module_;
  size_t pos_ = 0;
  std::map<std::string, Symbol, std::less<>> symbols_;
  std::vector<std::string> dynamic_shared_names_;
  uint32_t dynamic_shared_align_ = 16;
  uint32_t module_shared_bytes_ = 0, shared_bytes_ = 0;
  Function* fn_ = nullptr;
  uint32_t registers_ = 0;
  std::vector<Scope> scopes_;
  bool f32_operands_ = false;  ///< the instruction being read takes f32 sources (decimal constants)
};

}  // namespace

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
