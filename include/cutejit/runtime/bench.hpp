/** \file
 * Timing kernels the way the benchmarks do, so that users need not write it again:
 * `bench(gpu, launch, {.warmup, .reps, .rotate})` runs `launch(set)` untimed `warmup` times,
 * then `reps` times, each run alone between two events on the stream (waited for before the
 * next starts), and reports the median, the fastest and the slowest. Run r is given input set
 * r % rotate: with that many copies of the inputs (enough to exceed L2), no run finds its data
 * left in L2 by the one before, as a kernel inside a larger program would not.
 */
#pragma once

#include <algorithm>
#include <vector>

#include "cutejit/core/error.hpp"
#include "cutejit/runtime/device.hpp"
#include "cutejit/runtime/stream.hpp"

namespace cutejit {

struct BenchOptions {
  int warmup = 3;   ///< untimed runs first (the first launch of a specialization compiles it)
  int reps = 20;    ///< timed runs
  int rotate = 1;   ///< input sets the runs cycle through
  StreamHandle stream = nullptr;  ///< where `launch` queues its work
};

struct BenchResult {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  std::vector<double> samples_ms;  ///< in the order they ran
};

/// `launch(int set)` queues one run on `options.stream` using input set `set`.
template <class F>
BenchResult bench(const Device& gpu, F&& launch, const BenchOptions& options = {}) {
  if (options.reps < 1 || options.warmup < 0 || options.rotate < 1)
    throw Error("error: bench needs reps >= 1, warmup >= 0 and rotate >= 1, not " + std::to_string(options.reps) + ", " +
                std::to_string(options.warmup) + " and " + std::to_string(options.rotate));
  Event start(gpu), end(gpu);
  int run = 0;
  for (int i = 0; i < options.warmup; ++i) launch(run++ % options.rotate);
  BenchResult r;
  for (int i = 0; i < options.reps; ++i) {
    start.record(options.stream);
    launch(run++ % options.rotate);
    end.record(options.stream);
    r.samples_ms.push_back(elapsed_ms(start, end));  // waits: each run is timed alone
  }
  std::vector<double> sorted = r.samples_ms;
  std::sort(sorted.begin(), sorted.end());
  r.median_ms = sorted[sorted.size() / 2];
  r.min_ms = sorted.front();
  r.max_ms = sorted.back();
  return r;
}

}  // namespace cutejit
