// What every example shares: a runner that checks the kernel on the GPU when there is one,
// and otherwise cross-compiles it for the three newest targets and says that nothing ran.
#pragma once

#include <cutejit/cutejit.hpp>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

// The kernel library's kernels (cutejit/kernels/...) by their short names.
namespace cutejit::kernels {}

namespace examples {
using namespace cutejit::kernels;

/// Random floats in [-1, 1), from a seed, for inputs.
inline std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

/// random_floats rounded to T (bf16, f16, an FP8 type, ...).
template <class T>
std::vector<T> random_values(size_t n, unsigned seed) {
  std::vector<T> v;
  v.reserve(n);
  for (float x : random_floats(n, seed)) v.push_back(T(x));
  return v;
}

/// ||out - ref|| / ||ref||, with NaN (a poisoned, unwritten element) making it infinite.
inline double relative_error(const std::vector<float>& out, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(out[i])) return INFINITY;
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

/// The transpose of a row-major rows x cols matrix, in float64, row-major cols x rows.
inline std::vector<double> transposed(const std::vector<float>& h, int64_t rows, int64_t cols) {
  std::vector<double> t(h.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = h[r * cols + c];
  return t;
}

/// A check runs the kernel on fresh random inputs with a poisoned output and returns the
/// relative error against a float64 host reference.
struct Example {
  const char* name;
  std::function<double(const cutejit::Device&)> check;
  std::function<cutejit::CompiledKernel(const cutejit::Target&)> compile;
  double tolerance;
  /// What `run` cross-compiles for when there is no GPU (an sm_90a-only kernel names just that).
  std::vector<const char*> targets = {"sm_90a", "sm_100a", "sm_120a"};
};

inline int run(const Example& e) {
  using namespace cutejit;
  // A setup problem (no toolkit, no driver) is a message and an exit code, not an abort.
  try {
    if (Device::count() == 0) {
      std::printf("No GPU here: cross-compiling %s for %zu target(s); nothing runs.\n", e.name, e.targets.size());
      for (const char* name : e.targets) {
        CompiledKernel k = e.compile(Target::parse(name));
        std::printf("  %-8s cubin %6zu bytes (%s), trace→cubin %.1f ms: trace %.2f, verify %.2f, lower %.2f, "
                    "O3+PTX %.2f, assemble %.2f\n",
                    name, k.cubin.size(), k.assembler.c_str(), k.times.total_ms(), k.times.trace_ms, k.times.verify_ms,
                    k.times.lower_ms, k.times.codegen_ms, k.times.assemble_ms);
      }
      return 0;
    }
    Device gpu;
    double err = e.check(gpu);
    bool ok = err <= e.tolerance;
    std::printf("%s on %s (%s): relative error %.3g (tolerance %.1g): %s\n", e.name, gpu.name().c_str(),
                gpu.target().name().c_str(), err, e.tolerance, ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
  } catch (const Error& error) {
    std::fprintf(stderr, "%s: %s\n", e.name, error.what());
    return 1;
  }
}

}  // namespace examples
