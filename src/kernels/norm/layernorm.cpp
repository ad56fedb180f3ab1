// LayerNorm: one CTA a row, as rmsnorm.cpp. Three passes over the row's 16-byte vectors, each
// thread reading back only what it read or wrote itself (the row stays in L2): the sum (adding
// and storing the residual first for add_layernorm), the sum of squared deviations from the
// mean (two passes rather than sum and sum of squares, which cancel catastrophically when the
// mean is large against the spread), then (x - mean) * rstd * weight + bias in f32, rounded once
// (as PyTorch's layer_norm rounds its f32 result).

#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/norm.hpp"
#include "kernels/checks.hpp"
#include "kernels/element_names.hpp"
#include "kernels/norm/norm_launch.hpp"

namespace cutejit::kernels {

namespace {

using detail::vector;

/// Every variant in one kernel: `add_residual` and `has_bias` choose at trace time; an unused
/// residual or bias argument is never read.
template <class T>
auto& layernorm_kernel() {
  static Kernel k{
      std::string("cutejit_layernorm_") + detail::element_name<T>(),
      [](Tensor<T> x, Tensor<T> residual, Tensor<T> weight, Tensor<T> bias, Tensor<T> y, Value<f32> eps, Constexpr<int> threads,
         Constexpr<bool> add_residual, Constexpr<bool> has_bias) {
        constexpr int vec = vector<T>;
        block_shape(threads);
        Int row = block_idx().x, t = thread_idx().x;
        Int hidden = x.shape(1);
        const Tensor<T>& normed = add_residual ? residual : x;
        auto load = [&](const Tensor<T>& from, const Int& c) { return from.pointer_at({row, c}).template load_vector<vec>(); };

        Var<f32> sum = 0.0f;
        for_(t, hidden / vec, threads, [&](Int k) {
          Int c = k * vec;
          std::array<Value<T>, vec> h = load(x, c);
          if (add_residual) {
            // The residual stream in T, as the model keeps it: the sum is rounded before it is normalised.
            std::array<Value<T>, vec> r = load(residual, c);
            for (size_t i = 0; i < size_t(vec); ++i) h[i] = cast<T>(cast<f32>(h[i]) + cast<f32>(r[i]));
            residual.pointer_at({row, c}).template store_vector<vec>(h);
          }
          for (size_t i = 0; i < size_t(vec); ++i) sum += cast<f32>(h[i]);
        });
        F32 mean = block_reduce(F32(sum), threads) / cast<float>(hidden);

        Var<f32> deviations = 0.0f;
        for_(t, hidden / vec, threads, [&](Int k) {
          std::array<Value<T>, vec> h = load(normed, k * vec);
          for (size_t i = 0; i < size_t(vec); ++i) {
            F32 d = cast<f32>(h[i]) - mean;
            deviations += d * d;
          }
        });
        F32 rstd = rsqrt(block_reduce(F32(deviations), threads) / cast<float>(hidden) + eps);

        for_(t, hidden / vec, threads, [&](Int k) {
          Int c = k * vec;
          std::array<Value<T>, vec> h = load(normed, c);
          std::array<Value<T>, vec> w = weight.pointer_at({c}).template load_vector<vec>();
          std::array<Value<T>, vec> b = has_bias ? bias.pointer_at({c}).template load_vector<vec>() : w;  // b unused without a bias
          std::array<Value<T>, vec> out;
          for (size_t i = 0; i < size_t(vec); ++i) {
            F32 v = (cast<f32>(h[i]) - mean) * rstd * cast<f32>(w[i]);
            out[i] = cast<T>(has_bias ? v + cast<f32>(b[i]) : v);
          }
          y.pointer_at({row, c}).template store_vector<vec>(out);
        });
      }};
  return k;
}

/// The norms' checks, and the bias's; returns the launch.
template <class T>
Launch plan(const char* op, const DeviceTensor<T>& x, const DeviceTensor<T>* residual, const DeviceTensor<T>& weight,
            const std::optional<DeviceTensor<T>>& bias, const DeviceTensor<T>& y, const NormOptions& options,
            const std::source_location& where) {
  Launch launch = detail::norm_launch<T>(op, x, residual, weight, y, options, where);
  if (bias) detail::require_vector(*bias, "bias", op, x.shape[1], where);
  return launch;
}

template <class T>
void layernorm_t(const char* op, const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>* residual,
                 const DeviceTensor<T>& weight, const std::optional<DeviceTensor<T>>& bias, const DeviceTensor<T>& y,
                 const NormOptions& options, const std::source_location& where) {
  Launch launch = plan<T>(op, x, residual, weight, bias, y, options, where);
  if (x.shape[0] == 0) return;
  layernorm_kernel<T>()(device, launch, x, residual ? *residual : x, weight, bias.value_or(weight), y, options.eps,
                        int(launch.block.x), residual != nullptr, bias.has_value());
}

template <class T>
CompiledKernel layernorm_compile_t(const Target& target, int64_t rows, int64_t hidden, bool add_residual, bool has_bias,
                                   const std::source_location& where) {
  const auto x = DeviceTensor<T>::for_compile({rows, hidden}, where), w = DeviceTensor<T>::for_compile({hidden}, where);
  const char* op = add_residual ? "add_layernorm_compile" : "layernorm_compile";
  Launch launch = plan<T>(op, x, add_residual ? &x : nullptr, w, has_bias ? std::optional(w) : std::nullopt, x, {}, where);
  return layernorm_kernel<T>().compile(target, x, x, w, w, x, 1e-5f, int(launch.block.x), add_residual, has_bias);
}

}  // namespace

#define CUTEJIT_LAYERNORM_FOR(T)                                                                                                     \
  void layernorm(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& weight,                                     \
                 const std::optional<DeviceTensor<T>>& bias, const DeviceTensor<T>& y, const NormOptions& options,                  \
                 std::source_location where) {                                                                                      \
    layernorm_t<T>("layernorm", device, x, nullptr, weight, bias, y, options, where);                                               \
  }                                                                                                                                 \
  void add_layernorm(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& residual, const DeviceTensor<T>& weight, \
                     const std::optional<DeviceTensor<T>>& bias, const DeviceTensor<T>& y, const NormOptions& options,              \
                     std::source_location where) {                                                                                  \
    layernorm_t<T>("add_layernorm", device, x, &residual, weight, bias, y, options, where);                                         \
  }
CUTEJIT_LAYERNORM_FOR(f32)
CUTEJIT_LAYERNORM_FOR(f16)
CUTEJIT_LAYERNORM_FOR(bf16)
#undef CUTEJIT_LAYERNORM_FOR

CompiledKernel layernorm_compile(const Target& target, DType element, int64_t rows, int64_t hidden, bool add_residual, bool has_bias,
                                 std::source_location where) {
  return detail::with_element(element, "layernorm_compile", where, [&]<class T>(T) {
    return layernorm_compile_t<T>(target, rows, hidden, add_residual, has_bias, where);
  });
}

}  // namespace cutejit::kernels
