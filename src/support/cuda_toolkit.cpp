#include "support/cuda_toolkit.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/warnings.hpp"

namespace cutejit::detail {

namespace {

/// Whether the folder a variable names can be searched: it exists (or plainly does not: a
/// missing folder is searched and reported as missing) and this process may look inside it.
/// One that cannot (no permission, a symlink loop, a path too long) would make every lookup
/// under it throw, so it is skipped, said once per variable.
bool usable(const char* variable, const std::filesystem::path& root, const char* fallback) {
  struct stat st {};
  int error = stat(root.c_str(), &st) != 0 ? errno : S_ISDIR(st.st_mode) && faccessat(AT_FDCWD, root.c_str(), X_OK, AT_EACCESS) != 0 ? errno : 0;
  if (error == 0 || error == ENOENT || error == ENOTDIR) return true;
  std::string shown = root.string().size() > 200 ? root.string().substr(0, 200) + "..." : root.string();
  warn_once(variable, std::string(variable) + "=" + shown + " cannot be used (" + std::strerror(error) + "), so it is skipped; " + fallback);
  return false;
}

}  // namespace

std::vector<std::filesystem::path> cuda_roots() {
  if (const char* v = std::getenv("CUTEJIT_CUDA_HOME"); v && *v) {
    if (usable("CUTEJIT_CUDA_HOME", v, "it pins the toolkit, so no other folder is searched")) return {std::filesystem::path(v)};
    return {};
  }
  std::vector<std::filesystem::path> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v && usable(var, v, "the rest of $CUDA_HOME, $CUDA_PATH and /usr/local/cuda are searched"))
      roots.emplace_back(v);
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
    return "looked only in " + (folders.empty() ? std::string(pinned) + " (which cannot be used)" : folders) + ", because CUTEJIT_CUDA_HOME is set; point it at a CUDA toolkit, or unset it to search " +
           "$CUDA_HOME, $CUDA_PATH and /usr/local/cuda";
  return "looked in " + folders + (also_system_path ? " and the system's search path" : "") +
         "; install the CUDA toolkit there, or set CUDA_HOME (or CUTEJIT_CUDA_HOME) to where it is";
}

}  // namespace cutejit::detail
