/** \file
 * Calls to hand-written CUDA C++ functions (cuda_function). The kernel declares and calls an
 * extern "C" wrapper with only 32- and 64-bit integer parameters: the bits of every argument,
 * narrow ones widened. Both sides of the call then agree on its ABI whatever LLVM's NVPTX
 * backend and NVRTC each do with floats and 8/16-bit values. The wrapper, generated here and
 * compiled by NVRTC with the user's source, turns the bits back into the function's types.
 *
 * The programs are recorded on the module (attribute `cutejit.cuda_programs`), so they are
 * part of the bytes the disk cache's key is computed from.
 */
#include <string>

#include <mlir/Dialect/LLVMIR/LLVMDialect.h>

#include "cutejit/dsl/cuda_function.hpp"
#include "trace/cuda_programs.hpp"
#include "trace/trace.hpp"

namespace cutejit::detail {

namespace {

constexpr const char* programs_attribute = "cutejit.cuda_programs";

/// How one type crosses the call: the wrapper's C type for it, and its conversions.
struct Crossing {
  const char* abi;   ///< the wrapper's parameter and result type
  std::string (*in)(const std::string& bits);   ///< bits -> the user's type
  std::string (*out)(const std::string& value); ///< the user's type -> bits
  bool wide;         ///< 64 bits
};

Crossing crossing(DType t, const Where& w) {
  auto same = [](const std::string& s) { return s; };
  switch (t) {
    case DType::i1: return {"unsigned", [](const std::string& s) { return "bool(" + s + ")"; }, [](const std::string& s) { return "unsigned(bool(" + s + "))"; }, false};
    case DType::i8: return {"int", [](const std::string& s) { return "(signed char)(" + s + ")"; }, [](const std::string& s) { return "int((signed char)(" + s + "))"; }, false};
    case DType::u8: return {"unsigned", [](const std::string& s) { return "(unsigned char)(" + s + ")"; }, [](const std::string& s) { return "unsigned((unsigned char)(" + s + "))"; }, false};
    case DType::i16: return {"int", [](const std::string& s) { return "short(" + s + ")"; }, [](const std::string& s) { return "int(short(" + s + "))"; }, false};
    case DType::u16: return {"unsigned", [](const std::string& s) { return "(unsigned short)(" + s + ")"; }, [](const std::string& s) { return "unsigned((unsigned short)(" + s + "))"; }, false};
    case DType::i32: return {"int", same, [](const std::string& s) { return "int(" + s + ")"; }, false};
    case DType::u32: return {"unsigned", same, [](const std::string& s) { return "unsigned(" + s + ")"; }, false};
    case DType::i64: return {"long long", same, [](const std::string& s) { return "(long long)(" + s + ")"; }, true};
    case DType::u64: return {"unsigned long long", same, [](const std::string& s) { return "(unsigned long long)(" + s + ")"; }, true};
    case DType::f32: return {"unsigned", [](const std::string& s) { return "__uint_as_float(" + s + ")"; }, [](const std::string& s) { return "__float_as_uint(float(" + s + "))"; }, false};
    case DType::f64: return {"long long", [](const std::string& s) { return "__longlong_as_double(" + s + ")"; }, [](const std::string& s) { return "__double_as_longlong(double(" + s + "))"; }, true};
    case DType::f16: return {"unsigned", [](const std::string& s) { return "__ushort_as_half((unsigned short)(" + s + "))"; }, [](const std::string& s) { return "unsigned(__half_as_ushort(__half(" + s + ")))"; }, false};
    case DType::bf16: return {"unsigned", [](const std::string& s) { return "__ushort_as_bfloat16((unsigned short)(" + s + "))"; }, [](const std::string& s) { return "unsigned(__bfloat16_as_ushort(__nv_bfloat16(" + s + ")))"; }, false};
    case DType::f8e4m3:
    case DType::f8e5m2: break;
  }
  trace_error("a cuda_function cannot take or return " + std::string(name(t)) + "; pass its bits as uint8_t and convert in the CUDA source", w);
}

/// The wrapper's definition: extern "C", calling `spec.name` with the arguments converted back.
std::string wrapper(const CudaFunctionSpec& spec, const std::string& symbol, const Where& w) {
  std::string params, args;
  for (size_t i = 0; i < spec.params.size(); ++i) {
    Crossing c = crossing(spec.params[i], w);
    std::string a = "a" + std::to_string(i);
    params += (i ? ", " : "") + std::string(c.abi) + " " + a;
    args += (i ? ", " : "") + c.in(a);
  }
  std::string call = "(" + spec.name + ")(" + args + ")";
  std::string result = spec.returns ? crossing(spec.result, w).abi : "void";
  std::string body = spec.returns ? "return " + crossing(spec.result, w).out(call) + ";" : call + ";";
  return "extern \"C\" __device__ " + result + " " + symbol + "(" + params + ") { " + body + " }";
}

mlir::Type abi_type(Trace& t, DType d, const Where& w) {
  return crossing(d, w).wide ? t.builder().getI64Type() : t.builder().getI32Type();
}

/// A value's bits as the wrapper takes them.
mlir::Value to_abi(Trace& t, ValueId id, DType d, const Where& w) {
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(w);
  mlir::Value v = t.value(id, w);
  mlir::Type abi = abi_type(t, d, w);
  if (d == DType::f16 || d == DType::bf16) v = mlir::LLVM::BitcastOp::create(b, l, b.getI16Type(), v);
  if (d == DType::f32) v = mlir::LLVM::BitcastOp::create(b, l, b.getI32Type(), v);
  if (d == DType::f64) v = mlir::LLVM::BitcastOp::create(b, l, b.getI64Type(), v);
  if (v.getType() == abi) return v;
  if (is_signed(d) && !is_float(d)) return mlir::LLVM::SExtOp::create(b, l, abi, v);
  return mlir::LLVM::ZExtOp::create(b, l, abi, v);
}

/// The wrapper's result bits as a traced value of `d`.
mlir::Value from_abi(Trace& t, mlir::Value v, DType d, const Where& w) {
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(w);
  mlir::Type type = t.type(d);
  if (d == DType::f32 || d == DType::f64) return mlir::LLVM::BitcastOp::create(b, l, type, v);
  if (d == DType::f16 || d == DType::bf16)
    return mlir::LLVM::BitcastOp::create(b, l, type, mlir::LLVM::TruncOp::create(b, l, b.getI16Type(), v));
  if (v.getType() == type) return v;
  return mlir::LLVM::TruncOp::create(b, l, type, v);
}

std::string location_text(const Where& w) { return std::string(w.file_name()) + ":" + std::to_string(w.line()); }
/// "file:line" of a declaration recorded on the module (by `record`).
std::string declared_text(mlir::Attribute declared) {
  if (auto l = mlir::dyn_cast<mlir::FileLineColLoc>(declared)) return l.getFilename().str() + ":" + std::to_string(l.getLine());
  return "(unknown location)";
}

/// Records the call's wrapper on the module, in the program of its source and options, and
/// returns the wrapper's symbol: one per distinct function and signature in this kernel.
std::string record(Trace& t, const CudaFunctionSpec& spec, const Where& w) {
  mlir::ModuleOp module = t.module();
  mlir::Builder b(&t.context());
  llvm::SmallVector<mlir::Attribute> programs;
  if (auto existing = module->getAttrOfType<mlir::ArrayAttr>(programs_attribute)) programs.assign(existing.begin(), existing.end());
  llvm::SmallVector<mlir::Attribute> options;
  for (const auto& o : spec.options) options.push_back(b.getStringAttr(o));
  const mlir::ArrayAttr options_attr = b.getArrayAttr(options);
  // A wrapper written without its symbol identifies the function and signature it calls.
  const mlir::StringAttr signature = b.getStringAttr(wrapper(spec, "", w));

  int calls = 0;
  int program = -1;
  for (size_t k = 0; k < programs.size(); ++k) {
    auto dict = mlir::cast<mlir::DictionaryAttr>(programs[k]);
    auto signatures = mlir::cast<mlir::ArrayAttr>(dict.get("signatures"));
    calls += int(signatures.size());
    if (mlir::cast<mlir::StringAttr>(dict.get("source")).getValue() != spec.source) continue;
    // One source is one program: compiled twice, with two sets of options, its functions
    // would be defined twice in the link.
    if (dict.get("options") != options_attr)
      trace_error("cuda_function \"" + spec.name + "\" (declared at " + location_text(spec.declared) +
                      ") has the source of one called earlier in this kernel, with other NVRTC options; a kernel compiles each source "
                      "once: give its functions the same options",
                  w);
    for (size_t i = 0; i < signatures.size(); ++i)
      if (signatures[i] == signature) return mlir::cast<mlir::StringAttr>(mlir::cast<mlir::ArrayAttr>(dict.get("symbols"))[i]).str();
    program = int(k);
  }
  const std::string symbol = "cutejit_cuda_call_" + std::to_string(calls);
  auto appended = [&](mlir::DictionaryAttr dict, const char* field, mlir::Attribute value) {
    llvm::SmallVector<mlir::Attribute> list;
    if (dict) list.assign(mlir::cast<mlir::ArrayAttr>(dict.get(field)).begin(), mlir::cast<mlir::ArrayAttr>(dict.get(field)).end());
    list.push_back(value);
    return b.getNamedAttr(field, b.getArrayAttr(list));
  };
  mlir::DictionaryAttr old = program >= 0 ? mlir::cast<mlir::DictionaryAttr>(programs[size_t(program)]) : mlir::DictionaryAttr();
  mlir::DictionaryAttr updated = b.getDictionaryAttr({
      b.getNamedAttr("source", b.getStringAttr(spec.source)),
      b.getNamedAttr("options", options_attr),
      // A location, not its text: the cache key reads a location's file by name alone.
      b.getNamedAttr("declared", old ? old.get("declared") : mlir::Attribute(mlir::LocationAttr(t.loc(spec.declared)))),
      appended(old, "symbols", b.getStringAttr(symbol)),
      appended(old, "signatures", signature),
      appended(old, "wrappers", b.getStringAttr(wrapper(spec, symbol, w))),
      appended(old, "names", b.getStringAttr(spec.name)),
  });
  if (program >= 0)
    programs[size_t(program)] = updated;
  else
    programs.push_back(updated);
  module->setAttr(programs_attribute, b.getArrayAttr(programs));
  return symbol;
}

}  // namespace

ValueId call_cuda_function(const CudaFunctionSpec& spec, std::span<const ValueId> args, Where where) {
  Trace& t = Trace::current(where);
  if (spec.name.empty() || spec.name.find_first_of(";{}\"\n") != std::string::npos)
    trace_error("cuda_function's name \"" + spec.name + "\" is not a C++ name (declared at " + location_text(spec.declared) +
                    "); give the name of the __device__ function in its source, e.g. \"my_op\" or \"ns::op<float>\"",
                where);
  if (spec.source.empty()) trace_error("cuda_function \"" + spec.name + "\" has an empty source (declared at " + location_text(spec.declared) + ")", where);
  if (args.size() != spec.params.size()) trace_error("cuda_function \"" + spec.name + "\": wrong number of arguments", where);
  for (size_t i = 0; i < args.size(); ++i)
    if (t.get(args[i], where).pointer || t.get(args[i], where).type != spec.params[i])
      trace_error("cuda_function \"" + spec.name + "\": argument " + std::to_string(i + 1) + " is not a " + std::string(name(spec.params[i])), where);

  const std::string symbol = record(t, spec, where);
  mlir::OpBuilder& b = t.builder();
  auto func = t.gpu_module().lookupSymbol<mlir::LLVM::LLVMFuncOp>(symbol);
  if (!func) {
    llvm::SmallVector<mlir::Type> params;
    for (DType d : spec.params) params.push_back(abi_type(t, d, where));
    mlir::Type result = spec.returns ? abi_type(t, spec.result, where) : mlir::LLVM::LLVMVoidType::get(&t.context());
    mlir::OpBuilder::InsertionGuard guard(b);
    b.restoreInsertionPoint(t.module_point());
    func = mlir::LLVM::LLVMFuncOp::create(b, t.loc(spec.declared), symbol, mlir::LLVM::LLVMFunctionType::get(result, params));
  }
  llvm::SmallVector<mlir::Value> operands;
  for (size_t i = 0; i < args.size(); ++i) operands.push_back(to_abi(t, args[i], spec.params[i], where));
  auto call = mlir::LLVM::CallOp::create(b, t.loc(where), func, operands);
  if (!spec.returns) return ValueId{};
  return t.add(from_abi(t, call.getResult(), spec.result, where), spec.result);
}

std::vector<CudaProgram> cuda_programs(mlir::ModuleOp module) {
  std::vector<CudaProgram> out;
  auto programs = module->getAttrOfType<mlir::ArrayAttr>(programs_attribute);
  if (!programs) return out;
  auto strings = [](mlir::Attribute a) {
    std::vector<std::string> s;
    for (auto e : mlir::cast<mlir::ArrayAttr>(a)) s.push_back(mlir::cast<mlir::StringAttr>(e).getValue().str());
    return s;
  };
  for (auto p : programs) {
    auto dict = mlir::cast<mlir::DictionaryAttr>(p);
    out.push_back({mlir::cast<mlir::StringAttr>(dict.get("source")).getValue().str(), strings(dict.get("options")),
                   strings(dict.get("wrappers")), strings(dict.get("names")),
                   declared_text(dict.get("declared"))});
  }
  return out;
}

}  // namespace cutejit::detail
