// RMSNorm: one CTA a row. Each thread takes every `threads`-th 16-byte vector of the row, sums
// the squares in f32 (adding and storing the residual first for add_rmsnorm), the block
// reduces, and a second pass over the same vectors (the row is in L2, and each thread reads
// back only what it read or wrote itself) scales, multiplies by the weight and stores.
#include "cutejit/kernels/norm.hpp"

#include <algorithm>

#include "cutejit/cutejit.hpp"
#include "kernels/checks.hpp"
#include "kernels/element_names.hpp"

namespace cutejit::kernels {

namespace {

using detail::vector;

/// The block for rows of `hidden`: about four vectors a thread, 32 to 1024 threads.
int threads_for(int64_t hidden, int vec) {
  const int64_t vectors = hidden / vec;
  return int(std::clamp<int64_t>((vectors + 4 * 32 - 1) / (4 * 32) * 32, 32, 1024));
}

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

/// The checks both operators make; returns the launch.
template <class T>
Launch plan(const char* op, const DeviceTensor<T>& x, const DeviceTensor<T>* residual, const DeviceTensor<T>& weight,
            const DeviceTensor<T>& y, const NormOptions& options, const std::source_location& where) {
  using detail::require;
  detail::require_rows(x, "x", op, vector<T>, where);
  detail::require_rows(y, "y", op, vector<T>, where);
  require(y.shape == x.shape, op, "y is " + detail::shape_of(y) + "; it must have x's shape " + detail::shape_of(x), where);
  if (residual) {
    detail::require_rows(*residual, "residual", op, vector<T>, where);
    require(residual->shape == x.shape, op,
            "residual is " + detail::shape_of(*residual) + "; it must have x's shape " + detail::shape_of(x), where);
  }
  detail::require_vector(weight, "weight", op, x.shape[1], where);
  require(x.shape[0] < (int64_t(1) << 31), op, "x has " + std::to_string(x.shape[0]) + " rows; at most 2^31 - 1 are launched", where);
  require(options.eps >= 0, op, "eps is negative", where);
  return Launch{.grid = uint32_t(x.shape[0]), .block = uint32_t(threads_for(x.shape[1], vector<T>)), .stream = options.stream,
                .where = where};
}

template <class T>
void rmsnorm_t(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& weight, const DeviceTensor<T>& y,
             const NormOptions& options, std::source_location where) {
  Launch launch = plan<T>("rmsnorm", x, nullptr, weight, y, options, where);
  if (x.shape[0] == 0) return;
  rmsnorm_kernel<T>()(device, launch, x, weight, y, options.eps, int(launch.block.x));
}

template <class T>
void add_rmsnorm_t(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& residual, const DeviceTensor<T>& weight,
                 const DeviceTensor<T>& y, const NormOptions& options, std::source_location where) {
  Launch launch = plan<T>("add_rmsnorm", x, &residual, weight, y, options, where);
  if (x.shape[0] == 0) return;
  add_rmsnorm_kernel<T>()(device, launch, x, residual, weight, y, options.eps, int(launch.block.x));
}

template <class T>
PreparedLaunch rmsnorm_prepare_t(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& weight, const DeviceTensor<T>& y,
                               const NormOptions& options, std::source_location where) {
  Launch launch = plan<T>("rmsnorm", x, nullptr, weight, y, options, where);
  detail::require(x.shape[0] > 0, "rmsnorm_prepare", "x has no rows", where);
  return rmsnorm_kernel<T>().prepare(device, launch, x, weight, y, options.eps, int(launch.block.x));
}

template <class T>
CompiledKernel rmsnorm_compile_t(const Target& target, int64_t rows, int64_t hidden, bool add_residual, const std::source_location& where) {
  const auto x = DeviceTensor<T>::for_compile({rows, hidden}, where), w = DeviceTensor<T>::for_compile({hidden}, where);
  Launch launch = plan<T>(add_residual ? "add_rmsnorm_compile" : "rmsnorm_compile", x, add_residual ? &x : nullptr, w, x, {}, where);
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
