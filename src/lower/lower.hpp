/** \file
 * The lowering half of the pipeline: a verified MLIR module (gpu.module with one kernel) to
 * LLVM IR, then LLVM O3 and the NVPTX back end to PTX.
 */
#pragma once

#include <memory>
#include <string>

#include "cutejit/core/target.hpp"
#include "core/dump.hpp"
#include "ir/mlir_context.hpp"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm
namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace cutejit::detail {

/// MLIR passes (scf -> cf, gpu/arith/nvvm -> llvm, canonicalize, cse, line-info scopes), then
/// translation of the kernel to an LLVM module in `context`.
std::unique_ptr<llvm::Module> lower_to_llvm(mlir::ModuleOp module, llvm::LLVMContext& context, const DumpSink& dump);

/// Whether the module calls NVSHMEM's device API (functions named nvshmem*).
bool calls_nvshmem(const llvm::Module& module);
/// Links NVSHMEM's device bitcode for `target` into a module that calls it (link_nvshmem.cpp);
/// returns the PTX ISA version its code needs (88 for PTX 8.8), 0 when nothing was linked.
int link_nvshmem_if_used(llvm::Module& module, const Target& target);

/// Links libdevice and NVSHMEM when the kernel calls them, runs LLVM O3 for the target and emits PTX.
std::string emit_ptx(llvm::Module& module, const Target& target, const DumpSink& dump);

}  // namespace cutejit::detail
