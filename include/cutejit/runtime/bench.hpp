/** \file
 * Timing kernels the way the benchmarks do, so that users need not write it again:
 * `bench(gpu, launch, {.warmup, .reps, .rotate})` runs `launch(set)` untimed `warmup` times,
 * then `reps` times, each run alone between two events on the stream (waited for before the
 * next starts), and reports the median, the fastest and the slowest. Run r is given input set
 * r % rotate: with that many copies of the inputs (enough to exceed L2), no run finds its data
 * left in L2 by the one before, as a kernel inside a larger program would not.
 *
 * Timed alone, a run's sample carries the gap between its launch and the GPU starting it (a
 * few microseconds: a visible share of a short kernel). With `.queued = N` each sample instead
 * queues N runs back to back between one pair of events and counts a run as its N-th part, as
 * a kernel in a stream of work runs; that is what timing a captured graph of N runs measures
 * (triton.testing.do_bench_cudagraph, CuTeDSL's benchmark with a graph). Triton's do_bench
 * times each run between its own events behind an L2-clearing kernel, which hides the gap too.
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
  int queued = 0;   ///< 0: each timed run alone; N: each sample times N runs queued back to back
  StreamHandle stream = nullptr;  ///< where `launch` queues its work
};

struct BenchResult {
  double median_ms = 0, min_ms = 0, max_ms = 0;  ///< per run
  std::vector<double> samples_ms;  ///< in the order they ran; with `queued`, each a sample's mean run
};

/// `launch(int set)` queues one run on `options.stream` using input set `set`.
template <class F>
BenchResult bench(const Device& gpu, F&& launch, const BenchOptions& options = {}) {
  if (options.reps < 1 || options.warmup < 0 || options.rotate < 1 || options.queued < 0)
    throw Error("error: bench needs reps >= 1, warmup >= 0, rotate >= 1 and queued >= 0, not " + std::to_string(options.reps) + ", " +
                std::to_string(options.warmup) + ", " + std::to_string(options.rotate) + " and " + std::to_string(options.queued));
  const int per_sample = std::max(options.queued, 1);
  Event start(gpu), end(gpu);
  int run = 0;
  for (int i = 0; i < options.warmup; ++i) launch(run++ % options.rotate);
  BenchResult r;
  for (int i = 0; i < options.reps; ++i) {
    start.record(options.stream);
    for (int q = 0; q < per_sample; ++q) launch(run++ % options.rotate);
    end.record(options.stream);
    r.samples_ms.push_back(elapsed_ms(start, end) / per_sample);  // waits: each sample is timed alone
  }
  std::vector<double> sorted = r.samples_ms;
  std::sort(sorted.begin(), sorted.end());
  r.median_ms = sorted[sorted.size() / 2];
  r.min_ms = sorted.front();
  r.max_ms = sorted.back();
  return r;
}

}  // namespace cutejit
