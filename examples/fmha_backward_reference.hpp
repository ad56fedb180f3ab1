// The attention backward's float64 reference and the check of a backward against it: inputs
// (the forward's, with O and the log-sum-exp from fmha_reference and a random dO), the exact
// gradients, an element-wise error, and a run twice with poisoned gradients that also says
// whether the two runs agree bit for bit. The backwards' tests and examples use it.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "fmha_sm80.hpp"

namespace examples {
using namespace cutejit;

/// Host inputs of one backward: the forward's inputs, O and L from the float64 reference (O
/// rounded to T, L to f32), and a random dO.
template <Element T>
struct BackwardInputs {
  FmhaInputs<T> forward;
  std::vector<T> o, d_o;
  std::vector<float> lse;
};

template <Element T>
BackwardInputs<T> backward_inputs(FmhaInputs<T> forward, unsigned seed) {
  BackwardInputs<T> in;
  std::vector<double> o, lse;
  fmha_reference(forward, o, lse);
  for (double x : o) in.o.push_back(T(float(x)));
  for (double x : lse) in.lse.push_back(float(x));
  in.d_o = random_values<T>(o.size(), seed);
  in.forward = std::move(forward);
  return in;
}

/// The float64 reference gradients of the problem's masks (FmhaProblem::visible_keys), in the
/// layouts of Q, K and V: P and rowsum(dO * O) recomputed exactly, not from the rounded O and L.
template <Element T>
void backward_reference(const BackwardInputs<T>& in, std::vector<double>& dq, std::vector<double>& dk, std::vector<double>& dv) {
  const FmhaInputs<T>& f = in.forward;
  const FmhaProblem& p = f.problem;
  const int64_t H = p.heads, Hk = p.kv_heads, D = p.head_dim;
  const double scale = p.softmax_scale > 0 ? p.softmax_scale : 1.0 / std::sqrt(double(D));
  dq.assign(size_t(p.total_q * H * D), 0.0);
  dk.assign(size_t(p.total_k * Hk * D), 0.0);
  dv.assign(size_t(p.total_k * Hk * D), 0.0);
  auto at = [](const std::vector<T>& x, int64_t row, int64_t heads, int64_t h, int64_t D) { return &x[size_t((row * heads + h) * D)]; };
  std::vector<double> prob, dprob;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t q0 = f.cu_seqlens_q[b], sq = f.cu_seqlens_q[b + 1] - q0, k0 = f.cu_seqlens_k[b], sk = f.cu_seqlens_k[b + 1] - k0;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t hk = h / (H / Hk);
      for (int64_t i = 0; i < sq; ++i) {
        auto [first, last] = p.visible_keys(i, sq, sk);
        if (first > last) continue;
        const T* qi = at(f.q, q0 + i, H, h, D);
        const T* doi = at(in.d_o, q0 + i, H, h, D);
        prob.assign(size_t(last - first + 1), 0.0);
        dprob.assign(prob.size(), 0.0);
        double m = -INFINITY, sum = 0, delta = 0;
        for (int64_t j = first; j <= last; ++j) {
          const T* kj = at(f.k, k0 + j, Hk, hk, D);
          const T* vj = at(f.v, k0 + j, Hk, hk, D);
          double s = 0, dp = 0;
          for (int64_t d = 0; d < D; ++d) {
            s += double(float(qi[d])) * double(float(kj[d]));
            dp += double(float(doi[d])) * double(float(vj[d]));
          }
          prob[size_t(j - first)] = s * scale;
          dprob[size_t(j - first)] = dp;
          m = std::max(m, s * scale);
        }
        for (double& x : prob) sum += (x = std::exp(x - m));
        for (size_t j = 0; j < prob.size(); ++j) delta += (prob[j] /= sum) * dprob[j];
        for (int64_t j = first; j <= last; ++j) {
          const double pj = prob[size_t(j - first)], ds = pj * (dprob[size_t(j - first)] - delta);
          const T* kj = at(f.k, k0 + j, Hk, hk, D);
          double* dqi = &dq[size_t(((q0 + i) * H + h) * D)];
          double* dkj = &dk[size_t(((k0 + j) * Hk + hk) * D)];
          double* dvj = &dv[size_t(((k0 + j) * Hk + hk) * D)];
          for (int64_t d = 0; d < D; ++d) {
            dqi[d] += scale * ds * double(float(kj[d]));
            dkj[d] += scale * ds * double(float(qi[d]));
            dvj[d] += pj * double(float(doi[d]));
          }
        }
      }
    }
  }
}

/// The largest element-wise error of a gradient, |out - ref| / (rms(ref) + |ref|): relative to
/// the element, or to the tensor's typical size where the element is near 0; infinite where an
/// element was left unwritten (NaN).
template <Element T>
double gradient_error(const std::vector<T>& out, const std::vector<double>& ref) {
  double squares = 0, worst = 0;
  for (double x : ref) squares += x * x;
  const double rms = std::sqrt(squares / double(std::max<size_t>(ref.size(), 1)));
  for (size_t i = 0; i < ref.size(); ++i) {
    const double x = float(out[i]);
    worst = std::isnan(x) ? INFINITY : std::max(worst, std::abs(x - ref[i]) / (rms + std::abs(ref[i])));
  }
  return worst;
}

/// The errors of dQ, dK and dV, and whether a second run gave the same bits.
struct BackwardErrors {
  double dq = 0, dk = 0, dv = 0;
  bool deterministic = false;
  double worst() const { return std::max({dq, dk, dv}); }
};

/// Runs a backward on `in` twice with poisoned gradients; their errors against the float64
/// reference, and whether the two runs agree bit for bit. `prepare(q, k, v, o, d_o, lse,
/// cu_seqlens_q, cu_seqlens_k, d_q, d_k, d_v)` makes the launch on the buffers.
template <Element T, class Prepare>
BackwardErrors backward_check_with(const Device& gpu, const BackwardInputs<T>& in, Prepare&& prepare) {
  const FmhaProblem& p = in.forward.problem;
  check_seqlens(p, in.forward.cu_seqlens_q, in.forward.cu_seqlens_k);
  auto q = gpu.upload(in.forward.q), k = gpu.upload(in.forward.k), v = gpu.upload(in.forward.v);
  auto o = gpu.upload(in.o), d_o = gpu.upload(in.d_o), lse = gpu.upload(in.lse);
  auto cu_q = gpu.upload(in.forward.cu_seqlens_q), cu_k = gpu.upload(in.forward.cu_seqlens_k);
  auto poisoned = [&](size_t n) { return gpu.upload(std::vector<T>(n, T(NAN))); };
  auto d_q = poisoned(in.forward.q.size()), d_k = poisoned(in.forward.k.size()), d_v = poisoned(in.forward.v.size());
  auto launch = prepare(q, k, v, o, d_o, lse, cu_q, cu_k, d_q, d_k, d_v);
  launch();
  gpu.synchronize();
  auto first_q = d_q.to_host(), first_k = d_k.to_host(), first_v = d_v.to_host();
  launch();
  gpu.synchronize();
  auto same = [](const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](T x, T y) {
             return std::bit_cast<uint16_t>(x) == std::bit_cast<uint16_t>(y);
           });
  };
  std::vector<double> rq, rk, rv;
  backward_reference(in, rq, rk, rv);
  return {.dq = gradient_error(first_q, rq),
          .dk = gradient_error(first_k, rk),
          .dv = gradient_error(first_v, rv),
          .deterministic = same(first_q, d_q.to_host()) && same(first_k, d_k.to_host()) && same(first_v, d_v.to_host())};
}

}  // namespace examples
