#include "jit/pipeline.hpp"

#include <chrono>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/BuiltinOps.h>

#include "assemble/assemble.hpp"
#include "jit/dump.hpp"
#include "lower/lower.hpp"
#include "trace/trace.hpp"
#include "verify/verify.hpp"

namespace cutejit::detail {

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point& start) {
  auto now = Clock::now();
  double ms = std::chrono::duration<double, std::milli>(now - start).count();
  start = now;
  return ms;
}
std::string print(mlir::ModuleOp m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m->print(os, mlir::OpPrintingFlags().enableDebugInfo(true, true));
  return s;
}
}  // namespace

CompiledKernel compile_specialization(const std::string& kernel, const Target& target, std::source_location defined_at,
                                      const std::function<void()>& trace_body) {
  CompiledKernel out;
  out.name = kernel;
  out.target = target;
  DumpSink dump(kernel, target.name());
  auto clock = Clock::now();

  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    Trace trace(thread_mlir_context(), kernel, target, defined_at);
    trace_body();
    module = trace.finish();
  }
  out.times.trace_ms = ms_since(clock);
  if (dump.enabled()) dump.write("traced.mlir", print(*module));

  verify_module(*module, target, kernel);
  out.times.verify_ms = ms_since(clock);

  llvm::LLVMContext llvm_context;
  std::unique_ptr<llvm::Module> llvm_module = lower_to_llvm(*module, llvm_context, dump);
  out.times.lower_ms = ms_since(clock);

  out.ptx = emit_ptx(*llvm_module, target, dump);
  out.times.codegen_ms = ms_since(clock);
  dump.write("ptx", out.ptx);

  Assembled assembled = assemble(out.ptx, target, kernel);
  out.cubin = std::move(assembled.cubin);
  out.assembler = assembled.assembler;
  out.times.assemble_ms = ms_since(clock);
  dump.write("cubin", std::string_view(out.cubin.data(), out.cubin.size()));
  return out;
}

}  // namespace cutejit::detail
