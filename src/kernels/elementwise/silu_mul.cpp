// silu(gate) * up: each thread takes 16-byte vectors of the (rows, n) tensors in a grid-stride
// loop, computes in f32 and rounds as the reference model does (silu rounded, then the product).
#include <algorithm>

#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/elementwise.hpp"
#include "kernels/checks.hpp"
#include "kernels/element_names.hpp"

namespace cutejit::kernels {

namespace {

constexpr int threads = 256;

template <class T>
auto& silu_mul_kernel() {
  static Kernel k{std::string("cutejit_silu_mul_") + detail::element_name<T>(), [](Tensor<T> gate, Tensor<T> up, Tensor<T> out) {
                    constexpr int vec = detail::vector<T>;
                    block_shape(threads);
                    Int per_row = gate.shape(1) / vec;
                    Int vectors = gate.shape(0) * per_row;
                    for_(block_idx().x * threads + thread_idx().x, vectors, grid_dim().x * threads, [&](Int v) {
                      Int row = v / per_row, c = (v % per_row) * vec;
                      std::array<Value<T>, vec> g = gate.pointer_at({row, c}).template load_vector<vec>();
                      std::array<Value<T>, vec> u = up.pointer_at({row, c}).template load_vector<vec>();
                      std::array<Value<T>, vec> o;
                      for (size_t i = 0; i < size_t(vec); ++i) {
                        F32 x = cast<f32>(g[i]);
                        F32 silu = x / (1.0f + exp(-x));
                        o[i] = cast<T>(cast<f32>(cast<T>(silu)) * cast<f32>(u[i]));
                      }
                      out.pointer_at({row, c}).template store_vector<vec>(o);
                    });
                  }};
  return k;
}

template <class T>
Launch plan(const DeviceTensor<T>& gate, const DeviceTensor<T>& up, const DeviceTensor<T>& out, const ElementwiseOptions& options,
            const std::source_location& where) {
  const char* op = "silu_mul";
  detail::require_rows(gate, "gate", op, detail::vector<T>, where);
  detail::require_rows(up, "up", op, detail::vector<T>, where);
  detail::require_rows(out, "out", op, detail::vector<T>, where);
  detail::require(up.shape == gate.shape && out.shape == gate.shape, op,
                  "gate, up and out must have one shape, not " + detail::shape_of(gate) + ", " + detail::shape_of(up) + " and " +
                      detail::shape_of(out),
                  where);
  const int64_t vectors = gate.shape[0] * gate.shape[1] / detail::vector<T>;
  const uint32_t blocks = uint32_t(std::clamp<int64_t>((vectors + threads - 1) / threads, 1, int64_t(1) << 20));
  return Launch{.grid = blocks, .block = threads, .stream = options.stream, .where = where};
}

template <class T>
void silu_mul_t(const Device& device, const DeviceTensor<T>& gate, const DeviceTensor<T>& up, const DeviceTensor<T>& out,
                const ElementwiseOptions& options, const std::source_location& where) {
  Launch launch = plan(gate, up, out, options, where);
  if (gate.shape[0] * gate.shape[1] == 0) return;
  silu_mul_kernel<T>()(device, launch, gate, up, out);
}

template <class T>
CompiledKernel silu_mul_compile_t(const Target& target, int64_t rows, int64_t n, const std::source_location& where) {
  const auto t = DeviceTensor<T>::for_compile({rows, n}, where);
  (void)plan(t, t, t, {}, where);
  return silu_mul_kernel<T>().compile(target, t, t, t);
}

}  // namespace

#define CUTEJIT_SILU_MUL_FOR(T)                                                                                                  \
  void silu_mul(const Device& device, const DeviceTensor<T>& gate, const DeviceTensor<T>& up, const DeviceTensor<T>& out,       \
                const ElementwiseOptions& options, std::source_location where) {                                                \
    silu_mul_t<T>(device, gate, up, out, options, where);                                                                       \
  }
CUTEJIT_SILU_MUL_FOR(f32)
CUTEJIT_SILU_MUL_FOR(f16)
CUTEJIT_SILU_MUL_FOR(bf16)
#undef CUTEJIT_SILU_MUL_FOR

CompiledKernel silu_mul_compile(const Target& target, DType element, int64_t rows, int64_t n, std::source_location where) {
  return detail::with_element(element, "silu_mul_compile", where, [&]<class T>(T) { return silu_mul_compile_t<T>(target, rows, n, where); });
}

}  // namespace cutejit::kernels
