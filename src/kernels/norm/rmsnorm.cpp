// RMSNorm: one CTA a row. Each thread takes every `threads`-th 16-byte vector of the row, sums
// the squares in f32 (adding and storing the residual first for add_rmsnorm), the block
// reduces, and a second pass over the same vectors (the row is in L2, and each thread reads
// back only what it read or wrote itself) scales, multiplies by the weight and stores.
#include "cutejit/kernels/norm.hpp"

#include <algorithm>

#include "cutejit/cutejit.hpp"
#include "kernels/checks.hpp"
#include "kernels/element_names.hpp"
#include "kernels/norm/norm_launch.hpp"

namespace cutejit::kernels {

namespace {

using detail::vector;

/// The row kernel's body; `residual` is null for plain RMSNorm.
template <class T>
void rmsnorm_row(const Tensor<T>& x, const Tensor<T>* residual, const Tensor<T>& weight, const Tensor<T>& y, const F32& eps, int threads) {
  constexpr int vec = vector<T>;
  block_shape(threads);
  Int row = block_idx().x, t = thread_idx().x;
  Int hidden = x.shape(1);
  Var<f32> squares = 0.0f;
  for_(t, hidden / vec, threads, [&](Int k) {
    Int c = k * vec;
    std::array<Value<T>, vec> h = x.pointer_at({row, c}).template load_vector<vec>();
    if (residual) {
      // The residual stream in T, as the model keeps it: the sum is rounded before it is normalised.
      std::array<Value<T>, vec> r = residual->pointer_at({row, c}).template load_vector<vec>();
      for (int i = 0; i < vec; ++i) h[size_t(i)] = cast<T>(cast<f32>(h[size_t(i)]) + cast<f32>(r[size_t(i)]));
      residual->pointer_at({row, c}).template store_vector<vec>(h);
    }
    for (int i = 0; i < vec; ++i) {
      F32 v = cast<f32>(h[size_t(i)]);
      squares += v * v;
    }
  });
  F32 scale = rsqrt(block_reduce(F32(squares), threads) / cast<float>(hidden) + eps);
  const Tensor<T>& normed = residual ? *residual : x;
  for_(t, hidden / vec, threads, [&](Int k) {
    Int c = k * vec;
    std::array<Value<T>, vec> h = normed.pointer_at({row, c}).template load_vector<vec>();
    std::array<Value<T>, vec> w = weight.pointer_at({c}).template load_vector<vec>();
    std::array<Value<T>, vec> out;
    for (int i = 0; i < vec; ++i)
      out[size_t(i)] = cast<T>(cast<f32>(cast<T>(cast<f32>(h[size_t(i)]) * scale)) * cast<f32>(w[size_t(i)]));
    y.pointer_at({row, c}).template store_vector<vec>(out);
  });
}

template <class T>
auto& rmsnorm_kernel() {
  static Kernel k{std::string("cutejit_rmsnorm_") + detail::element_name<T>(),
                  [](Tensor<T> x, Tensor<T> weight, Tensor<T> y, Value<f32> eps, Constexpr<int> threads) {
                    rmsnorm_row<T>(x, nullptr, weight, y, eps, threads);
                  }};
  return k;
}

template <class T>
auto& add_rmsnorm_kernel() {
  static Kernel k{std::string("cutejit_add_rmsnorm_") + detail::element_name<T>(),
                  [](Tensor<T> x, Tensor<T> residual, Tensor<T> weight, Tensor<T> y, Value<f32> eps, Constexpr<int> threads) {
                    rmsnorm_row<T>(x, &residual, weight, y, eps, threads);
                  }};
  return k;
}

template <class T>
void rmsnorm_t(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& weight, const DeviceTensor<T>& y,
             const NormOptions& options, std::source_location where) {
  Launch launch = detail::norm_launch<T>("rmsnorm", x, nullptr, weight, y, options, where);
  if (x.shape[0] == 0) return;
  rmsnorm_kernel<T>()(device, launch, x, weight, y, options.eps, int(launch.block.x));
}

template <class T>
void add_rmsnorm_t(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& residual, const DeviceTensor<T>& weight,
                 const DeviceTensor<T>& y, const NormOptions& options, std::source_location where) {
  Launch launch = detail::norm_launch<T>("add_rmsnorm", x, &residual, weight, y, options, where);
  if (x.shape[0] == 0) return;
  add_rmsnorm_kernel<T>()(device, launch, x, residual, weight, y, options.eps, int(launch.block.x));
}

template <class T>
PreparedLaunch rmsnorm_prepare_t(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& weight, const DeviceTensor<T>& y,
                               const NormOptions& options, std::source_location where) {
  Launch launch = detail::norm_launch<T>("rmsnorm", x, nullptr, weight, y, options, where);
  detail::require(x.shape[0] > 0, "rmsnorm_prepare", "x has no rows", where);
  return rmsnorm_kernel<T>().prepare(device, launch, x, weight, y, options.eps, int(launch.block.x));
}

template <class T>
CompiledKernel rmsnorm_compile_t(const Target& target, int64_t rows, int64_t hidden, bool add_residual, const std::source_location& where) {
  const auto x = DeviceTensor<T>::for_compile({rows, hidden}, where), w = DeviceTensor<T>::for_compile({hidden}, where);
  const char* op = add_residual ? "add_rmsnorm_compile" : "rmsnorm_compile";
  Launch launch = detail::norm_launch<T>(op, x, add_residual ? &x : nullptr, w, x, {}, where);
  const int threads = int(launch.block.x);
  return add_residual ? add_rmsnorm_kernel<T>().compile(target, x, x, w, x, 1e-6f, threads)
                      : rmsnorm_kernel<T>().compile(target, x, w, x, 1e-6f, threads);
}

}  // namespace

#define CUTEJIT_RMSNORM_FOR(T)                                                                                                      \
  void rmsnorm(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& weight, const DeviceTensor<T>& y,            \
               const NormOptions& options, std::source_location where) {                                                           \
    rmsnorm_t<T>(device, x, weight, y, options, where);                                                                            \
  }                                                                                                                                \
  void add_rmsnorm(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& residual, const DeviceTensor<T>& weight, \
                   const DeviceTensor<T>& y, const NormOptions& options, std::source_location where) {                             \
    add_rmsnorm_t<T>(device, x, residual, weight, y, options, where);                                                              \
  }                                                                                                                                \
  PreparedLaunch rmsnorm_prepare(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& weight,                    \
                                 const DeviceTensor<T>& y, const NormOptions& options, std::source_location where) {               \
    return rmsnorm_prepare_t<T>(device, x, weight, y, options, where);                                                             \
  }
CUTEJIT_RMSNORM_FOR(f32)
CUTEJIT_RMSNORM_FOR(f16)
CUTEJIT_RMSNORM_FOR(bf16)
#undef CUTEJIT_RMSNORM_FOR

CompiledKernel rmsnorm_compile(const Target& target, DType element, int64_t rows, int64_t hidden, bool add_residual,
                               std::source_location where) {
  return detail::with_element(element, "rmsnorm_compile", where,
                              [&]<class T>(T) { return rmsnorm_compile_t<T>(target, rows, hidden, add_residual, where); });
}

}  // namespace cutejit::kernels
