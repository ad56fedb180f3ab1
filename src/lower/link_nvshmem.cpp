/** \file
 * NVSHMEM's device library, linked into a kernel that calls it. NVSHMEM ships its device API as
 * LLVM bitcode (libnvshmem_device_sm_XX.bc) with C names, so it joins the kernel's module before
 * LLVM's optimiser, as libdevice does: the calls are inlined where LLVM sees fit, only what the
 * kernel reaches is kept, and the result is one PTX module that nvJitLink or ptxas assembles with
 * no device-side link step.
 *
 * The library's state (nvshmemi_device_state_d and its version, nvshmemi_device_lib_version_d)
 * stays an external symbol of the module: the host library fills it in for each loaded module
 * (nvshmemx_cumodule_init), after checking that the version matches its own.
 */
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include "cutejit/core/error.hpp"
#include "lower/lower.hpp"
#include "support/nvshmem_home.hpp"

namespace cutejit::detail {

bool calls_nvshmem(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    if (f.isDeclaration() && f.getName().starts_with("nvshmem")) return true;
  return false;
}

int link_nvshmem_if_used(llvm::Module& m, const Target& target) {
  if (!calls_nvshmem(m)) return 0;
  const std::filesystem::path path = nvshmem_device_bitcode(target);
  if (path.empty()) throw Error("this kernel calls NVSHMEM, whose device library (libnvshmem_device_sm_XX.bc) was not found: " + nvshmem_searched());
  auto buffer = llvm::MemoryBuffer::getFile(path.string());
  if (!buffer) throw Error("could not read NVSHMEM's device library " + path.string() + ": " + buffer.getError().message());
  // Lazily: of the library's 50 MB only what the kernel reaches is read.
  auto lib = llvm::getOwningLazyBitcodeModule(std::move(*buffer), m.getContext());
  if (!lib) throw Error("could not parse NVSHMEM's device library " + path.string() + ": " + llvm::toString(lib.takeError()));
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());

  // The version symbol is read only by the host, so nothing in the kernel reaches it: a use
  // keeps it in the link and in the PTX.
  llvm::GlobalVariable* version = (*lib)->getGlobalVariable("nvshmemi_device_lib_version_d");
  if (!version) throw Error(path.string() + " has no nvshmemi_device_lib_version_d; it is not an NVSHMEM 3 device library");
  auto* declared = new llvm::GlobalVariable(m, version->getValueType(), false, llvm::GlobalValue::ExternalLinkage, nullptr,
                                            version->getName(), nullptr, llvm::GlobalValue::NotThreadLocal, version->getAddressSpace());
  llvm::appendToUsed(m, {declared});

  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded))
    throw Error("internal error: linking NVSHMEM's device library " + path.string() + " failed");
  // The library is built for plain sm_XX and a PTX version of its own, which its inline PTX
  // needs (ld.mmio: PTX 8.2): as part of this kernel it is compiled for the kernel's target with
  // at least that PTX version. LLVM inlines only between functions whose targets agree, so
  // its functions lose their own.
  int ptx = 0;
  for (llvm::Function& f : m) {
    if (f.isDeclaration() || f.getCallingConv() == llvm::CallingConv::PTX_Kernel) continue;
    llvm::SmallVector<llvm::StringRef> features;
    f.getFnAttribute("target-features").getValueAsString().split(features, ',');
    for (llvm::StringRef feature : features)
      if (int v = 0; feature.consume_front("+ptx") && !feature.getAsInteger(10, v)) ptx = std::max(ptx, v);
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  return ptx;
}

}  // namespace cutejit::detail
