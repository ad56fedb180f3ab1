/** \file
 * LLVM IR -> PTX: libdevice and NVSHMEM (only when the kernel calls them), LLVM's O3 pipeline as the NVPTX
 * target configures it, and the NVPTX back end. Only the NVPTX target is initialised, so no
 * other back end is linked into libcutejit.
 */
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>

#include "cutejit/core/error.hpp"
#include "lower/lower.hpp"
#include "support/cuda_toolkit.hpp"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace cutejit::detail {

namespace {

constexpr const char* nvptx_triple = "nvptx64-nvidia-cuda";

/// The target's machine; `min_ptx` (e.g. 88), when set, raises its PTX ISA version to what a
/// linked library's code needs (its inline PTX may use newer syntax than the target's default).
llvm::TargetMachine& target_machine(const Target& target, int min_ptx) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  thread_local std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines;
  std::unique_ptr<llvm::TargetMachine>& tm = machines[target.name() + "+" + std::to_string(min_ptx)];
  if (!tm) {
    std::string error;
    llvm::Triple triple(nvptx_triple);
    const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, error);
    if (!t) throw Error("internal error: the NVPTX back end is not available: " + error);
    // LLVM's default PTX ISA is 7.0 for sm_80 and sm_86, 7.8 for sm_89, 8.0 for sm_90 and 8.6
    // for sm_100a, but ptxas takes mbarrier.test_wait.parity only from PTX 7.1, mma.sync with
    // FP8 operands only from 8.4, a TMA load into shared::cta only from 8.6, and tcgen05's
    // kind::mxf4nvf4 and .block16/.block32 scale vectors only from 8.7 / 8.8; every other
    // target's default is new enough.
    std::string features = target.sm == 90   ? "+ptx86"
                           : target.sm == 89 ? "+ptx84"
                           : target.sm < 89  ? "+ptx71"
                           : target.sm == 100 ? "+ptx88"
                                              : "";
    // A ptx feature only ever raises the version LLVM picks.
    if (min_ptx) features += (features.empty() ? "+ptx" : ",+ptx") + std::to_string(min_ptx);
    tm.reset(t->createTargetMachine(triple, target.name(), features, llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
                                    llvm::CodeGenOptLevel::Aggressive));
  }
  return *tm;
}

std::filesystem::path libdevice_path() {
  for (const auto& root : cuda_roots()) {
    auto p = root / "nvvm" / "libdevice" / "libdevice.10.bc";
    if (std::filesystem::exists(p)) return p;
  }
  throw Error("this kernel uses accurate math (exp, log, sin, ...), which needs the CUDA toolkit's libdevice.10.bc, and it was "
              "not found: " + searched_for({"nvvm/libdevice"}, false) + ". Or use the cutejit::fast:: variants, which need no library");
}

void link_libdevice_if_used(llvm::Module& m) {
  bool used = false;
  for (const llvm::Function& f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) used = true;
  if (!used) return;
  auto buffer = llvm::MemoryBuffer::getFile(libdevice_path().string());
  if (!buffer) throw Error("could not read libdevice: " + buffer.getError().message());
  // Read lazily: the linker materializes only the functions the kernel calls (and theirs),
  // where parsing all of libdevice's would cost every kernel that calls one about 25 ms.
  auto lib = llvm::getOwningLazyBitcodeModule(std::move(*buffer), m.getContext());
  if (!lib) throw Error("could not parse libdevice: " + llvm::toString(lib.takeError()));
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded))
    throw Error("internal error: linking libdevice failed");
  // Only the kernel is an entry point; the library functions may be inlined and dropped.
  for (llvm::Function& f : m)
    if (!f.isDeclaration() && f.getCallingConv() != llvm::CallingConv::PTX_Kernel) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
}

std::string to_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

}  // namespace

std::string emit_ptx(llvm::Module& m, const Target& target, const DumpSink& dump) {
  m.setTargetTriple(llvm::Triple(nvptx_triple));
  m.setDataLayout(target_machine(target, 0).createDataLayout());
  link_libdevice_if_used(m);
  llvm::TargetMachine& tm = target_machine(target, link_nvshmem_if_used(m, target));
  if (dump.enabled()) dump.write("ll", to_text(m));

  std::string broken;
  llvm::raw_string_ostream broken_os(broken);
  if (llvm::verifyModule(m, &broken_os))
    throw Error("internal error: cutejit produced invalid LLVM IR; please report it with the kernel:\n" + broken);

  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(&tm);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
  }
  if (dump.enabled()) dump.write("opt.ll", to_text(m));

  llvm::SmallString<0> ptx;
  {
    llvm::raw_svector_ostream os(ptx);
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
      throw Error("internal error: the NVPTX back end cannot emit PTX for " + target.name());
    pm.run(m);
  }
  return std::string(ptx.str());
}

}  // namespace cutejit::detail
