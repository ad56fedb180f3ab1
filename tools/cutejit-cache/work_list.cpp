#include "work_list.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include <cutejit/core/error.hpp>
#include <cutejit/jit/autotune.hpp>

namespace cli {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::optional<std::vector<std::string>> chosen_names(const Arguments& args, const std::string& option, const std::string& noun,
                                                     const std::string& example, const std::function<void(const std::string&)>& check) {
  std::optional<std::string> text = args.option(option);
  if (!text) return std::nullopt;
  std::vector<std::string> names = split_commas(*text);
  if (names.empty()) throw UsageError{option + " lists no " + noun + "; give e.g. " + option + " " + example};
  for (const std::string& name : names) check(name);
  return names;
}

void use_cache_directory(const cutejit::KernelCache& cache, const char* needs_it) {
  setenv("CUTEJIT_CACHE_DIR", cache.directory().c_str(), 1);
  if (needs_it && !cutejit::KernelCache::from_environment().enabled())
    throw cutejit::Error("error: the disk cache is off (CUTEJIT_CACHE=" + std::string(std::getenv("CUTEJIT_CACHE") ? std::getenv("CUTEJIT_CACHE") : "") +
                         "); " + needs_it + ", so unset CUTEJIT_CACHE");
}

std::vector<WorkItem> work_list(const Arguments& args) {
  std::optional<std::string> manifest = args.option("--manifest");
  if (!manifest) throw UsageError{"--manifest FILE is required (write one with CUTEJIT_RECORD=FILE)"};
  std::vector<cutejit::Specialization> specs = cutejit::read_manifest(*manifest);

  if (auto wanted = chosen_names(args, "--kernels", "kernel", "gemm,vector_add", [](const std::string& k) { cutejit::find_registered_kernel(k); }))
    std::erase_if(specs, [&](const cutejit::Specialization& s) { return std::find(wanted->begin(), wanted->end(), s.kernel) == wanted->end(); });

  std::vector<cutejit::Target> targets;
  if (std::optional<std::string> t = args.option("--targets")) {
    for (const std::string& name : split_commas(*t)) {
      try {
        targets.push_back(cutejit::Target::parse(name));
      } catch (const cutejit::Error& e) {
        throw UsageError{std::string(e.what())};
      }
    }
    if (targets.empty()) throw UsageError{"--targets lists no target; give e.g. sm_90a,sm_100a"};
  }

  std::vector<WorkItem> items;
  std::set<std::string> seen;  // the same specialization recorded on several targets
  for (const cutejit::Specialization& s : specs) {
    std::vector<cutejit::Target> these = targets;
    if (these.empty()) {
      if (s.target.empty())
        throw UsageError{"the manifest does not say which target '" + s.kernel + "' was recorded on; pass --targets"};
      these.push_back(cutejit::Target::parse(s.target));
    }
    for (const cutejit::Target& t : these) {
      cutejit::Specialization one = s;
      one.target = t.name();
      if (seen.insert(cutejit::manifest_line(one)).second) items.push_back({std::move(one), t});
    }
  }
  return items;
}

std::vector<WorkResult> compile_all(const std::vector<WorkItem>& items, int jobs,
                                    const std::function<void(size_t, const WorkItem&, WorkResult&)>& progress) {
  std::vector<WorkResult> results(items.size());
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex report;
  auto worker = [&] {
    for (size_t i; (i = next++) < items.size();) {
      WorkResult& r = results[i];
      try {
        r.kernel = cutejit::find_registered_kernel(items[i].specialization.kernel).compile(items[i].target, items[i].specialization);
      } catch (const std::exception& e) {
        r.error = e.what();
      } catch (...) {  // the plugin's own code threw it (`throw 42`): still this kernel's failure, not the CLI's end
        r.error = "the kernel threw an exception that is not a std::exception (the plugin's code threw it; cutejit throws only "
                  "cutejit::Error)";
      }
      std::lock_guard lock(report);
      try {
        progress(++done, items[i], r);
      } catch (const std::exception& e) {
        if (r.error.empty()) r.error = e.what();
      } catch (...) {
        if (r.error.empty()) r.error = "an exception that is not a std::exception";
      }
    }
  };
  std::vector<std::jthread> threads;  // joined on every way out, an exception included
  try {
    for (int t = 1; t < std::min<int>(jobs, int(items.size())); ++t) threads.emplace_back(worker);
  } catch (const std::system_error&) {
    // Fewer threads than asked for: the ones running, and this one, share the work.
  }
  worker();
  return results;
}

int jobs_option(const Arguments& args) {
  std::optional<std::string> j = args.option("-j");
  if (!j) return int(std::max(1u, std::thread::hardware_concurrency()));
  try {
    size_t used = 0;
    int n = std::stoi(*j, &used);
    if (used == j->size() && n >= 1 && n <= 1024) return n;
  } catch (const std::exception&) {
  }
  throw UsageError{"-j takes a number of parallel jobs from 1 to 1024, not '" + *j + "'"};
}

}  // namespace cli
