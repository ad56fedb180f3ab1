// What the GPU benchmarks share: checked driver calls and the median time of a GPU workload.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bench {

inline void check(CUresult rc, const char* what) {
  if (rc != CUDA_SUCCESS) {
    const char* name = "?";
    cuGetErrorName(rc, &name);
    std::fprintf(stderr, "%s failed: %s\n", what, name);
    std::exit(1);
  }
}

/// Median GPU time of `run` over `reps` timed runs (CUDA events), after three untimed ones.
template <class F>
double median_gpu_ms(F&& run, int reps) {
  CUevent start, stop;
  check(cuEventCreate(&start, 0), "cuEventCreate");
  check(cuEventCreate(&stop, 0), "cuEventCreate");
  for (int i = 0; i < 3; ++i) run();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    check(cuEventRecord(start, nullptr), "cuEventRecord");
    run();
    check(cuEventRecord(stop, nullptr), "cuEventRecord");
    check(cuEventSynchronize(stop), "cuEventSynchronize");
    float m = 0;
    check(cuEventElapsedTime(&m, start, stop), "cuEventElapsedTime");
    t.push_back(m);
  }
  cuEventDestroy(start);
  cuEventDestroy(stop);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// How many copies of a working set of `bytes` (inputs and output of one run) to rotate through
/// so that no run finds its data in L2 from the run before: the copies used between two uses
/// of one copy span at least 150 MB, three times the H200's 50 MB L2. At least 2, at most 16.
inline int rotation_sets(double bytes) { return std::clamp(int(150e6 / bytes) + 2, 2, 16); }

/// `median_gpu_ms` with L2 rotation: timed run r calls `run(r % sets)`, each set a separate
/// copy of the data, so every run starts from DRAM as it would inside a larger program.
template <class F>
double median_gpu_ms_rotated(F&& run, int sets, int reps) {
  int r = 0;
  return median_gpu_ms([&] { run(r++ % sets); }, reps);
}

}  // namespace bench
