// What the examples of cutejit/kernels/gemm/sm90.hpp check with: a float64 reference product, the error measure, a poisoned output.
#pragma once

#include "cutejit/kernels/gemm/sm90.hpp"

#include "example.hpp"

namespace examples {
using namespace cutejit;

namespace gemm {
/// C = A * B in float64 from the host inputs (row-major m x n), with A stored m x k (K-major) or
/// k x m (MN-major) and B stored n x k (K-major: C = A * B^T of the stored matrix) or k x n.
template <class T>
std::vector<double> reference(const std::vector<T>& a, const std::vector<T>& b, int64_t m, int64_t n, int64_t k,
                              WgmmaMajor a_major = WgmmaMajor::k, WgmmaMajor b_major = WgmmaMajor::k) {
  std::vector<double> fa(a.size()), fb(b.size()), ref(size_t(m * n), 0.0);
  for (size_t i = 0; i < a.size(); ++i) fa[i] = double(float(a[i]));
  for (size_t i = 0; i < b.size(); ++i) fb[i] = double(float(b[i]));
  // The element (row, p) of A and (p, col) of B, wherever the layout keeps it.
  auto a_at = [&](int64_t i, int64_t p) { return fa[size_t(a_major == WgmmaMajor::k ? i * k + p : p * m + i)]; };
  auto b_at = [&](int64_t p, int64_t j) { return fb[size_t(b_major == WgmmaMajor::k ? j * k + p : p * n + j)]; };
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += a_at(i, p) * b_at(p, j);
      ref[size_t(i * n + j)] = s;
    }
  return ref;
}

/// C from the device as floats, for the error.
template <class Out>
std::vector<float> to_floats(const Buffer<Out>& c) {
  std::vector<float> out;
  for (Out x : c.to_host()) out.push_back(float(x));
  return out;
}

/// The larger of the norm-wise error ||c - ref|| / ||ref|| and the element-wise one,
/// max |c - ref| / max |ref|: a few wrong elements (a race on a chunk buffer, a misplaced
/// chunk) are diluted in the first but show at full size in the second. A NaN (an element
/// never written) makes it infinite.
inline double error(const std::vector<float>& c, const std::vector<double>& ref) {
  double worst = 0, largest = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double d = std::abs(double(c[i]) - ref[i]);
    if (std::isnan(d)) return INFINITY;
    worst = std::max(worst, d);
    largest = std::max(largest, std::abs(ref[i]));
  }
  return std::max(relative_error(c, ref), largest > 0 ? worst / largest : worst);
}

/// An m x n output of NaNs: an element the kernel does not write makes the error infinite.
template <class Out = bf16>
std::vector<Out> poisoned_output(int64_t m, int64_t n) {
  Out poison;
  poison.bits = sizeof(Out) == 2 ? 0x7fc0 : 0x7f;  // NaN in bf16 and in e4m3
  return std::vector<Out>(size_t(m * n), poison);
}
}  // namespace gemm

}  // namespace examples
