/** \file
 * What the tracer and the lowering share about MLIR: the thread's context, with cutejit's
 * dialects and translations registered, and the attributes one stage leaves for the other.
 * Below both stages, so that the tracer needs nothing of the lowering.
 */
#pragma once

namespace mlir {
class MLIRContext;
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

}  // namespace cutejit::detail
