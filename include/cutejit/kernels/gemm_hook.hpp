/** \file
 * A function of the caller's, traced into kernels::gemm's epilogue (GemmOptions::hook): it takes
 * each output value in f32, after alpha, beta, the bias, the scales and the activation, with its
 * row and column of C, and returns the value C gets (rounded once to C's type):
 *
 *     auto clamp_rows = kernels::make_gemm_hook([](const F32& v, const Int& row, const Int&) {
 *       return select(row < 4, min(v, F32(1.0f)), v);
 *     });
 *     kernels::gemm(gpu, a, b, c, {.hook = clamp_rows});
 *
 * It runs on every target and kernel gemm picks (the few-row one, wgmma, tcgen05, mma.sync; glu
 * included), as the built-in terms do, and in gemm_block_scaled's (BlockScaledOptions::hook).
 * The function is traced when gemm first meets the hook, so it is written in the DSL (F32, Int,
 * and what they take) and is called once per traced value, not per element at run time. Each
 * hook object is a kernel of its own in this process, so make one per function and keep it (a
 * new hook for every call traces every call); on disk the compiled kernel is found again by its
 * traced code, so another process with the same function compiles nothing. A hooked kernel is
 * traced only from a call that gives its hook (gemm_compile with it warms the cache for another
 * process); a trace without it is an error.
 *
 * This header includes the tracer's (cutejit.hpp); kernels/gemm.hpp alone does not.
 */
#pragma once

#include <functional>
#include <memory>

#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/gemm.hpp"

namespace cutejit::kernels {

class GemmHook {
 public:
  using Function = std::function<F32(const F32& value, const Int& row, const Int& col)>;

  /// Throws when this process has made more hooks than a kernel's key can tell apart (2^19 - 1).
  explicit GemmHook(Function f);

  F32 operator()(const F32& value, const Int& row, const Int& col) const { return function_(value, row, col); }
  /// This hook's number in the process, from 1: what tells its kernels apart from another's.
  int serial() const { return serial_; }

 private:
  Function function_;
  int serial_;
};

/// A hook for GemmOptions::hook.
inline std::shared_ptr<const GemmHook> make_gemm_hook(GemmHook::Function f) { return std::make_shared<const GemmHook>(std::move(f)); }

}  // namespace cutejit::kernels
