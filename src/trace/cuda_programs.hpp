/** \file
 * The CUDA C++ programs a traced module calls into (cuda_function), as the tracer recorded
 * them on the module: what the pipeline hands to NVRTC before linking.
 */
#pragma once

#include <vector>

#include <mlir/IR/BuiltinOps.h>

#include "core/cuda_program.hpp"

namespace cutejit::detail {

std::vector<CudaProgram> cuda_programs(mlir::ModuleOp module);

}  // namespace cutejit::detail
