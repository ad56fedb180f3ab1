// The subcommands that change the cache: verify, prune, clear.
#include <cstdio>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <cutejit/core/error.hpp>

#include "cli.hpp"

namespace cli {

namespace {

/// Says what could not be removed; whether anything was.
bool report_failures(const cutejit::CacheRemoval& r) {
  if (r.failed) fmt::print(stderr, "error: {} file(s) could not be removed; the first: {}\n", r.failed, r.first_error);
  return r.failed > 0;
}

int verify(const Arguments& args, const cutejit::KernelCache& cache) {
  bool keep = args.flag("--keep");
  cutejit::CacheVerifyReport report = cache.verify(/*remove_bad=*/!keep);
  size_t removed = 0;
  for (const auto& bad : report.bad) {
    removed += bad.removed;
    std::string fate = keep ? "" : bad.removed ? " (removed)" : " (not removed: " + bad.removal_error + ")";
    fmt::print("bad  {}: {}{}\n", bad.file, bad.problem, fate);
  }
  std::string summary = report.bad.empty() || keep ? "" : fmt::format(", {} removed", removed);
  fmt::print("{} entries checked, {} bad{}\n", report.checked, report.bad.size(), summary);
  return report.bad.empty() ? exit_ok : exit_problems_found;
}

int prune(const Arguments& args, const cutejit::KernelCache& cache) {
  std::optional<std::string> size = args.option("--max-size");
  if (!size) throw UsageError{"--max-size SIZE is required (e.g. --max-size 500M)"};
  uint64_t limit = 0;
  try {
    limit = cutejit::KernelCache::parse_size(*size);
  } catch (const cutejit::Error& e) {
    throw UsageError{std::string(e.what()).substr(std::string_view(e.what()).starts_with("error: ") ? 7 : 0)};
  }
  cutejit::CacheRemoval removed = cache.prune(limit);
  const uint64_t left = cache.size_bytes();
  fmt::print("removed {}; {} left (limit {})\n", human_size(removed.bytes), human_size(left), human_size(limit));
  return report_failures(removed) || left > limit ? exit_problems_found : exit_ok;
}

int clear(const Arguments&, const cutejit::KernelCache& cache) {
  cutejit::CacheRemoval removed = cache.clear();
  fmt::print("removed {} entries from {}\n", removed.entries, cache.entries_directory().string());
  return report_failures(removed) ? exit_problems_found : exit_ok;
}

}  // namespace

const Command verify_command{"verify", "re-check every entry; remove the bad ones",
                             "usage: cutejit-cache verify [--keep]\n\n"
                             "Reads every entry and checks its header, size, checksum, metadata and cubin.\n"
                             "Bad entries are listed with the reason and removed. Exit code 1 when any was bad.\n"
                             "  --keep   report bad entries but leave them in place\n",
                             {"--keep"}, {}, verify};

const Command prune_command{"prune", "remove least-recently-used entries down to a size",
                            "usage: cutejit-cache prune --max-size SIZE\n\n"
                            "Removes the least recently used entries until the cache holds at most SIZE\n"
                            "(bytes, or with K, M, G, T: e.g. 500M, 1.5G). Also removes temporary files\n"
                            "abandoned by writers that died. Exit code 1 when the cache is still above SIZE.\n",
                            {}, {"--max-size"}, prune};

const Command clear_command{"clear", "remove every entry",
                            "usage: cutejit-cache clear\n\n"
                            "Removes every entry, and temporary files older than an hour (younger ones belong to\n"
                            "writers at work). Kernels are recompiled on next use. Exit code 1 when a file\n"
                            "could not be removed.\n",
                            {}, {}, clear};

}  // namespace cli
