// cutejit-cache warm: compile a manifest's specializations for every target a deployment ships
// to, into the cache, on any machine (no GPU needed).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include <cutejit/jit/error.hpp>

#include "work_list.hpp"

namespace cli {

namespace {

/// One line redrawn in place on a terminal; nothing when stderr is a file or a pipe.
class ProgressBar {
 public:
  explicit ProgressBar(size_t total) : total_(total), live_(isatty(STDERR_FILENO)) {}
  void update(size_t done, const WorkItem& item) {
    if (!live_) return;
    constexpr int width = 30;
    int filled = int(width * done / std::max<size_t>(total_, 1));
    std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu %s %s\033[K", filled, "##############################", width - filled, "", done, total_,
                 item.specialization.kernel.c_str(), item.target.name().c_str());
    std::fflush(stderr);
  }
  void finish() {
    if (live_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  size_t total_;
  bool live_;
};

int warm(const Arguments& args, const cutejit::KernelCache& cache) {
  std::optional<std::string> plugin = args.option("--plugin");
  if (!plugin) throw UsageError{"--plugin LIB is required: the shared library that registers the kernels"};
  if (const char* off = std::getenv("CUTEJIT_CACHE"); off && std::string(off) == "off")
    throw cutejit::Error("error: CUTEJIT_CACHE=off: warm fills the disk cache, so it needs the cache on");
  int jobs = jobs_option(args);
  load_plugin(*plugin);
  std::vector<WorkItem> items = work_list(args);
  // The JIT reads its cache directory from the environment: point it at the one chosen here.
  setenv("CUTEJIT_CACHE_DIR", cache.directory().c_str(), 1);

  auto start = std::chrono::steady_clock::now();
  ProgressBar bar(items.size());
  size_t compiled = 0, cached = 0;
  nlohmann::json failures = nlohmann::json::array();
  std::vector<WorkResult> results = compile_all(items, jobs, [&](size_t done, const WorkItem& item, WorkResult& r) {
    // A kernel compiled but not stored (read-only or full directory) is a failure of warm.
    if (r.error.empty() && !std::filesystem::exists(cache.entries_directory() / (r.kernel.cache_key + ".entry")))
      r.error = "compiled, but the cache did not keep it (see the warning above)";
    if (!r.error.empty()) {
      bar.finish();
      std::fprintf(stderr, "failed: %s for %s: %s\n", item.specialization.kernel.c_str(), item.target.name().c_str(), r.error.c_str());
      failures.push_back({{"kernel", item.specialization.kernel}, {"target", item.target.name()}, {"error", r.error}});
    } else {
      ++(r.kernel.from_cache ? cached : compiled);
    }
    bar.update(done, item);
  });
  bar.finish();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (args.flag("--json")) {
    nlohmann::json out = {{"kernels", items.size()}, {"compiled", compiled}, {"already_cached", cached},
                          {"failed", failures},      {"seconds", seconds},   {"jobs", jobs},
                          {"directory", cache.directory().string()}};
    std::printf("%s\n", out.dump(1).c_str());
  } else {
    std::printf("%zu kernels in %.2f s (%d jobs, %.1f kernels/s): %zu compiled, %zu already cached, %zu failed\n", items.size(),
                seconds, jobs, seconds > 0 ? double(compiled + cached) / seconds : 0.0, compiled, cached, failures.size());
  }
  return failures.empty() ? exit_ok : exit_problems_found;
}

}  // namespace

const Command warm_command{
    "warm", "compile a manifest's kernels for chosen targets into the cache",
    "usage: cutejit-cache warm --plugin LIB --manifest FILE [--targets sm_90a,sm_100a,...] [--kernels a,b] [-j N] [--json]\n\n"
    "Loads LIB (a shared library whose kernels are registered with CUTEJIT_REGISTER), reads the\n"
    "specializations listed in FILE (written by any program run with CUTEJIT_RECORD=FILE) and\n"
    "compiles each for each target into the cache. Needs no GPU.\n\n"
    "  --targets T,...  targets to compile for; default: the one each entry was recorded on\n"
    "  --kernels K,...  only these kernels of the manifest\n"
    "  -j N             parallel compiles (default: the number of cores)\n"
    "  --json           the summary as JSON on stdout\n\n"
    "Prints a progress bar on a terminal, each failure with its reason, and a summary.\n"
    "Exit code: 0 when every kernel is in the cache, 1 when any failed, 2 for a usage mistake.\n",
    {"--json"},
    {"--plugin", "--manifest", "--targets", "--kernels", "-j"},
    warm};

}  // namespace cli
