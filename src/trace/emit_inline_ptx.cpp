/** \file
 * A user's own PTX statement (inline_ptx). Everything LLVM would reject with an abort, or
 * misread, is checked here first: the constraint letters against the operand types, the
 * operand count, and every `$n` in the text.
 */
#include <cctype>
#include <string>
#include <vector>

#include <mlir/Dialect/LLVMIR/LLVMDialect.h>

#include "cutejit/dsl/inline_ptx.hpp"
#include "trace/trace.hpp"

namespace cutejit::detail {

namespace {

constexpr const char* letters_help = "h (16-bit), r (32-bit), l (64-bit), f (f32) or d (f64)";

/// The constraint letter a value of `t` takes, or 0 for none.
char letter_for(DType t) {
  switch (t) {
    case DType::i16: case DType::u16: case DType::f16: case DType::bf16: return 'h';
    case DType::i32: case DType::u32: return 'r';
    case DType::i64: case DType::u64: return 'l';
    case DType::f32: return 'f';
    case DType::f64: return 'd';
    default: return 0;
  }
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(s.begin());
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

std::vector<std::string> split_constraints(std::string_view text) {
  std::vector<std::string> out;
  if (trim(std::string(text)).empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    out.push_back(trim(std::string(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start))));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

/// Every `$n` must name an operand; `$$` is a literal `$`.
void check_references(std::string_view ptx, size_t count, const Where& w) {
  for (size_t i = 0; i < ptx.size(); ++i) {
    if (ptx[i] != '$') continue;
    if (i + 1 < ptx.size() && ptx[i + 1] == '$') {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < ptx.size() && std::isdigit(static_cast<unsigned char>(ptx[j]))) ++j;
    if (j == i + 1)
      trace_error("inline_ptx: a '$' at offset " + std::to_string(i) + " does not name an operand; write $0, $1, ... for the "
                  "operands and $$ for a literal '$'",
                  w);
    if (j - i > 4 || std::stoul(std::string(ptx.substr(i + 1, j - i - 1))) >= count)
      trace_error("inline_ptx: $" + std::string(ptx.substr(i + 1, j - i - 1)) + " names no operand; this statement has " +
                      std::to_string(count) + (count == 1 ? " ($0)" : count ? " ($0 to $" + std::to_string(count - 1) + ")" : ""),
                  w);
    i = j - 1;
  }
}

}  // namespace

ValueId inline_ptx(std::string_view ptx, std::string_view constraints, const DType* result, std::span<const PtxOperand> operands,
                   Where where) {
  Trace& t = Trace::current(where);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  if (trim(std::string(ptx)).empty()) trace_error("inline_ptx: the PTX text is empty", where);
  std::vector<std::string> parts = split_constraints(constraints);
  const size_t outputs = result ? 1 : 0;
  if (parts.size() != outputs + operands.size())
    trace_error("inline_ptx: \"" + std::string(constraints) + "\" has " + std::to_string(parts.size()) + " constraint(s) for " +
                    (result ? "a result and " : "no result and ") + std::to_string(operands.size()) +
                    " operand(s); give one per operand, separated by commas, the result's first with '='",
                where);
  check_references(ptx, parts.size(), where);

  std::string llvm_constraints;
  mlir::Type result_type;
  if (result) {
    char want = letter_for(*result);
    if (!want)
      trace_error("inline_ptx cannot return " + std::string(name(*result)) + "; return a 16-, 32- or 64-bit value and cast it", where);
    if (parts[0] != std::string("=") + want)
      trace_error("inline_ptx: the result is " + std::string(name(*result)) + ", so its constraint is \"=" + want + "\", not \"" + parts[0] +
                      "\"",
                  where);
    llvm_constraints = parts[0];
    result_type = want == 'h' ? mlir::Type(b.getI16Type()) : t.type(*result);
  }
  llvm::SmallVector<mlir::Value> values;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string& c = parts[outputs + i];
    const ValueInfo& v = t.get(operands[i].id, where);
    const std::string which = "inline_ptx: operand " + std::to_string(i + 1) + " ($" + std::to_string(outputs + i) + ")";
    if (c.size() != 1 || std::string("hrlfd").find(c[0]) == std::string::npos)
      trace_error(which + " has constraint \"" + c + "\"; an operand's is one of " + letters_help, where);
    mlir::Value value = v.value;
    char want = 0;
    std::string what;
    if (v.pointer) {
      if (v.space == Space::local) trace_error(which + " is a register-array pointer, which has no address to pass", where);
      want = v.space == Space::shared ? 'r' : 'l';
      what = v.space == Space::shared ? "a shared-memory pointer (a 32-bit shared address)" : "a global pointer (a 64-bit address)";
      value = mlir::LLVM::PtrToIntOp::create(b, l, want == 'r' ? b.getI32Type() : b.getI64Type(), value);
    } else {
      want = letter_for(v.type);
      what = "a " + std::string(name(v.type));
      if (!want) trace_error(which + " is " + what + ", which no constraint takes; cast it to a 16-, 32- or 64-bit type first", where);
      if (want == 'h' && (v.type == DType::f16 || v.type == DType::bf16)) value = mlir::LLVM::BitcastOp::create(b, l, b.getI16Type(), value);
    }
    if (c[0] != want) trace_error(which + " is " + what + ", so its constraint is \"" + want + "\", not \"" + c + "\"", where);
    llvm_constraints += (llvm_constraints.empty() ? "" : ",") + c;
    values.push_back(value);
  }
  llvm_constraints += llvm_constraints.empty() ? "~{memory}" : ",~{memory}";
  auto op = mlir::LLVM::InlineAsmOp::create(b, l, result ? mlir::TypeRange{result_type} : mlir::TypeRange{}, values, std::string(ptx),
                                            llvm_constraints, /*has_side_effects=*/true, false, mlir::LLVM::TailCallKind::None,
                                            mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());
  if (!result) return ValueId{};
  mlir::Value out = op.getResult(0);
  if (result_type != t.type(*result)) out = mlir::LLVM::BitcastOp::create(b, l, t.type(*result), out);
  return t.add(out, *result);
}

}  // namespace cutejit::detail
