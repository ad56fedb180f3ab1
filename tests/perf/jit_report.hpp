// What the attention benchmarks print of a kernel's cold JIT: its phases, and the registers and
// local memory the driver reports for the loaded cubin.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstdio>

#include <cutejit/cutejit.hpp>

#include "gpu_timing.hpp"

namespace bench {

/// The cold JIT (trace -> cubin) of one kernel in `ms`, its registers, local memory and, where
/// given, shared memory per CTA.
inline void report_jit(const cutejit::CompiledKernel& k, double ms, uint32_t shared_bytes = 0) {
  CUmodule module;
  CUfunction f;
  check(cuModuleLoadData(&module, k.cubin.data()), "cuModuleLoadData");
  check(cuModuleGetFunction(&f, module, k.name.c_str()), "cuModuleGetFunction");
  int regs = 0, local = 0;
  check(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f), "cuFuncGetAttribute");
  check(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f), "cuFuncGetAttribute");
  std::printf("%s_jit: trace->cubin %.1f ms (trace %.2f verify %.2f lower %.2f O3+PTX %.2f assemble %.2f); "
              "%d registers, %d bytes local memory per thread",
              k.name.c_str(), ms, k.times.trace_ms, k.times.verify_ms, k.times.lower_ms, k.times.codegen_ms, k.times.assemble_ms, regs,
              local);
  if (shared_bytes) std::printf(", %u bytes shared per CTA", shared_bytes);
  std::printf("\n");
}

}  // namespace bench
