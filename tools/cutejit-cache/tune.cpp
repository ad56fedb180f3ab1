// cutejit-cache tune: answer a manifest's tuning questions on this machine's GPU, ahead of
// deployment, so that no process of the deployment times candidates (jit/autotune.hpp).
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cutejit/core/error.hpp>
#include <cutejit/jit/autotune.hpp>

#include "work_list.hpp"

namespace cli {

namespace {

int tune(const Arguments& args, const cutejit::KernelCache& cache) {
  std::optional<std::string> plugin = args.option("--plugin"), manifest = args.option("--manifest");
  if (!plugin) throw UsageError{"--plugin LIB is required: the shared library that registers the tuning questions"};
  if (!manifest) throw UsageError{"--manifest FILE is required (write one with CUTEJIT_RECORD=FILE)"};
  use_cache_directory(cache, "tune keeps its decisions there");
  load_plugin(*plugin);
  std::vector<cutejit::TuneKey> questions = cutejit::read_tuning_questions(*manifest);
  if (auto wanted = chosen_names(args, "--tunings", "tuning", "gemm_bf16", [](const std::string& t) { cutejit::find_registered_tuning(t); }))
    std::erase_if(questions, [&](const cutejit::TuneKey& q) { return std::find(wanted->begin(), wanted->end(), q.name) == wanted->end(); });
  if (questions.empty())
    throw cutejit::Error("error: nothing to tune: the manifest " + *manifest +
                         " holds no tuning question of those chosen (a program calling autotune with CUTEJIT_RECORD=FILE writes them)");

  cutejit::Device gpu;  // throws, saying why, where there is no GPU
  cutejit::TuneOptions options;
  options.retune = args.flag("--retune");
  nlohmann::json report = nlohmann::json::array();
  int failures = 0;
  for (const cutejit::TuneKey& q : questions) {
    nlohmann::json line = {{"tune", q.name}, {"values", q.values}};
    try {
      cutejit::TuneOutcome o = cutejit::find_registered_tuning(q.name).run(gpu, q.values, options);
      line["winner"] = o.name;
      line["from_record"] = o.from_record;
      nlohmann::json times = nlohmann::json::object();
      for (const cutejit::TuneTiming& t : o.timings) times[t.name] = t.error.empty() ? nlohmann::json(t.median_ms) : nlohmann::json(t.error);
      line["median_ms"] = times;
      if (!args.flag("--json")) {
        fmt::print("{} [{}]: {} ({})\n", q.name, fmt::join(q.values, ", "), o.name, o.from_record ? "already recorded" : "timed");
        for (const cutejit::TuneTiming& t : o.timings)
          if (t.error.empty()) fmt::print("  {:<12} {:.4f} ms\n", t.name, t.median_ms);
          else fmt::print("  {:<12} failed: {}\n", t.name, t.error);
      }
    } catch (const cutejit::Error& e) {
      ++failures;
      line["error"] = e.what();
      fmt::print(stderr, "failed: {} [{}]: {}\n", q.name, fmt::join(q.values, ", "), e.what());
    }
    report.push_back(line);
  }
  if (args.flag("--json")) fmt::print("{}\n", report.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
  else fmt::print("{} questions on {}: {} answered, {} failed\n", questions.size(), gpu.name(), questions.size() - size_t(failures), failures);
  return failures == 0 ? exit_ok : exit_problems_found;
}

}  // namespace

const Command tune_command{
    "tune", "answer a manifest's tuning questions on this GPU into the cache",
    "usage: cutejit-cache tune --plugin LIB --manifest FILE [--tunings a,b] [--retune] [--json]\n\n"
    "Loads LIB (a shared library whose tuning questions are registered with\n"
    "CUTEJIT_REGISTER_TUNING), reads the questions in FILE (the {\"tune\": ...} lines a program\n"
    "run with CUTEJIT_RECORD=FILE writes for each autotune call), and answers each on this\n"
    "machine's GPU: the candidates are timed and the fastest is recorded in the cache directory,\n"
    "where later processes on the same GPU, driver and cutejit find it. Needs a GPU.\n\n"
    "  --tunings T,...  only these questions of the manifest\n"
    "  --retune         time again where a record already answers\n"
    "  --json           the decisions as JSON on stdout\n\n"
    "Exit code: 0 when every question is answered, 1 when any failed, 2 for a usage mistake.\n",
    {"--json", "--retune"},
    {"--plugin", "--manifest", "--tunings"},
    tune};

}  // namespace cli
