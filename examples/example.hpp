// What the example programs share: random inputs, the error against a float64 host reference,
// and a runner that checks the kernel on the device when there is one (a GPU, or the emulated
// device CUTEJIT_DEVICE=emulator:<target> names) and otherwise cross-compiles it for the
// newest targets and says that nothing ran.
#pragma once

#include <cutejit/cutejit.hpp>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace example {

/// Random floats in [-1, 1), from a seed.
inline std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

/// random_floats rounded to T (bf16, f16, ...).
template <class T>
std::vector<T> random_values(size_t n, unsigned seed) {
  std::vector<T> v;
  for (float x : random_floats(n, seed)) v.push_back(T(x));
  return v;
}

/// ||got - want|| / ||want||, infinite where `got` holds a NaN (an element never written: the
/// outputs start poisoned).
template <class T>
double relative_error(const std::vector<T>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = double(float(got[i]));
    if (!std::isfinite(g)) return INFINITY;
    num += (g - want[i]) * (g - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

struct Program {
  const char* name;
  /// Runs the kernel on the device and returns relative_error against the host reference.
  std::function<double(const cutejit::Device&)> check;
  /// The kernels for a target, compiled with no device.
  std::function<std::vector<cutejit::CompiledKernel>(const cutejit::Target&)> compile;
  double tolerance;
  /// What it cross-compiles for with no device.
  std::vector<const char*> targets = {"sm_90a", "sm_100a", "sm_120a"};
  /// The devices it runs on; absent: any. On another it cross-compiles instead.
  std::function<bool(const cutejit::Target&)> runs_on = nullptr;
};

inline int run(const Program& p) {
  using namespace cutejit;
  // A setup problem (no toolkit, a bad CUTEJIT_DEVICE) is a message and an exit code, not an abort.
  try {
    const bool any = Device::count() > 0;
    if (!any || (p.runs_on && !p.runs_on(Device().target()))) {
      std::string targets;
      for (const char* name : p.targets) targets += std::string(targets.empty() ? "" : ", ") + name;
      std::printf("%s%s: cross-compiling it for %s; nothing runs.\n", p.name,
                  any ? (" does not run on this device (" + Device().target().name() + ")").c_str() : " (no device here)", targets.c_str());
      for (const char* name : p.targets)
        for (const CompiledKernel& k : p.compile(Target::parse(name)))
          std::printf("  %-8s %-40s cubin %7zu bytes, trace to cubin %6.1f ms\n", name, k.name.c_str(), k.cubin.size(),
                      k.times.total_ms());
      return 0;
    }
    Device device;
    double err = p.check(device);
    bool ok = err <= p.tolerance;
    std::printf("%s on %s (%s): relative error %.3g (tolerance %.1g): %s\n", p.name, device.name().c_str(),
                device.target().name().c_str(), err, p.tolerance, ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
  } catch (const Error& error) {
    std::fprintf(stderr, "%s: %s\n", p.name, error.what());
    return 1;
  }
}

}  // namespace example
