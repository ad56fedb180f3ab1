/** \file
 * What compiling one specialization of a kernel produces: the PTX (its own and that of the
 * CUDA functions linked with it), the cubin, and the time each stage of the pipeline took.
 * Returned by `Kernel::compile`, which needs no GPU.
 */
#pragma once

#include <string>
#include <vector>

#include "cutejit/core/target.hpp"

namespace cutejit {

struct StageTimes {
  double trace_ms = 0;     ///< running the user's C++ to build MLIR
  double verify_ms = 0;    ///< MLIR verifier + cutejit's per-target checks
  double lower_ms = 0;     ///< MLIR passes and translation to LLVM IR
  double codegen_ms = 0;   ///< LLVM O3 and the NVPTX back end: LLVM IR -> PTX
  double assemble_ms = 0;  ///< nvJitLink (or ptxas): PTX -> cubin
  double cache_ms = 0;     ///< printing and hashing the traced MLIR, reading or writing the disk cache
  double total_ms() const { return trace_ms + verify_ms + lower_ms + codegen_ms + assemble_ms + cache_ms; }
};

struct CompiledKernel {
  std::string name;        ///< the kernel's symbol in the cubin
  Target target;
  std::string ptx;
  /// The PTX of the CUDA functions it calls (NVRTC's, one module per program), which the
  /// assembler linked with `ptx` into the cubin; the emulated device runs them from here.
  std::vector<std::string> linked_ptx;
  std::vector<char> cubin;
  std::string assembler;   ///< "nvJitLink" or "ptxas" (for a cached kernel: the one that built it)
  StageTimes times;        ///< read from the disk cache: only trace_ms, verify_ms and cache_ms are spent
  std::string cache_key;   ///< the disk-cache key (32 hex digits); empty when the cache is off
  bool from_cache = false; ///< the cubin came from the disk cache: no lowering, LLVM or assembler ran
};

}  // namespace cutejit
