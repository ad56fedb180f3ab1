#include "support/nvshmem_home.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <string_view>
#include <vector>

namespace cutejit::detail {

namespace {

namespace fs = std::filesystem;

bool has_nvshmem(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "libnvshmem_host.so.3", ec)) return true;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().filename().string().starts_with("libnvshmem_device_sm_")) return true;
  return false;
}

/// Every `<site>/nvidia/nvshmem/lib` under `prefix/lib/python3*/{site,dist}-packages`.
void add_wheels(std::vector<fs::path>& out, const fs::path& prefix) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(prefix / "lib", ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("python3")) continue;
    for (const char* site : {"site-packages", "dist-packages"}) out.push_back(entry.path() / site / "nvidia" / "nvshmem" / "lib");
  }
}

/// The folder of a libnvshmem_host.so.3 already in the process (loaded by PyTorch, say).
fs::path loaded_library_dir() {
  void* so = dlopen("libnvshmem_host.so.3", RTLD_LAZY | RTLD_NOLOAD);
  if (!so) return {};
  link_map* map = nullptr;
  fs::path dir;
  if (dlinfo(so, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) dir = fs::path(map->l_name).parent_path();
  dlclose(so);
  return dir;
}

std::vector<fs::path> candidates() {
  std::vector<fs::path> out;
  if (const char* pinned = std::getenv("CUTEJIT_NVSHMEM_HOME"); pinned && *pinned) {
    out.push_back(fs::path(pinned) / "lib");
    out.emplace_back(pinned);
    return out;
  }
  if (const char* home = std::getenv("NVSHMEM_HOME"); home && *home) out.push_back(fs::path(home) / "lib");
  if (fs::path loaded = loaded_library_dir(); !loaded.empty()) out.push_back(loaded);
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* v = std::getenv(var); v && *v) add_wheels(out, v);
  // The Python environments whose bin/ is on PATH: a virtual environment used without being
  // activated (its python3 first on PATH) is found too.
  if (const char* path = std::getenv("PATH"); path && *path) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const fs::path dir(std::string(rest.substr(0, colon)));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      if (dir.filename() == "bin") add_wheels(out, dir.parent_path());
    }
  }
  if (const char* home = std::getenv("HOME"); home && *home) add_wheels(out, fs::path(home) / ".local");
  for (const char* prefix : {"/usr/local", "/usr", "/opt/conda"}) add_wheels(out, prefix);
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu/nvshmem/13", "/usr/lib/x86_64-linux-gnu/nvshmem/12",
                          "/usr/lib/sbsa-linux-gnu/nvshmem/13", "/opt/nvidia/nvshmem/lib", "/usr/local/nvshmem/lib"})
    out.emplace_back(dir);
  return out;
}

}  // namespace

fs::path nvshmem_library_dir() {
  for (const fs::path& dir : candidates())
    if (has_nvshmem(dir)) return dir;
  return {};
}

fs::path nvshmem_device_bitcode(const Target& target) {
  const fs::path dir = nvshmem_library_dir();
  if (dir.empty()) return {};
  // NVSHMEM's bitcode is built for plain sm_XX (no a or f features), whose instructions every
  // later architecture keeps: the newest at or below the target's is the one to link.
  for (int sm : {100, 90, 89, 80, 75}) {
    if (sm > target.sm) continue;
    std::error_code ec;
    fs::path bc = dir / ("libnvshmem_device_sm_" + std::to_string(sm) + ".bc");
    if (fs::exists(bc, ec)) return bc;
  }
  // Earlier releases ship one bitcode for every architecture.
  std::error_code ec;
  if (fs::path bc = dir / "libnvshmem_device.bc"; fs::exists(bc, ec)) return bc;
  return {};
}

std::string nvshmem_searched() {
  if (const char* pinned = std::getenv("CUTEJIT_NVSHMEM_HOME"); pinned && *pinned)
    return "looked only in " + std::string(pinned) + "/lib and " + pinned +
           ", because CUTEJIT_NVSHMEM_HOME is set; point it at an NVSHMEM 3 installation (the folder holding lib/libnvshmem_host.so.3)";
  return "looked in $NVSHMEM_HOME/lib, the Python wheels' nvidia/nvshmem/lib ($VIRTUAL_ENV, $CONDA_PREFIX, the environments whose "
         "bin/ is on PATH, ~/.local, /usr/local, /usr, /opt/conda) and the system packages' folders; install NVSHMEM 3 (pip install nvidia-nvshmem-cu13) or set "
         "CUTEJIT_NVSHMEM_HOME to where it is";
}

}  // namespace cutejit::detail
