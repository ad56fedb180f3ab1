// The C++ header `cutejit-cache export` writes: the cubins, embedded, and one typed launch
// function per kernel signature that picks the exported specialization the arguments allow.
// It needs only the CUDA driver API (cuda.h, libcuda) to build and run.
#pragma once

#include <string>
#include <vector>

#include <cutejit/core/compiled.hpp>
#include <cutejit/jit/registry.hpp>
#include <cutejit/jit/specialization.hpp>

namespace cli {

struct ExportedKernel {
  cutejit::Specialization specialization;  ///< target: the one `kernel` was compiled for
  cutejit::CompiledKernel kernel;
};

/// The header's text. Throws cutejit::Error for a parameter it cannot express.
std::string export_header(const std::string& ns, const std::vector<ExportedKernel>& kernels);

}  // namespace cli
