// The read-only subcommands: list, stats, show.
#include <cstdio>
#include <string_view>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cutejit/core/error.hpp>

#include "cli.hpp"

namespace cli {

namespace {

nlohmann::json entry_json(const cutejit::CacheEntryInfo& e) {
  return {{"key", e.key},         {"kernel", e.kernel}, {"target", e.target}, {"bytes", e.file_bytes},
          {"created", e.created}, {"last_used", e.last_used}, {"metadata", nlohmann::json::parse(e.metadata_json)}};
}

int list(const Arguments& args, const cutejit::KernelCache& cache) {
  std::vector<cutejit::CacheEntryInfo> entries = cache.list();
  if (args.flag("--json")) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : entries) out.push_back(entry_json(e));
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";  // paths need not be UTF-8
    return exit_ok;
  }
  if (entries.empty()) {
    fmt::print("No entries in {}\n", cache.entries_directory().string());
    return exit_ok;
  }
  constexpr std::string_view row = "{:<32}  {:<24}  {:<8}  {:>10}  {}\n";
  fmt::print(row, "KEY", "KERNEL", "TARGET", "SIZE", "LAST USED");
  for (const auto& e : entries) fmt::print(row, e.key, e.kernel, e.target, human_size(e.file_bytes), human_time(e.last_used));
  return exit_ok;
}

int stats(const Arguments& args, const cutejit::KernelCache& cache) {
  // One reading of the directory: counts that a concurrent writer cannot make disagree.
  cutejit::CacheStats st = cache.stats();
  if (args.flag("--json")) {
    nlohmann::json per_target = nlohmann::json::object();
    for (const auto& [target, n] : st.per_target) per_target[target] = n;
    nlohmann::json out = {{"directory", cache.directory().string()}, {"entries", st.entries}, {"bytes", st.entry_bytes},
                          {"unreadable", st.unreadable}, {"unreadable_bytes", st.unreadable_bytes}, {"temporary", st.temporary},
                          {"temporary_bytes", st.temporary_bytes}, {"abandoned", st.abandoned}, {"max_bytes", cache.max_bytes()},
                          {"per_target", per_target}};
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";  // paths need not be UTF-8
    return exit_ok;
  }
  fmt::print("directory   {}\n", cache.directory().string());
  fmt::print("entries     {} readable, {} on disk (limit {})\n", st.entries, human_size(st.entry_bytes), human_size(cache.max_bytes()));
  for (const auto& [target, n] : st.per_target) fmt::print("  {:<9} {}\n", target, n);
  if (st.unreadable) fmt::print("unreadable  {}, {} (`cutejit-cache verify` removes them)\n", st.unreadable, human_size(st.unreadable_bytes));
  if (st.temporary)
    fmt::print("temporary   {}, {}, {} abandoned (older than an hour; the next store or `prune` removes those)\n", st.temporary,
               human_size(st.temporary_bytes), st.abandoned);
  return exit_ok;
}

int show(const Arguments& args, const cutejit::KernelCache& cache) {
  if (args.positional().size() != 1) throw UsageError{"give exactly one KEY (or a unique prefix of one)"};
  cutejit::CacheEntryInfo e = cache.show(args.positional()[0]);
  if (args.flag("--ptx")) {
    // As stored, whichever cutejit wrote it; reading it is not a use.
    std::optional<cutejit::CompiledKernel> k = cache.read(e.key);
    if (!k) throw cutejit::Error("the entry " + e.key + " changed or went away while it was read");
    std::cout << k->ptx;
    return exit_ok;
  }
  nlohmann::json out = entry_json(e);
  out["file"] = (cache.entries_directory() / (e.key + ".entry")).string();
  std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";  // paths need not be UTF-8
  return exit_ok;
}

}  // namespace

const Command list_command{"list", "list the entries, most recently used first",
                           "usage: cutejit-cache list [--json]\n\n"
                           "Lists every readable entry: key, kernel, target, size and last use, most recently used first.\n"
                           "  --json   one JSON array, an object per entry with its full metadata\n",
                           {"--json"}, {}, list};

const Command stats_command{"stats", "entry count and size, per target",
                            "usage: cutejit-cache stats [--json]\n\n"
                            "Shows the directory, the number of entries and their size against the limit\n"
                            "(CUTEJIT_CACHE_MAX_SIZE), and the entries per target.\n",
                            {"--json"}, {}, stats};

const Command show_command{"show", "one entry's metadata (or its PTX)",
                           "usage: cutejit-cache show KEY [--ptx]\n\n"
                           "Prints the metadata of the entry whose key starts with KEY, as JSON.\n"
                           "  --ptx    print the entry's PTX instead\n",
                           {"--ptx"}, {}, show, 1};

}  // namespace cli
