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
#include <mlir/IR/Verifier.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Target/LLVMIR/Export.h>
#include <mlir/Transforms/Passes.h>

#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "cutejit/core/error.hpp"
#include "lower/lower.hpp"

namespace cutejit::detail {

namespace {
std::string print(mlir::Operation* op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os, mlir::OpPrintingFlags().enableDebugInfo(true, true));
  return s;
}

/// Runs a pass manager, turning MLIR diagnostics into one cutejit::Error. The module is verified
/// once, after the last pass, not after each: on an attention kernel's 20,000 operations every
/// verification costs about 10 ms, and the traced module was verified before lowering.
void run(mlir::PassManager& pm, mlir::Operation* op, const char* stage) {
  pm.enableVerifier(false);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(op->getContext(), [&](mlir::Diagnostic& d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });
  if (mlir::failed(pm.run(op)) || mlir::failed(mlir::verify(op)))
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

  // scf-to-cf carries a loop's hints as the discardable attribute "llvm.loop_annotation" onto
  // its back branch; the LLVM branch op reads them from its own loop_annotation property.
  module.walk([](mlir::Operation* op) {
    auto hint = op->getDiscardableAttr("llvm.loop_annotation");
    if (!hint) return;
    if (auto br = mlir::dyn_cast<mlir::LLVM::BrOp>(op)) br.setLoopAnnotationAttr(mlir::cast<mlir::LLVM::LoopAnnotationAttr>(hint));
    if (auto br = mlir::dyn_cast<mlir::LLVM::CondBrOp>(op))
      br.setLoopAnnotationAttr(mlir::cast<mlir::LLVM::LoopAnnotationAttr>(hint));
    op->removeDiscardableAttr("llvm.loop_annotation");
  });

  // Grid-constant parameters (tensor maps) become byval + nvvm.grid_constant, which NVPTX
  // lowers to a `.param .align 64 .b8 [128]` addressed in place (cvta.param), never copied.
  module.walk([&](mlir::LLVM::LLVMFuncOp f) {
    auto listed = f->getAttrOfType<mlir::DenseI32ArrayAttr>(grid_constant_attribute);
    if (!listed) return;
    auto bytes = mlir::LLVM::LLVMArrayType::get(mlir::IntegerType::get(ctx, 8), grid_constant_bytes);
    for (int32_t i : listed.asArrayRef()) {
      f.setArgAttr(unsigned(i), mlir::LLVM::LLVMDialect::getByValAttrName(), mlir::TypeAttr::get(bytes));
      // NVVMDialect::getGridConstantAttrName(), spelled out: NVVMDialect.h costs 15 s of compile.
      f.setArgAttr(unsigned(i), "nvvm.grid_constant", mlir::UnitAttr::get(ctx));
    }
    f->removeAttr(grid_constant_attribute);
  });

  auto gpu_module = *module.getBody()->getOps<mlir::gpu::GPUModuleOp>().begin();
  mlir::OpBuilder b(ctx);
  mlir::OwningOpRef<mlir::ModuleOp> kernel = mlir::ModuleOp::create(gpu_module.getLoc());
  kernel->getBody()->getOperations().splice(kernel->getBody()->begin(), gpu_module.getBody()->getOperations());
  {
    mlir::PassManager pm(ctx);
    // Line directives only (.loc, as nvcc -lineinfo): a LineTablesOnly compile unit makes NVPTX
    // write `.target sm_XX, debug`, which puts ptxas in debug mode (e.g. wgmma is serialized).
    mlir::LLVM::DIScopeForLLVMFuncOpPassOptions options;
    options.emissionKind = mlir::LLVM::DIEmissionKind::DebugDirectivesOnly;
    pm.addPass(mlir::LLVM::createDIScopeForLLVMFuncOpPass(options));
    run(pm, *kernel, "attaching line information");
  }
  if (dump.enabled()) dump.write("lowered.mlir", print(*kernel));

  std::unique_ptr<llvm::Module> llvm_module = mlir::translateModuleToLLVMIR(*kernel, context, "cutejit");
  if (!llvm_module) throw Error("internal error: translation to LLVM IR failed; this is a cutejit bug, please report it");
  return llvm_module;
}

}  // namespace cutejit::detail
