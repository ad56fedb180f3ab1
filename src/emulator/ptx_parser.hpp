/** \file
 * The PTX reader behind parse_ptx, in two halves that share its state: declarations (the
 * module's variables, each function's header, parameters, registers and memory layout;
 * ptx_parser.cpp) and instructions (operands resolved against those declarations, calls;
 * ptx_instructions.cpp). Private to the emulator.
 */
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/ptx_program.hpp"
#include "emulator/ptx_text.hpp"

namespace cutejit::emulator {

/// Throws Fault naming the PTX line of `s` and what about it is not covered.
[[noreturn]] void refuse(const Statement& s, const std::string& what);

class Parser {
 public:
  Parser(std::string_view text, const std::function<uint64_t(const GlobalVariable&)>& place);
  std::unique_ptr<Module> run();

 private:
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

  // Declarations (ptx_parser.cpp).
  void file_directive(const Statement& s);
  void variable(const Statement& s, Function* fn);
  void function(const Statement& s);
  void parameter(const Statement& s, Function& fn, std::string_view p, std::vector<Parameter>& into);
  void performance_directives(const Statement& s, Function& fn, std::string_view t);
  uint32_t new_register(const Statement& s, const std::string& name, uint32_t slots);
  void register_declaration(const Statement& s);
  uint32_t register_slot(const Statement& s, std::string_view name);
  bool is_register(std::string_view name) const;
  void body(Function& fn);
  /// A slot of `bytes` in the function's local memory; its generic address.
  uint64_t local_slot(Function& fn, uint64_t bytes, uint32_t align);
  void call_parameter(const Statement& s, Function& fn);
  void resolve_branches(Function& fn, size_t scope, const Statement& s);
  void finish_layout(Function& fn);
  bool is_dynamic_shared(std::string_view name) const;

  // Instructions (ptx_instructions.cpp).
  Operand operand(const Statement& s, Function& fn, std::string_view t);
  /// The elements of a `{…}` or `[a, {…}]` operand, appended to the function's vector elements.
  Operand vector_operand(const Statement& s, Function& fn, const std::vector<std::string_view>& parts);
  void instruction(const Statement& s, Function& fn, SourceLine where);
  void call(const Statement& s, Function& fn, Instruction& in, std::string_view rest);

  static constexpr uint32_t local_base = 16;  ///< local addresses below it fault (null pointers)

  std::vector<Statement> statements_;
  const std::function<uint64_t(const GlobalVariable&)>& place_;
  std::unique_ptr<Module> module_;
  size_t pos_ = 0;
  std::map<std::string, Symbol, std::less<>> symbols_;
  std::vector<std::string> dynamic_shared_names_;
  uint32_t dynamic_shared_align_ = 16;
  uint32_t module_shared_bytes_ = 0, shared_bytes_ = 0;
  uint32_t registers_ = 0;
  std::vector<Scope> scopes_;
  bool f32_operands_ = false;  ///< the instruction being read takes f32 sources (decimal constants)
};

}  // namespace cutejit::emulator
