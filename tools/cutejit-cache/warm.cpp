// cutejit-cache warm: compile a manifest's specializations for every target a deployment ships
// to, into the cache, on any machine (no GPU needed).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include <cutejit/core/error.hpp>

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
  int jobs = jobs_option(args);
  use_cache_directory(cache, "warm fills it");
  load_plugin(*plugin);
  std::vector<WorkItem> items = work_list(args);
  if (items.empty())
    throw cutejit::Error("nothing to warm: the manifest lists none of the chosen kernels (" + *args.option("--manifest") + ")");

  auto start = std::chrono::steady_clock::now();
  ProgressBar bar(items.size());
  size_t compiled = 0, cached = 0;
  nlohmann::json failures = nlohmann::json::array();
  auto fail = [&](const WorkItem& item, const std::string& error) {
    bar.finish();
    fmt::print(stderr, "failed: {} for {}: {}\n", item.specialization.kernel, item.target.name(), error);
    failures.push_back({{"kernel", item.specialization.kernel}, {"target", item.target.name()}, {"error", error}});
  };
  auto stored = [&](const WorkResult& r) { return cache.contains(r.kernel.cache_key); };
  std::vector<WorkResult> results = compile_all(items, jobs, [&](size_t done, const WorkItem& item, WorkResult& r) {
    // A kernel compiled but not in the cache: stored again, which says why when it fails (a
    // read-only or full directory, a file-size limit, an entry larger than the size limit, a
    // directory another user controls). Another process's eviction or removal since the
    // compile fails nothing: the store puts it back.
    if (r.error.empty() && !stored(r))
      if (std::string why = cache.store(r.kernel.cache_key, r.kernel); !why.empty()) r.error = "compiled, but the cache did not keep it: " + why;
    if (!r.error.empty()) fail(item, r.error);
    else ++(r.kernel.from_cache ? cached : compiled);
    bar.update(done, item);
  });
  bar.finish();
  // Entries stored early may be gone by the end: evicted by the size limit to make room for
  // later ones, or removed by another process. The limit is blamed only when it can be.
  uint64_t missing_bytes = 0;
  std::vector<size_t> gone;
  for (size_t i = 0; i < items.size(); ++i)
    if (results[i].error.empty() && !stored(results[i]))  // an entry is its PTX and cubin, plus a header and metadata (< 4 KiB)
      gone.push_back(i), missing_bytes += results[i].kernel.cubin.size() + results[i].kernel.ptx.size() + 4096;
  const bool limit_reached = !gone.empty() && cache.size_bytes() + missing_bytes >= cache.max_bytes();
  for (size_t i : gone) {
    --(results[i].kernel.from_cache ? cached : compiled);
    fail(items[i], limit_reached ? "evicted by the cache's size limit (" + human_size(cache.max_bytes()) +
                                       ") before warm finished; raise CUTEJIT_CACHE_MAX_SIZE"
                                 : "removed from the cache before warm finished, not by its size limit (" + human_size(cache.max_bytes()) +
                                       "): by another process (clear, prune, verify or another program's eviction)");
  }

  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (args.flag("--json")) {
    nlohmann::json out = {{"kernels", items.size()}, {"compiled", compiled}, {"already_cached", cached},
                          {"failed", failures},      {"seconds", seconds},   {"jobs", jobs},
                          {"directory", cache.directory().string()}};
    fmt::print("{}\n", out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("{} kernels in {:.2f} s ({} jobs, {:.1f} kernels/s): {} compiled, {} already cached, {} failed\n", items.size(), seconds,
               jobs, seconds > 0 ? double(compiled + cached) / seconds : 0.0, compiled, cached, failures.size());
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
