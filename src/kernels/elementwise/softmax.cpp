// Row softmax: one CTA a row. Three passes over the row's 16-byte vectors, each thread reading
// back only its own (the row stays in L2): the maximum, the sum of exp(scale (x - max)), then
// the normalised values, all in f32 and rounded once. Subtracting the maximum keeps exp from
// overflowing; y may be x itself (a thread writes only what it has read).
#include <cmath>

#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/elementwise.hpp"
#include "kernels/checks.hpp"
#include "kernels/element_names.hpp"
#include "kernels/row_threads.hpp"

namespace cutejit::kernels {

namespace {

using detail::vector;

template <class T>
auto& softmax_kernel() {
  static Kernel k{std::string("cutejit_softmax_") + detail::element_name<T>(),
                  [](Tensor<T> x, Tensor<T> y, Value<f32> scale, Constexpr<int> threads) {
                    constexpr int vec = vector<T>;
                    block_shape(threads);
                    Int row = block_idx().x, t = thread_idx().x;
                    Int vectors = x.shape(1) / vec;
                    auto load = [&](const Int& k) { return x.pointer_at({row, k * vec}).template load_vector<vec>(); };

                    Var<f32> largest = -INFINITY;
                    for_(t, vectors, threads, [&](Int k) {
                      for (const Value<T>& v : load(k)) largest = max(F32(largest), cast<f32>(v));
                    });
                    F32 row_max = block_reduce(F32(largest), threads, Reduce::max);

                    Var<f32> sum = 0.0f;
                    for_(t, vectors, threads, [&](Int k) {
                      for (const Value<T>& v : load(k)) sum += exp((cast<f32>(v) - row_max) * scale);
                    });
                    F32 inverse = 1.0f / block_reduce(F32(sum), threads);

                    for_(t, vectors, threads, [&](Int k) {
                      std::array<Value<T>, vec> h = load(k), out;
                      for (size_t i = 0; i < size_t(vec); ++i) out[i] = cast<T>(exp((cast<f32>(h[i]) - row_max) * scale) * inverse);
                      y.pointer_at({row, k * vec}).template store_vector<vec>(out);
                    });
                  }};
  return k;
}

template <class T>
Launch plan(const char* op, const DeviceTensor<T>& x, const DeviceTensor<T>& y, const SoftmaxOptions& options,
            const std::source_location& where) {
  detail::require_rows(x, "x", op, vector<T>, where);
  detail::require_rows(y, "y", op, vector<T>, where);
  detail::require(y.shape == x.shape, op, "y is " + detail::shape_of(y) + "; it must have x's shape " + detail::shape_of(x), where);
  detail::require(x.shape[0] < (int64_t(1) << 31), op, "x has " + std::to_string(x.shape[0]) + " rows; at most 2^31 - 1 are launched",
                  where);
  detail::require(std::isfinite(options.scale) && options.scale > 0, op,
                  "scale is " + std::to_string(options.scale) + "; it must be finite and positive", where);
  return Launch{.grid = uint32_t(x.shape[0]), .block = uint32_t(detail::row_threads(x.shape[1], vector<T>)), .stream = options.stream,
                .where = where};
}

template <class T>
void softmax_t(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& y, const SoftmaxOptions& options,
               const std::source_location& where) {
  Launch launch = plan("softmax", x, y, options, where);
  if (x.shape[0] == 0 || x.shape[1] == 0) return;
  softmax_kernel<T>()(device, launch, x, y, options.scale, int(launch.block.x));
}

template <class T>
CompiledKernel softmax_compile_t(const Target& target, int64_t rows, int64_t n, const std::source_location& where) {
  const auto t = DeviceTensor<T>::for_compile({rows, n}, where);
  Launch launch = plan("softmax_compile", t, t, {}, where);
  return softmax_kernel<T>().compile(target, t, t, 1.0f, int(launch.block.x));
}

}  // namespace

#define CUTEJIT_SOFTMAX_FOR(T)                                                                                                     \
  void softmax(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<T>& y, const SoftmaxOptions& options,          \
               std::source_location where) {                                                                                     \
    softmax_t<T>(device, x, y, options, where);                                                                                  \
  }
CUTEJIT_SOFTMAX_FOR(f32)
CUTEJIT_SOFTMAX_FOR(f16)
CUTEJIT_SOFTMAX_FOR(bf16)
#undef CUTEJIT_SOFTMAX_FOR

CompiledKernel softmax_compile(const Target& target, DType element, int64_t rows, int64_t n, std::source_location where) {
  return detail::with_element(element, "softmax_compile", where, [&]<class T>(T) { return softmax_compile_t<T>(target, rows, n, where); });
}

}  // namespace cutejit::kernels
