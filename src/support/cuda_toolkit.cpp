#include "support/cuda_toolkit.hpp"

#include <cstdlib>

namespace cutejit::detail {

std::vector<std::filesystem::path> cuda_roots() {
  if (const char* v = std::getenv("CUTEJIT_CUDA_HOME"); v && *v) return {std::filesystem::path(v)};
  std::vector<std::filesystem::path> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) roots.emplace_back(v);
  roots.emplace_back("/usr/local/cuda");
  return roots;
}

}  // namespace cutejit::detail
