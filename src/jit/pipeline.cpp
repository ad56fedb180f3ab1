#include "jit/pipeline.hpp"

#include <chrono>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/Bytecode/BytecodeWriter.h>
#include <mlir/IR/AttrTypeSubElements.h>
#include <mlir/IR/BuiltinOps.h>

#include "assemble/assemble.hpp"
#include "assemble/nvrtc.hpp"
#include "cache/key.hpp"
#include "cutejit/cache/kernel_cache.hpp"
#include "core/dump.hpp"
#include "lower/lower.hpp"
#include "core/warnings.hpp"
#include "trace/cuda_programs.hpp"
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
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(true, true);
  m->print(os, flags);
  return s;
}
/// The module as the cache key reads it: MLIR bytecode (a complete, deterministic serialization,
/// written about 7x faster than the text form: 2.5 ms instead of 17 ms for the BF16 GEMM), with
/// each location's file reduced to its name. A header's path is spelled as each translation
/// unit reached it (`/src/app/k.hpp`, or `../app/k.hpp` under ccache's base_dir, or another
/// build's directory), and the compiler copies a kernel's body into each unit that traces it,
/// so with the paths in the key one program could trace one kernel as two entries, and a cache
/// warmed by one binary would miss in another. The lines and columns stay in. Locations held in
/// the module's own attributes (where a cuda_function was declared) are read the same way.
std::string key_bytecode(mlir::ModuleOp m) {
  mlir::OwningOpRef<mlir::ModuleOp> copy = m.clone();
  mlir::AttrTypeReplacer file_names;
  file_names.addReplacement([](mlir::FileLineColLoc l) -> mlir::Attribute {
    return mlir::FileLineColLoc::get(l.getContext(), llvm::sys::path::filename(l.getFilename().getValue()), l.getLine(), l.getColumn());
  });
  file_names.recursivelyReplaceElementsIn(*copy, /*replaceAttrs=*/false, /*replaceLocs=*/true, /*replaceTypes=*/false);
  file_names.replaceElementsIn(*copy, /*replaceAttrs=*/true, /*replaceLocs=*/false, /*replaceTypes=*/false);
  std::string s;
  llvm::raw_string_ostream os(s);
  if (mlir::failed(mlir::writeBytecodeToFile(*copy, os))) return print(*copy);  // never seen; the text is a sound key too
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
    try {
      trace_body();
    } catch (const Error& e) {
      // A check that knows no user line (the layout algebra's, a tensor's) is put on the
      // kernel's: every error from a trace names a line of the user's code.
      if (e.located()) throw;
      throw Error("in kernel '" + kernel + "' (defined here): " + std::string(e.message()), defined_at);
    }
    module = trace.finish();
  }
  out.times.trace_ms = ms_since(clock);
  if (dump.enabled()) dump.write("traced.mlir", print(*module));
  const std::vector<CudaProgram> cuda = cuda_programs(*module);

  // The disk cache is keyed by the traced module with its lines and columns (they become the
  // PTX's line info). A hit skips verification too: the entry was stored only after this same
  // module passed it, for this target, with this cutejit. Then lowering, LLVM and the assembler.
  KernelCache cache = KernelCache::from_environment();
  if (cache.enabled()) {
    // The CUDA sources are in the module; the NVRTC that compiles them is not. "linked-ptx":
    // such an entry holds NVRTC's PTX too (for the emulated device); older entries, which do
    // not, are never found.
    out.cache_key = cache_key(key_bytecode(*module), target, cuda.empty() ? "" : "linked-ptx " + nvrtc_version());
    // With CUTEJIT_DUMP set every stage runs, so that every stage is dumped.
    std::optional<CompiledKernel> hit = dump.enabled() ? std::nullopt : cache.load(out.cache_key);
    out.times.cache_ms = ms_since(clock);
    if (hit && hit->name == kernel && hit->target == target) {
      hit->times = out.times;
      return std::move(*hit);
    }
    if (hit)
      warn_once("cache entry", "the kernel cache entry " + out.cache_key + " holds kernel '" + hit->name + "' for " + hit->target.name() +
                                   ", not '" + kernel + "' for " + target.name() + "; recompiling and replacing it");
  }

  verify_module(*module, target, kernel);
  out.times.verify_ms = ms_since(clock);

  llvm::LLVMContext llvm_context;
  std::unique_ptr<llvm::Module> llvm_module = lower_to_llvm(*module, llvm_context, dump);
  out.times.lower_ms = ms_since(clock);

  out.ptx = emit_ptx(*llvm_module, target, dump);
  out.times.codegen_ms = ms_since(clock);
  dump.write("ptx", out.ptx);

  std::vector<LinkedPtx> linked;
  for (size_t i = 0; i < cuda.size(); ++i) {
    linked.push_back({"cuda_function_" + std::to_string(i), compile_cuda_program(cuda[i], target, kernel)});
    dump.write("cuda_function_" + std::to_string(i) + ".ptx", linked.back().ptx);
    out.linked_ptx.push_back(linked.back().ptx);
  }
  Assembled assembled = assemble(out.ptx, target, kernel, linked);
  out.cubin = std::move(assembled.cubin);
  out.assembler = assembled.assembler;
  out.times.assemble_ms = ms_since(clock);
  dump.write("cubin", std::string_view(out.cubin.data(), out.cubin.size()));
  if (cache.enabled()) {
    cache.store(out.cache_key, out);
    out.times.cache_ms += ms_since(clock);
  }
  return out;
}

}  // namespace cutejit::detail
