/** \file
 * Choosing a kernel's configuration by measuring it: `autotune(gpu, key, configs, prepare)`
 * prepares every candidate (tracing and compiling them on parallel threads), times each on the
 * GPU with `bench`, and returns the fastest. The choice is remembered on disk, next to the
 * kernel cache, under the key, the candidates, the device and the driver: a later process that
 * asks the same question gets the answer without timing anything.
 *
 * In cutejit a configuration changes the kernel (a template argument: tile shape, stages) and
 * its launch (grid, shared memory), so a candidate is not an argument but a way to prepare a
 * launch: `prepare(config)` returns what runs it once, either a `PreparedLaunch` or any
 * callable taking the input set to use (`BenchOptions::rotate`). The key says what the choice
 * depends on: the specialization does not hold dynamic extents, so the caller names them.
 *
 *   auto tuned = autotune(gpu, {"gemm_bf16", {m, n, k}}, std::vector{256, 128, 64},
 *                         [&](int tile_n) { return gemm_prepare(gpu, tile_n, a, b, c, m, n, k); });
 *   gemm_prepare(gpu, tuned.config, a, b, c, m, n, k)();
 *
 * The candidates run on the arguments `prepare` gives them, several times each: a kernel that
 * updates its inputs in place must be tuned on scratch copies. `CUTEJIT_CACHE=off` keeps no
 * record (every process times again); `CUTEJIT_RETUNE=1` times again and replaces the record.
 * `CUTEJIT_REGISTER_TUNING` lets `cutejit-cache tune` answer a manifest's questions ahead of
 * deployment, on the deployment's GPU.
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "cutejit/core/error.hpp"
#include "cutejit/runtime/bench.hpp"
#include "cutejit/runtime/device.hpp"

namespace cutejit {

/// What a tuning decision is about: a name for the question (one per kernel family, e.g.
/// "gemm_bf16") and the values the answer depends on (extents, or the buckets they fall in).
struct TuneKey {
  std::string name;
  std::vector<int64_t> values;
};

struct TuneOptions {
  BenchOptions bench{.warmup = 2, .reps = 10};  ///< how each candidate is timed (median of reps)
  bool retune = false;  ///< time again even when a record answers (also CUTEJIT_RETUNE=1)
  int jobs = 0;         ///< threads preparing candidates; 0: one per core
};

/// One candidate's outcome: its median time, or why it could not run.
struct TuneTiming {
  std::string name;
  double median_ms = 0;
  std::string error;  ///< empty when it ran; else what `prepare` or the launch threw
};

/// What a decision was and how it was made.
struct TuneOutcome {
  std::string name;                 ///< the winner's name, as the record keeps it
  bool from_record = false;         ///< answered by a record, in memory or on disk: nothing was timed
  std::vector<TuneTiming> timings;  ///< every candidate, in the order given; empty from a record
};
template <class Config>
struct Tuned : TuneOutcome {
  Config config{};
};

/// The name a record remembers a configuration by: a number is its value; any other
/// configuration says its own through `std::string name() const`.
template <class Config>
std::string tune_name(const Config& c) {
  if constexpr (std::is_arithmetic_v<Config>) return std::to_string(c);
  else return c.name();
}
template <class Config>
concept TuneConfig = std::is_arithmetic_v<Config> || requires(const Config& c) {
  { c.name() } -> std::convertible_to<std::string>;
};

namespace detail {
using TuneLaunch = std::function<void(int set)>;
/// Times one prepared candidate; `bench` on the device in `autotune`, a model in the tests.
using TuneTimer = std::function<double(const TuneLaunch&)>;

/// What the record of a decision is filed under, besides the key and the candidates.
struct TuneContext {
  std::string device;  ///< the GPU's name
  std::string target;  ///< its compilation target
  int driver = 0;      ///< the driver's version (cuDriverGetVersion)
};
TuneContext tune_context(const Device& gpu);

/// The non-template body of `autotune`: the winner's index among `names`. Looks for a record
/// (in this process, then on disk) unless told to retune; else prepares every candidate on
/// `options.jobs` threads (each with `cuda_context` current, when one is given: preparing
/// encodes tensor maps and loads modules), times those that prepared with `time` on this
/// thread, one at a time, and records the fastest. Throws Error when no candidate runs,
/// listing why each failed.
size_t autotune_choice(const TuneContext& context, void* cuda_context, const TuneKey& key, const std::vector<std::string>& names,
                       const std::function<TuneLaunch(size_t)>& prepare, const TuneTimer& time, const TuneOptions& options,
                       bool& from_record, std::vector<TuneTiming>& timings);

/// Forgets the decisions this process made or read (not the records on disk): the next
/// question goes to the disk again. For tests, and for a program whose records another
/// process replaced (`cutejit-cache tune --retune`).
void forget_tune_decisions();

template <class L>
TuneLaunch as_tune_launch(L&& launch) {
  using D = std::decay_t<L>;
  if constexpr (std::is_invocable_v<D&, int>) return [l = D(std::forward<L>(launch))](int set) mutable { l(set); };
  else return [l = D(std::forward<L>(launch))](int) mutable { l(); };
}
}  // namespace detail

/// The fastest of `configs` on `gpu` for `key` (see the file's comment). `prepare(config)` is
/// called from worker threads, several at once; a candidate whose `prepare` or launch throws
/// is left out (its error is in `timings`), and when none runs autotune throws Error.
template <TuneConfig Config, class Prepare>
Tuned<Config> autotune(const Device& gpu, const TuneKey& key, std::span<const Config> configs, Prepare&& prepare,
                       const TuneOptions& options = {}) {
  std::vector<std::string> names;
  for (const Config& c : configs) names.push_back(tune_name(c));
  auto prepare_one = [&](size_t i) { return detail::as_tune_launch(prepare(configs[i])); };
  auto time = [&](const detail::TuneLaunch& launch) { return bench(gpu, launch, options.bench).median_ms; };
  Tuned<Config> t{};
  size_t winner = detail::autotune_choice(detail::tune_context(gpu), gpu.context(), key, names, prepare_one, time, options, t.from_record, t.timings);
  t.config = configs[winner];
  t.name = names[winner];
  return t;
}
template <TuneConfig Config, class Prepare>
Tuned<Config> autotune(const Device& gpu, const TuneKey& key, const std::vector<Config>& configs, Prepare&& prepare,
                       const TuneOptions& options = {}) {
  return autotune(gpu, key, std::span<const Config>(configs), std::forward<Prepare>(prepare), options);
}
template <TuneConfig Config, class Prepare>
Tuned<Config> autotune(const Device& gpu, const TuneKey& key, std::initializer_list<Config> configs, Prepare&& prepare,
                       const TuneOptions& options = {}) {
  return autotune(gpu, key, std::span<const Config>(configs.begin(), configs.size()), std::forward<Prepare>(prepare), options);
}

/// A tuning question a tool can ask by name: `run(gpu, values, options)` makes inputs of
/// the extents `values` names and returns what `autotune` decided for the key {name, values}.
struct RegisteredTuning {
  std::string name;
  std::function<TuneOutcome(const Device&, std::span<const int64_t>, const TuneOptions&)> run;
};
/// The tuning questions a manifest holds: lines {"tune": NAME, "values": [integers]}, which
/// CUTEJIT_RECORD=FILE appends for every autotune call beside the specializations' lines.
/// Duplicates are removed, first-seen order kept; throws Error naming the file and line of a
/// question it cannot read.
std::vector<TuneKey> read_tuning_questions(const std::filesystem::path& manifest);

/// Every registered tuning, in registration order.
std::vector<RegisteredTuning> registered_tunings();
/// The tuning registered under `name`; throws Error listing those registered when there is none.
RegisteredTuning find_registered_tuning(const std::string& name);
namespace detail {
bool register_tuning(RegisteredTuning tuning);
}  // namespace detail

}  // namespace cutejit

#define CUTEJIT_TUNING_CONCAT_(a, b) a##b
#define CUTEJIT_TUNING_CONCAT(a, b) CUTEJIT_TUNING_CONCAT_(a, b)
/// Registers a tuning question, `name` answered by `run` (see RegisteredTuning), when the
/// program or shared library holding this line is loaded.
/// (Variadic so that a lambda with commas in it can be written in place.)
#define CUTEJIT_REGISTER_TUNING(name, ...) \
  [[maybe_unused]] static const bool CUTEJIT_TUNING_CONCAT(cutejit_tuning_, __COUNTER__) = \
      ::cutejit::detail::register_tuning(::cutejit::RegisteredTuning{name, __VA_ARGS__})
