// What warm and export share: load the user's kernels (--plugin), read the specializations
// (--manifest), choose the targets (--targets), and compile the (specialization, target)
// pairs in parallel (-j).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <cutejit/core/compiled.hpp>
#include <cutejit/jit/registry.hpp>
#include <cutejit/jit/specialization.hpp>
#include <cutejit/core/target.hpp>

#include "cli.hpp"

namespace cli {

struct WorkItem {
  cutejit::Specialization specialization;
  cutejit::Target target;
};

struct WorkResult {
  cutejit::CompiledKernel kernel;  ///< empty cubin when it failed
  std::string error;
};

/// dlopens the shared library that registers the kernels (CUTEJIT_REGISTER), after loading it
/// once in a child process (plugin.cpp). Throws cutejit::Error naming the plugin when it cannot
/// be loaded, throws, crashes or exits while loading, or registers nothing.
void load_plugin(const std::string& path);

/// The hidden first argument that makes cutejit-cache the child that tries a plugin.
inline constexpr const char* probe_flag = "--probe-plugin";
/// The child's side: loads `file`, says on stdout how that went, and exits.
[[noreturn]] void probe_plugin(const char* file);

/// The specializations of --manifest (only those of --kernels a,b,... when given) crossed with
/// --targets (default: the target each was recorded on). Throws UsageError or cutejit::Error.
std::vector<WorkItem> work_list(const Arguments& args);

/// Compiles every item with `jobs` threads, the disk cache included. `progress` is called
/// after each item (from the worker threads, one call at a time).
std::vector<WorkResult> compile_all(const std::vector<WorkItem>& items, int jobs,
                                    const std::function<void(size_t done, const WorkItem&, WorkResult&)>& progress);

/// "a,b,,c" -> {"a", "b", "c"}
std::vector<std::string> split_commas(const std::string& text);

/// The names `option` lists (--kernels a,b), each passed to `check`, which throws for one that
/// is not registered (a typo is an error, not an empty result); nothing when the option is not
/// given. A list of no names is a usage mistake: "--kernels lists no kernel; give e.g.
/// --kernels <example>".
std::optional<std::vector<std::string>> chosen_names(const Arguments& args, const std::string& option, const std::string& noun,
                                                     const std::string& example, const std::function<void(const std::string&)>& check);

/// Points the library at the command's cache directory (the JIT and autotune read it from the
/// environment). With `needs_it` ("warm fills it"), throws Error unless the disk cache is on.
void use_cache_directory(const cutejit::KernelCache& cache, const char* needs_it = nullptr);

/// -j N (default: the machine's cores).
int jobs_option(const Arguments& args);

}  // namespace cli
