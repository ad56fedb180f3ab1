#include "support/cuda_toolkit.hpp"

#include <dlfcn.h>

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

std::string toolkit_library(std::initializer_list<const char*> sonames, bool probe_by_loading) {
  for (const auto& root : cuda_roots())
    for (const char* name : sonames)
      if (std::error_code ec; std::filesystem::exists(root / "lib64" / name, ec))
        return std::filesystem::canonical(root / "lib64" / name, ec).string();
  if (std::getenv("CUTEJIT_CUDA_HOME")) return "";
  for (const char* name : sonames)
    if (void* so = dlopen(name, RTLD_LAZY | RTLD_LOCAL | (probe_by_loading ? 0 : RTLD_NOLOAD))) {
      dlclose(so);
      return name;
    }
  return *sonames.begin();
}

std::string searched_for(std::initializer_list<const char*> subs, bool also_system_path) {
  std::string folders;
  for (const auto& root : cuda_roots()) {
    std::error_code ec;
    for (const char* sub : subs) folders += (folders.empty() ? "" : ", ") + (root / sub).string();
    if (!std::filesystem::exists(root, ec)) folders += " (" + root.string() + " does not exist)";
  }
  if (const char* pinned = std::getenv("CUTEJIT_CUDA_HOME"); pinned && *pinned)
    return "looked only in " + folders + ", because CUTEJIT_CUDA_HOME is set; point it at a CUDA toolkit, or unset it to search " +
           "$CUDA_HOME, $CUDA_PATH and /usr/local/cuda";
  return "looked in " + folders + (also_system_path ? " and the system's search path" : "") +
         "; install the CUDA toolkit there, or set CUDA_HOME (or CUTEJIT_CUDA_HOME) to where it is";
}

}  // namespace cutejit::detail
