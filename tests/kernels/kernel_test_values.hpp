// What the kernel library's tests share: random inputs of an element type, a value of one as
// float64 (through its float conversion), and the message of the Error a call throws.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include <cutejit/core/error.hpp>

namespace test {

/// `n` values of T from a normal distribution of `sigma` (seeded), as T.
template <class T>
std::vector<T> random_values(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<T> v(n);
  for (T& x : v) x = T(d(rng));
  return v;
}

template <class T>
double value(T x) {
  return double(float(x));
}

/// The message of the cutejit::Error `call` throws, or "(no error)".
inline std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const cutejit::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace test
