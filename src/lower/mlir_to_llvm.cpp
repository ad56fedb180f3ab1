/** \file
 * MLIR -> LLVM IR. The gpu.module is lowered to the LLVM and NVVM dialects in place, its
 * contents are moved into a builtin module (where MLIR's line-table pass works), and that
 * module is translated. Locations are the user's file:line, so the PTX carries line info.
 */
#include <mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h>
#include <mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h>
#include <mlir/Conversion/Passes.h>
#include <mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h>
#include <mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/LLVMIR/Transforms/Passes.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Target/LLVMIR/Export.h>
#include <mlir/Transforms/Passes.h>

#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "cutejit/jit/error.hpp"
#include "lower/lower.hpp"

namespace cutejit::detail {

namespace {
std::string print(mlir::Operation* op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os, mlir::OpPrintingFlags().enableDebugInfo(true, true));
  return s;
}

/// Runs a pass manager, turning MLIR diagnostics into one cutejit::Error.
void run(mlir::PassManager& pm, mlir::Operation* op, const char* stage) {
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(op->getContext(), [&](mlir::Diagnostic& d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });
  if (mlir::failed(pm.run(op)))
    throw Error(std::string("internal error: ") + stage + " failed; this is a cutejit bug, please report it with the kernel:\n" +
                diagnostics);
}
}  // namespace

std::unique_ptr<llvm::Module> lower_to_llvm(mlir::ModuleOp module, llvm::LLVMContext& context, const DumpSink& dump) {
  mlir::MLIRContext* ctx = module.getContext();
  {
    mlir::PassManager pm(ctx);
    pm.addPass(mlir::createSCFToControlFlowPass());
    mlir::OpPassManager& gpu = pm.nest<mlir::gpu::GPUModuleOp>();
    mlir::ConvertGpuOpsToNVVMOpsOptions options;
    options.indexBitwidth = 64;
    gpu.addPass(mlir::createConvertGpuOpsToNVVMOps(options));
    gpu.addPass(mlir::createConvertNVVMToLLVMPass());
    gpu.addPass(mlir::createCanonicalizerPass());
    gpu.addPass(mlir::createCSEPass());
    pm.addPass(mlir::createReconcileUnrealizedCastsPass());
    run(pm, module, "lowering to the LLVM dialect");
  }

  auto gpu_module = *module.getBody()->getOps<mlir::gpu::GPUModuleOp>().begin();
  mlir::OpBuilder b(ctx);
  mlir::OwningOpRef<mlir::ModuleOp> kernel = mlir::ModuleOp::create(gpu_module.getLoc());
  kernel->getBody()->getOperations().splice(kernel->getBody()->begin(), gpu_module.getBody()->getOperations());
  {
    mlir::PassManager pm(ctx);
    pm.addPass(mlir::LLVM::createDIScopeForLLVMFuncOpPass());
    run(pm, *kernel, "attaching line information");
  }
  if (dump.enabled()) dump.write("lowered.mlir", print(*kernel));

  std::unique_ptr<llvm::Module> llvm_module = mlir::translateModuleToLLVMIR(*kernel, context, "cutejit");
  if (!llvm_module) throw Error("internal error: translation to LLVM IR failed; this is a cutejit bug, please report it");
  return llvm_module;
}

}  // namespace cutejit::detail
