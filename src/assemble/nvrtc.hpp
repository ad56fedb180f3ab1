/** \file
 * CUDA C++ -> PTX with NVRTC (dlopen'ed from the CUDA toolkit, like nvJitLink), for the CUDA
 * functions a traced kernel calls. The PTX is relocatable, so nvJitLink links it with the
 * kernel's own.
 */
#pragma once

#include <string>

#include "core/cuda_program.hpp"
#include "cutejit/core/target.hpp"

namespace cutejit::detail {

/// PTX of the program (the user's source and its wrappers) for `target`. Remembered for the
/// process, so kernels that share a CUDA function compile it once. A compile error is a
/// cutejit::Error at the function's declaration, with NVRTC's messages on the user's lines.
std::string compile_cuda_program(const CudaProgram& program, const Target& target, const std::string& kernel);

/// The NVRTC library's identity ("nvrtc /usr/local/cuda/lib64/libnvrtc.so.13.0.88 <size>", or
/// "none"), found without loading it: part of the cache key of a kernel that calls CUDA code.
std::string nvrtc_version();

}  // namespace cutejit::detail
