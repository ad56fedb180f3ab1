// The emulated device's linker: a program's PTX modules (a kernel's, and the NVRTC-compiled
// functions nvJitLink links with it) become one Module whose entries each carry, after their own
// code, the code of every function they call. A callee's instructions are copied with their
// registers, vector elements, branch targets and local-memory addresses moved past the caller's,
// so that each function keeps its own registers and local memory in the one frame of a thread.
// Recursion is refused: one copy of a function's registers could not serve two of its calls.
#include <algorithm>
#include <map>

#include "emulator/fault.hpp"
#include "emulator/instruction_set.hpp"
#include "emulator/ptx_program.hpp"

namespace cutejit::emulator {

namespace {

/// Where a function's copy starts in the linked entry.
struct Placement {
  uint32_t pc = 0;         ///< its first instruction
  uint32_t vector = 0;     ///< its first vector element
  uint32_t registers = 0;  ///< its first register slot
  uint32_t local = 0;      ///< its local memory's offset past the entry's
};

class Linker {
 public:
  explicit Linker(std::vector<std::unique_ptr<Module>> modules) : modules_(std::move(modules)) {}

  std::unique_ptr<Module> run() {
    auto out = std::make_unique<Module>();
    out->target = modules_.front()->target;
    for (size_t m = 0; m < modules_.size(); ++m) {
      Module& module = *modules_[m];
      // .file indices are per module: a linked module's names follow the kernel's.
      file_base_.push_back(m == 0 ? 0 : uint32_t(out->files.size() - 1));
      if (m == 0) out->files = module.files;
      else out->files.insert(out->files.end(), module.files.begin() + 1, module.files.end());
      for (GlobalVariable& g : module.globals) out->globals.push_back(std::move(g));
    }
    for (size_t m = 0; m < modules_.size(); ++m)
      for (const Function& f : modules_[m]->functions)
        if (f.entry) out->functions.push_back(link_entry(f, m));
    return out;
  }

 private:
  Function link_entry(const Function& entry, size_t module) {
    linked_ = entry;
    linked_.code.clear();
    linked_.vector_elements.clear();
    linked_.registers = 0;
    linked_.local_bytes = 0;
    placed_.clear();
    calling_.clear();
    entry_ = &entry;
    entry_module_ = module;
    try {
      place(entry, module);
    } catch (const Fault& f) {
      throw Fault("kernel '" + entry.name + "': " + f.what());
    }
    return std::move(linked_);
  }

  /// Appends `f`'s code to the entry being linked, then places what it calls.
  Placement place(const Function& f, size_t module) {
    // The kernel's shared memory holds its own module's shared variables only.
    if (&f != entry_ && module != entry_module_ && f.static_shared_bytes > 0)
      throw Fault("'" + f.name + "' uses shared variables of a module linked with the kernel, which the emulated device does not place");
    if (&f != entry_ && f.names_dynamic_shared && f.dynamic_shared_offset != linked_.dynamic_shared_offset)
      throw Fault("'" + f.name + "' takes the address of the dynamic shared array, which lies elsewhere in the kernel that calls it");
    Placement at{uint32_t(linked_.code.size()), uint32_t(linked_.vector_elements.size()), linked_.registers, linked_.local_bytes};
    if (&f != entry_) linked_.callees.push_back({at.pc, f.name});
    placed_[&f] = at;
    for (Instruction in : f.code) {
      if (in.guard >= 0) in.guard += int32_t(at.registers);
      for (Operand& o : in.operands) move(o, at);
      if (in.where.file) in.where.file += file_base_[module];
      linked_.code.push_back(std::move(in));
    }
    for (Operand o : f.vector_elements) {
      move(o, at);
      linked_.vector_elements.push_back(std::move(o));
    }
    linked_.registers += f.registers;
    linked_.local_bytes += f.local_bytes;  // a multiple of 16, as every function's
    calling_.push_back(&f);
    for (uint32_t pc = at.pc; pc < at.pc + f.code.size(); ++pc)
      if (is_function_call(linked_.code[pc])) link_call(pc, f, module);
    calling_.pop_back();
    return at;
  }

  /// Resolves the call at `pc` (in `caller`'s copy) and places its callee if it is not yet.
  void link_call(uint32_t pc, const Function& caller, size_t module) {
    const std::string name = linked_.code[pc].operands[0].symbol;
    auto [callee, callee_module] = resolve(name, caller, module);
    if (std::find(calling_.begin(), calling_.end(), callee) != calling_.end()) {
      std::string chain;
      for (auto it = std::find(calling_.begin(), calling_.end(), callee); it != calling_.end(); ++it) chain += "'" + (*it)->name + "' -> ";
      throw Fault("a recursive call: " + chain + "'" + name + "'; the emulated device runs calls that do not recurse");
    }
    auto it = placed_.find(callee);
    Placement at = it != placed_.end() ? it->second : place(*callee, callee_module);
    Instruction& call = linked_.code[pc];
    size_t results = call.op, arguments = call.operands.size() - 1 - results;
    if (results != callee->returns.size() || arguments != callee->params.size())
      throw Fault("'" + caller.name + "' calls '" + name + "' with " + std::to_string(arguments) + " argument(s) and " +
                  std::to_string(results) + " result(s); it takes " + std::to_string(callee->params.size()) + " and returns " +
                  std::to_string(callee->returns.size()));
    auto target = std::make_shared<CallTarget>();
    target->name = name;
    target->pc = at.pc;
    target->params = callee->params;
    target->returns = callee->returns;
    for (Parameter& p : target->params) p.offset += at.local;
    for (Parameter& p : target->returns) p.offset += at.local;
    call.operands[0].imm = at.pc;
    call.decoded = std::move(target);
  }

  /// A call's callee, as a linker finds it: a function of the caller's module, else the one
  /// .visible definition among the other modules.
  std::pair<const Function*, size_t> resolve(const std::string& name, const Function& caller, size_t module) {
    for (const Function& f : modules_[module]->functions)
      if (f.name == name && !f.entry) return {&f, module};
    std::pair<const Function*, size_t> found{nullptr, 0};
    for (size_t m = 0; m < modules_.size(); ++m) {
      if (m == module) continue;
      for (const Function& f : modules_[m]->functions) {
        if (f.name != name || f.entry || !f.visible) continue;
        if (found.first) throw Fault("'" + name + "', which '" + caller.name + "' calls, is defined by two of the linked PTX modules");
        found = {&f, m};
      }
    }
    if (!found.first)
      throw Fault("'" + caller.name + "' calls '" + name + "', which none of the program's " + std::to_string(modules_.size()) +
                  " PTX module(s) defines (the kernel's and the CUDA functions' linked with it)");
    return found;
  }

  /// An operand of a function copied to `at`: its registers, vector elements, branch target and
  /// local-memory address move with it.
  static void move(Operand& o, const Placement& at) {
    switch (o.kind) {
      case Operand::Kind::reg: o.reg += at.registers; break;
      case Operand::Kind::address:
        if (o.has_base) o.reg += at.registers;
        break;
      case Operand::Kind::vector: o.first += at.vector; break;
      case Operand::Kind::label: o.imm += at.pc; break;
      default: break;
    }
    if (o.local) o.imm += at.local;
  }

  std::vector<std::unique_ptr<Module>> modules_;
  std::vector<uint32_t> file_base_;
  Function linked_;
  const Function* entry_ = nullptr;
  size_t entry_module_ = 0;
  std::map<const Function*, Placement> placed_;
  std::vector<const Function*> calling_;  ///< the functions being placed, outermost first
};

}  // namespace

std::unique_ptr<Module> link_ptx(const std::vector<std::string_view>& texts, const std::function<uint64_t(const GlobalVariable&)>& place_global) {
  if (texts.empty()) throw Fault("no PTX to load");
  std::vector<std::unique_ptr<Module>> modules;
  for (size_t i = 0; i < texts.size(); ++i) {
    try {
      modules.push_back(parse_ptx(texts[i], place_global));
    } catch (const Fault& f) {
      if (i == 0) throw;
      throw Fault("the PTX module " + std::to_string(i) + " linked with the kernel: " + f.what());
    }
  }
  return Linker(std::move(modules)).run();
}

std::string_view Function::function_at(uint32_t pc) const {
  std::string_view name = this->name;
  for (const auto& [first, callee] : callees)
    if (pc >= first) name = callee;
  return name;
}

}  // namespace cutejit::emulator
