// What the kernel library's tests share: random inputs of an element type, and a value of one
// as float64 (through its float conversion).
#pragma once

#include <random>
#include <vector>

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

}  // namespace test
