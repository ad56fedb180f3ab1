// Named FlashAttention-2 kernels of cutejit/kernels/attention/sm80.hpp, their launches on device
// buffers, and the inputs, float64 reference and checks the attention examples share.
#pragma once

#include <algorithm>
#include <array>
#include <span>
#include <string_view>
#include <bit>
#include <cmath>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cutejit/kernels/attention/problem.hpp"
#include "cutejit/kernels/attention/sm80.hpp"

#include "example.hpp"

namespace examples {
using namespace cutejit;

// The names of the kernel (cutejit/kernels/attention/sm80.hpp) where the launches below use them.
namespace fmha80 {
using namespace cutejit::kernels::fmha_sm80;
}  // namespace fmha80

/// The forward kernel for one element type and Config.
template <Element T, fmha80::Config C>
inline auto fmha_forward = Kernel{C.name(std::is_same_v<T, bf16> ? "bf16" : "f16"),
                                  [](Tensor<T> q, Tensor<T> k, Tensor<T> v, Tensor<T> o, Tensor<f32> lse, Tensor<int32_t> cu_seqlens_q,
                                     Tensor<int32_t> cu_seqlens_k, F32 scale_log2) {
                                    fmha80::forward<T, C>(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, scale_log2);
                                  }};

namespace fmha80 {
/// Throws a cutejit::Error at the caller's line unless every buffer holds the problem's tensor.
template <Element T>
void check_buffers(const FmhaProblem& p, const Buffer<T>& q, const Buffer<T>& k, const Buffer<T>& v, const Buffer<T>& o,
                   const Buffer<f32>& lse, const Buffer<int32_t>& cu_q, const Buffer<int32_t>& cu_k, detail::Where w) {
  auto sizes_fit = q.size() >= size_t(p.total_q * p.heads * p.head_dim) && o.size() >= size_t(p.total_q * p.heads * p.head_dim) &&
                   k.size() >= size_t(p.total_k * p.kv_heads * p.head_dim) && v.size() >= size_t(p.total_k * p.kv_heads * p.head_dim) &&
                   lse.size() >= size_t(p.heads * p.total_q) && cu_q.size() >= size_t(p.batch + 1) && cu_k.size() >= size_t(p.batch + 1);
  if (!sizes_fit) detail::fail("fmha_forward: a buffer is smaller than the problem's tensors", w);
}
template <Element T, Config C>
PreparedLaunch prepare(const Device& gpu, const FmhaProblem& p, const Buffer<T>& q, const Buffer<T>& k, const Buffer<T>& v,
                       const Buffer<T>& o, const Buffer<f32>& lse, const Buffer<int32_t>& cu_q, const Buffer<int32_t>& cu_k) {
  const float scale = p.softmax_scale > 0 ? p.softmax_scale : 1.0f / std::sqrt(float(p.head_dim));
  Launch l{.grid = {uint32_t(ceil_div(std::max<int64_t>(p.max_seqlen_q, 1), C.tile_m)), uint32_t(p.heads), uint32_t(p.batch)},
           .block = uint32_t(C.threads()),
           .shared_bytes = C.template shared_bytes<T>()};
  return fmha_forward<T, C>.prepare(gpu, l, q.view({p.total_q, p.heads, p.head_dim}), k.view({p.total_k, p.kv_heads, p.head_dim}),
                                    v.view({p.total_k, p.kv_heads, p.head_dim}), o.view({p.total_q, p.heads, p.head_dim}),
                                    lse.view({p.heads, p.total_q}), cu_q.view({p.batch + 1}), cu_k.view({p.batch + 1}),
                                    scale * float(M_LOG2E));
}
}  // namespace fmha80

/// The launch of the forward on device buffers: q, o (total_q, heads, head_dim), k, v
/// (total_k, kv_heads, head_dim), lse (heads, total_q), cu_seqlens_q/k (batch + 1 offsets,
/// from 0), all compact; the problem is checked first.
template <Element T>
  requires(std::is_same_v<T, bf16> || std::is_same_v<T, f16>)
PreparedLaunch fmha_forward_prepare(const Device& gpu, const FmhaProblem& p, const Buffer<T>& q, const Buffer<T>& k, const Buffer<T>& v,
                                    const Buffer<T>& o, const Buffer<f32>& lse, const Buffer<int32_t>& cu_seqlens_q,
                                    const Buffer<int32_t>& cu_seqlens_k, detail::Where w = detail::Where::current()) {
  fmha80::check(p, w);
  fmha80::check_buffers(p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, w);
  // hd 64: 128 queries x 64 keys per step; hd 128: 64 x 64, which keeps O, S and P in the
  // registers (128 x 64 spills at hd 128).
  using fmha80::Config;
  const bool c = p.causal;
  if (p.head_dim == 64)
    return c ? fmha80::prepare<T, fmha80::hd64_causal>(gpu, p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k)
             : fmha80::prepare<T, fmha80::hd64>(gpu, p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k);
  return c ? fmha80::prepare<T, fmha80::hd128_causal>(gpu, p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k)
           : fmha80::prepare<T, fmha80::hd128>(gpu, p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k);
}

/// Host inputs of one problem: sequence lengths, their offsets, and random Q, K and V.
template <Element T>
struct FmhaInputs {
  FmhaProblem problem;
  std::vector<int32_t> cu_seqlens_q, cu_seqlens_k;
  std::vector<T> q, k, v;
};

template <Element T>
FmhaInputs<T> fmha_inputs(const std::vector<int32_t>& q_lens, const std::vector<int32_t>& k_lens, int64_t heads, int64_t kv_heads,
                          int64_t head_dim, bool causal, unsigned seed) {
  FmhaInputs<T> in;
  FmhaProblem& p = in.problem;
  p = {.batch = int64_t(q_lens.size()), .heads = heads, .kv_heads = kv_heads, .head_dim = head_dim, .causal = causal};
  in.cu_seqlens_q = {0};
  in.cu_seqlens_k = {0};
  for (size_t b = 0; b < q_lens.size(); ++b) {
    in.cu_seqlens_q.push_back(in.cu_seqlens_q.back() + q_lens[b]);
    in.cu_seqlens_k.push_back(in.cu_seqlens_k.back() + k_lens[b]);
    p.max_seqlen_q = std::max<int64_t>(p.max_seqlen_q, q_lens[b]);
    p.max_seqlen_k = std::max<int64_t>(p.max_seqlen_k, k_lens[b]);
  }
  p.total_q = in.cu_seqlens_q.back();
  p.total_k = in.cu_seqlens_k.back();
  in.q = random_values<T>(size_t(p.total_q * heads * head_dim), seed);
  in.k = random_values<T>(size_t(p.total_k * kv_heads * head_dim), seed + 1);
  in.v = random_values<T>(size_t(p.total_k * kv_heads * head_dim), seed + 2);
  return in;
}

/// The float64 reference: O (total_q, heads, head_dim) and the log-sum-exp (heads, total_q) of
/// the problem's masks (FmhaProblem::visible_keys; -inf where a row sees no key, and O 0 there).
template <Element T>
void fmha_reference(const FmhaInputs<T>& in, std::vector<double>& o, std::vector<double>& lse) {
  const FmhaProblem& p = in.problem;
  const int64_t H = p.heads, Hk = p.kv_heads, D = p.head_dim;
  const double scale = p.softmax_scale > 0 ? p.softmax_scale : 1.0 / std::sqrt(double(D));
  o.assign(size_t(p.total_q * H * D), 0.0);
  lse.assign(size_t(H * p.total_q), -INFINITY);
  std::vector<double> s;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t q0 = in.cu_seqlens_q[b], sq = in.cu_seqlens_q[b + 1] - q0, k0 = in.cu_seqlens_k[b], sk = in.cu_seqlens_k[b + 1] - k0;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t hk = h / (H / Hk);
      for (int64_t i = 0; i < sq; ++i) {
        auto [first, last] = p.visible_keys(i, sq, sk);
        if (first > last) continue;
        s.assign(size_t(last - first + 1), 0.0);
        double m = -INFINITY;
        for (int64_t j = first; j <= last; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += double(float(in.q[((q0 + i) * H + h) * D + d])) * double(float(in.k[((k0 + j) * Hk + hk) * D + d]));
          s[size_t(j - first)] = dot * scale;
          m = std::max(m, s[size_t(j - first)]);
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - m));
        double* out = &o[size_t(((q0 + i) * H + h) * D)];
        for (int64_t j = first; j <= last; ++j)
          for (int64_t d = 0; d < D; ++d) out[d] += s[size_t(j - first)] / sum * double(float(in.v[((k0 + j) * Hk + hk) * D + d]));
        lse[size_t(h * p.total_q + q0 + i)] = m + std::log(sum);
      }
    }
  }
}

/// The largest element-wise error of O and of the log-sum-exp, each as |out - ref| / (1 + |ref|);
/// infinite where an element was left unwritten (NaN) or an infinity disagrees.
inline double fmha_error(const std::vector<float>& o, const std::vector<double>& o_ref, const std::vector<float>& lse,
                         const std::vector<double>& lse_ref) {
  double worst = 0;
  auto compare = [&](double out, double ref) {
    if (std::isinf(ref) || std::isinf(out)) {
      if (out != ref) worst = INFINITY;
      return;
    }
    worst = std::isnan(out) ? INFINITY : std::max(worst, std::abs(out - ref) / (1 + std::abs(ref)));
  };
  for (size_t i = 0; i < o_ref.size(); ++i) compare(o[i], o_ref[i]);
  for (size_t i = 0; i < lse_ref.size(); ++i) compare(lse[i], lse_ref[i]);
  return worst;
}

/// Runs a forward on `in` with poisoned outputs; the error against the float64 reference.
/// `prepare(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k)` makes the launch on the buffers.
template <Element T, class Prepare>
double fmha_check_with(const Device& gpu, const FmhaInputs<T>& in, Prepare&& prepare) {
  const FmhaProblem& p = in.problem;
  auto q = gpu.upload(in.q), k = gpu.upload(in.k), v = gpu.upload(in.v);
  auto cu_q = gpu.upload(in.cu_seqlens_q), cu_k = gpu.upload(in.cu_seqlens_k);
  auto o = gpu.upload(std::vector<T>(size_t(p.total_q * p.heads * p.head_dim), T(NAN)));
  auto lse = gpu.upload(std::vector<float>(size_t(p.heads * p.total_q), NAN));
  prepare(q, k, v, o, lse, cu_q, cu_k)();
  gpu.synchronize();
  std::vector<double> o_ref, lse_ref;
  fmha_reference(in, o_ref, lse_ref);
  std::vector<float> out;
  for (T x : o.to_host()) out.push_back(float(x));
  return fmha_error(out, o_ref, lse.to_host(), lse_ref);
}

/// The same for the FA2 forward (fmha_forward_prepare).
template <Element T>
double fmha_check(const Device& gpu, const FmhaInputs<T>& in) {
  return fmha_check_with(gpu, in, [&](auto&&... buffers) { return fmha_forward_prepare(gpu, in.problem, buffers...); });
}

/// Cross-compiles the forward of `C` for target `t` (tensor descriptions, no memory).
template <Element T, fmha80::Config C>
CompiledKernel fmha_compile(const Target& t) {
  auto view = [](std::array<int64_t, 3> shape) {
    return DeviceTensor<T>::make(256, shape, std::array<int64_t, 3>{shape[1] * shape[2], shape[2], 1});
  };
  auto lse = DeviceTensor<f32>::make(256, std::array<int64_t, 2>{16, 4096}, std::array<int64_t, 2>{4096, 1});
  auto cu = DeviceTensor<int32_t>::make(256, std::array<int64_t, 1>{5}, std::array<int64_t, 1>{1});
  auto x = view({4096, 16, C.head_dim});
  return fmha_forward<T, C>.compile(t, x, x, x, x, lse, cu, cu, 1.0f);
}

/// Four sequences of ragged lengths (one shorter than a tile, one with residues in queries and
/// keys, one token, one with more queries than keys), BF16, head dim 128, GQA 4:2, causal.
inline Example fmha_forward_example() {
  return {"fmha_fwd_bf16_hd128_causal_64x64_w4",
          [](const Device& gpu) { return fmha_check(gpu, fmha_inputs<bf16>({77, 200, 1, 150}, {77, 260, 33, 40}, 4, 2, 128, true, 31)); },
          [](const Target& t) { return fmha_compile<bf16, fmha80::hd128_causal>(t); },
          1e-2,
          {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_120a"}};
}

}  // namespace examples
