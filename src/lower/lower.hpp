/** \file
 * The lowering half of the pipeline: a verified MLIR module (gpu.module with one kernel) to
 * LLVM IR, then LLVM O3 and the NVPTX back end to PTX.
 */
#pragma once

#include <memory>
#include <string>

#include "cutejit/core/target.hpp"
#include "core/dump.hpp"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm
namespace mlir {
class MLIRContext;
class ModuleOp;
}  // namespace mlir

namespace cutejit::detail {

/// The kernel attribute listing, as an i32 array, the parameters that are grid constants
/// (by-value tensor maps). The tracer sets it; the lowering turns each listed `!llvm.ptr`
/// parameter into `ptr byval([N x i8]) align 64 "nvvm.grid_constant"`.
inline constexpr const char* grid_constant_attribute = "cutejit.grid_constant";
/// The size of a CUtensorMap, the only grid constant cutejit passes.
inline constexpr int grid_constant_bytes = 128;

/// The MLIR context of this thread, with the dialects, conversions and translations cutejit
/// uses registered once (creating one costs about a millisecond).
mlir::MLIRContext& thread_mlir_context();

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
