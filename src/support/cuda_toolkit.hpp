/** \file
 * Where the CUDA toolkit lives: the folders searched for libdevice, nvJitLink and ptxas, and
 * how its libraries are found and their functions resolved.
 */
#pragma once

#include <dlfcn.h>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

namespace cutejit::detail {

/// $CUTEJIT_CUDA_HOME alone when set (a pinned toolkit, no fallback); otherwise $CUDA_HOME,
/// $CUDA_PATH and /usr/local/cuda, in that order. A folder a variable names that cannot be
/// searched (no permission, a symlink loop, a path too long) is left out, said once on stderr.
std::vector<std::filesystem::path> cuda_roots();

/// The toolkit library with one of these sonames (newest first) that cutejit would load: the
/// resolved file in a toolkit's lib64; else, unless CUTEJIT_CUDA_HOME pins the toolkit (then
/// ""), a soname the process has loaded already, or (with `probe_by_loading`) the first one
/// dlopen finds on the library path; else the first soname, for dlopen to search.
std::string toolkit_library(std::initializer_list<const char*> sonames, bool probe_by_loading);

/// Sets `fn` to the symbol `name` of a library `toolkit_library` found and dlopen gave, typed
/// as `fn` is; null when the library lacks it.
template <class Fn>
void load_symbol(void* library, Fn*& fn, const char* name) {
  fn = reinterpret_cast<Fn*>(dlsym(library, name));
}

/// Where something was looked for (the toolkit folders `subs`, e.g. "lib64" and "bin"), as a
/// clause for an error message: exactly the folders searched, and how to point cutejit at a
/// toolkit.
std::string searched_for(std::initializer_list<const char*> subs, bool also_system_path);

}  // namespace cutejit::detail
