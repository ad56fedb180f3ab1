// autotune: records of tuning decisions, the parallel preparation of candidates, and the
// registry of tuning questions (jit/autotune.hpp).
#include "cutejit/jit/autotune.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "cutejit/cache/kernel_cache.hpp"
#include "cache/files.hpp"
#include "cache/key.hpp"
#include "cache/trust.hpp"
#include "driver/driver.hpp"
#include "jit/tuning_manifest.hpp"
#include "support/bounded_json.hpp"
#include "core/warnings.hpp"

namespace cutejit {

namespace detail {

TuneContext tune_context(const Device& gpu) {
  int driver = 0;
  const Driver& d = Driver::of(gpu.context());
  d.check(d.cuDriverGetVersion(&driver), "cuDriverGetVersion");
  return {gpu.name(), gpu.target().name(), driver};
}

namespace {

/// Everything a decision is filed under: a different GPU, driver, cutejit or set of candidates
/// asks a different question.
nlohmann::json record_key(const TuneContext& context, const TuneKey& key, const std::vector<std::string>& names) {
  return {{"name", key.name},       {"values", key.values},        {"candidates", names},
          {"device", context.device}, {"target", context.target}, {"driver", context.driver},
          {"cutejit", CUTEJIT_VERSION}};  // a constant: toolchain_versions() would look nvJitLink up on disk
}

constexpr std::string_view record_format = "cutejit-tune 1";
/// A record is a few hundred bytes; anything larger at a record's name is not one.
constexpr uint64_t max_record_bytes = 64 << 10;

std::filesystem::path records_directory(const KernelCache& cache) { return cache.directory() / "tune" / "v1"; }

/// The winner a sound record names, or nothing (no record, or one that fails a check: said once).
std::optional<std::string> read_record(const std::filesystem::path& file, const nlohmann::json& key) {
  ReadResult r = read_whole_file(file, max_record_bytes);
  if (r.missing) return std::nullopt;
  std::string problem = r.refused ? "not a regular file of at most 64 KiB" : r.error;
  // A record decides which of this program's kernels runs: like a cache entry, it is believed
  // only when this user or root wrote it (cache/trust.hpp).
  if (r.bytes) problem = distrust(r.owner, r.mode);
  nlohmann::json j;
  if (r.bytes && problem.empty()) j = parse_bounded_json(*r.bytes, 8, problem);  // a record nests 3 deep
  if (r.bytes && problem.empty()) try {
      if (!j.is_object() || j.value("format", "") != record_format) problem = "not a tuning record of this format";
      else if (j.value("key", nlohmann::json()) != key) problem = "its key is not the question asked (another question under this name)";
      else if (const nlohmann::json& w = j.value("winner", nlohmann::json()); !w.is_string()) problem = "it names no winner";
      else if (std::ranges::find(key["candidates"], w) == key["candidates"].end()) problem = "its winner is not a candidate";
      else return w.get<std::string>();
    } catch (const nlohmann::json::exception&) {
      problem = "not valid JSON";
    }
  warn_once("tuning record", "ignoring the tuning record " + file.string() + " (" + problem + "); timing the candidates again");
  return std::nullopt;
}

void write_record(const KernelCache& cache, const std::string& file_name, const nlohmann::json& key, const std::string& winner,
                  const std::vector<TuneTiming>& timings) {
  nlohmann::json ms = nlohmann::json::object();
  for (const TuneTiming& t : timings)
    if (t.error.empty()) ms[t.name] = t.median_ms;
  auto now = std::chrono::system_clock::now().time_since_epoch();
  nlohmann::json j = {{"format", record_format},
                      {"key", key},
                      {"winner", winner},
                      {"median_ms", ms},
                      {"created", std::chrono::duration_cast<std::chrono::seconds>(now).count()}};
  std::string error = write_atomically(records_directory(cache), file_name, j.dump(1) + "\n", {.create_directory = true});
  if (!error.empty()) warn_once("tuning record write", "a tuning decision is not kept on disk: " + error);
}

/// Decisions made or read in this process, by the key's text.
struct Memory {
  std::mutex mutex;
  std::map<std::string, std::string> winners;
};
Memory& memory() {
  static Memory& m = *new Memory;  // never destroyed: autotune may run from other static destructors
  return m;
}
void remember(const std::string& question, const std::string& winner) {
  std::lock_guard lock(memory().mutex);
  memory().winners[question] = winner;
}

/// Runs `prepare(i)` for every candidate on up to `jobs` threads; a throw becomes its error.
std::vector<TuneLaunch> prepare_all(size_t count, int jobs, void* cuda_context, const std::function<TuneLaunch(size_t)>& prepare,
                                    std::vector<TuneTiming>& timings) {
  std::vector<TuneLaunch> launches(count);
  std::atomic<size_t> next = 0;
  // The calling thread keeps whatever context it has (the runtime remembers each thread's);
  // a new thread has none until it is given the GPU's.
  auto worker = [&](bool new_thread) {
    std::string no_context;
    if (cuda_context && new_thread) {
      const Driver& d = Driver::of(cuda_context);
      CUresult rc = d.cuCtxSetCurrent(static_cast<CUcontext>(cuda_context));
      if (rc != CUDA_SUCCESS) no_context = "error: autotune could not make the GPU's context current on a worker thread (CUresult " + std::to_string(int(rc)) + ")";
    }
    for (size_t i; (i = next++) < count;) try {
        if (!no_context.empty()) throw Error(no_context);
        launches[i] = prepare(i);
      } catch (const std::exception& e) {
        timings[i].error = e.what();
      }
  };
  int threads = jobs > 0 ? jobs : int(std::max(1u, std::thread::hardware_concurrency()));
  threads = int(std::min<size_t>(size_t(threads), count));
  {
    std::vector<std::jthread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker, true);
    worker(false);
  }  // joined here
  return launches;
}

/// CUTEJIT_RETUNE: "1" times again; "0" or unset lets records answer; anything else is said once.
bool retune_setting() {
  std::string v = setting("CUTEJIT_RETUNE");
  if (v == "1") return true;
  if (!v.empty() && v != "0") warn_once("CUTEJIT_RETUNE", "CUTEJIT_RETUNE='" + v + "' ignored: it takes 1 (time again) or 0");
  return false;
}

}  // namespace

size_t autotune_choice(const TuneContext& context, void* cuda_context, const TuneKey& key, const std::vector<std::string>& names,
                       const std::function<TuneLaunch(size_t)>& prepare, const TuneTimer& time, const TuneOptions& options,
                       bool& from_record, std::vector<TuneTiming>& timings) {
  if (key.name.empty()) throw Error("error: autotune needs a key with a name: what is being tuned (e.g. \"gemm_bf16\")");
  if (names.empty()) throw Error("error: autotune of '" + key.name + "' was given no candidates");
  for (size_t i = 0; i < names.size(); ++i)
    if (std::find(names.begin(), names.begin() + long(i), names[i]) != names.begin() + long(i))
      throw Error("error: autotune of '" + key.name + "' was given two candidates named '" + names[i] +
                  "'; the record keeps the winner by name, so each must have its own");
  record_tuning_question(key);

  nlohmann::json record = record_key(context, key, names);
  std::string text = record.dump();
  bool retune = options.retune || retune_setting();
  auto answered = [&](const std::string& winner) {
    from_record = true;
    timings.clear();
    return size_t(std::find(names.begin(), names.end(), winner) - names.begin());
  };
  if (!retune) {
    std::lock_guard lock(memory().mutex);
    if (auto it = memory().winners.find(text); it != memory().winners.end()) return answered(it->second);
  }
  // Not decided in this process: the disk, only now (a decision in memory needs neither).
  KernelCache cache = KernelCache::from_environment();
  std::string file_name = xxh3_128_hex(text) + ".json";
  if (!retune && cache.enabled())
    if (std::optional<std::string> winner = read_record(records_directory(cache) / file_name, record)) {
      remember(text, *winner);
      return answered(*winner);
    }

  from_record = false;
  timings.assign(names.size(), TuneTiming{});
  for (size_t i = 0; i < names.size(); ++i) timings[i].name = names[i];
  std::vector<TuneLaunch> launches = prepare_all(names.size(), options.jobs, cuda_context, prepare, timings);
  // Timed one at a time on this thread: candidates running together would slow each other.
  size_t best = names.size();
  for (size_t i = 0; i < names.size(); ++i) {
    if (!timings[i].error.empty()) continue;
    try {
      timings[i].median_ms = time(launches[i]);
    } catch (const std::exception& e) {
      timings[i].error = e.what();
      continue;
    }
    if (best == names.size() || timings[i].median_ms < timings[best].median_ms) best = i;
  }
  if (best == names.size()) {
    std::string why;
    for (const TuneTiming& t : timings) why += "\n  " + t.name + ": " + t.error;
    throw Error("error: autotune of '" + key.name + "': no candidate ran" + why);
  }
  remember(text, names[best]);
  if (cache.enabled()) write_record(cache, file_name, record, names[best], timings);
  return best;
}

void forget_tune_decisions() {
  std::lock_guard lock(memory().mutex);
  memory().winners.clear();
}

namespace {
struct Tunings {
  std::mutex mutex;
  std::vector<RegisteredTuning> list;
};
Tunings& tunings() {
  static Tunings& t = *new Tunings;  // registrations run in static initializers, in any order
  return t;
}
}  // namespace

bool register_tuning(RegisteredTuning tuning) {
  std::lock_guard lock(tunings().mutex);
  tunings().list.push_back(std::move(tuning));
  return true;
}

}  // namespace detail

std::vector<RegisteredTuning> registered_tunings() {
  std::lock_guard lock(detail::tunings().mutex);
  return detail::tunings().list;
}

RegisteredTuning find_registered_tuning(const std::string& name) {
  std::vector<RegisteredTuning> all = registered_tunings();
  std::string known;
  for (const RegisteredTuning& t : all) {
    if (t.name == name) return t;
    known += (known.empty() ? "" : ", ") + t.name;
  }
  throw Error("error: no tuning is registered as '" + name + "'; registered: " + (known.empty() ? "none" : known) +
              " (CUTEJIT_REGISTER_TUNING)");
}

}  // namespace cutejit
