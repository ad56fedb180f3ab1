/** \file
 * Where the CUDA toolkit lives: the folders searched for libdevice, nvJitLink and ptxas.
 */
#pragma once

#include <filesystem>
#include <vector>

namespace cutejit::detail {

/// $CUTEJIT_CUDA_HOME alone when set (a pinned toolkit, no fallback); otherwise $CUDA_HOME,
/// $CUDA_PATH and /usr/local/cuda, in that order.
std::vector<std::filesystem::path> cuda_roots();

}  // namespace cutejit::detail
