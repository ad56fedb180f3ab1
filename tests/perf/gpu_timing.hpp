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

}  // namespace bench
