// Rotary embedding in place: one CTA a token. Its threads walk the token's (head, i) pairs,
// i < head_dim / 2, each rotating x[head, i] and x[head, i + head_dim / 2] by the angle
// position * inv_freq[i] ("rotate half", as Qwen3's and Llama's code pairs them). Where each
// half of a head is whole 16-byte vectors on 16-byte boundaries (head dim 16, 32, ... in bf16,
// the usual layouts), a thread takes a vector of pairs at a time; otherwise one pair.
#include <array>
#include <cmath>
#include <string>

#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/elementwise.hpp"
#include "kernels/checks.hpp"
#include "kernels/element_names.hpp"

namespace cutejit::kernels {

namespace {

constexpr int threads = 128;

/// `Vec` pairs a thread at a time: the element's 16-byte vector, or 1.
template <class T, int Vec>
auto& rope_kernel() {
  static Kernel k{std::string("cutejit_rope_") + detail::element_name<T>() + (Vec > 1 ? "_v" + std::to_string(Vec) : ""),
                  [](Tensor<T> x, Tensor<int32_t> positions, Tensor<f32> inv_freq) {
                    block_shape(threads);
                    Int token = block_idx().x;
                    // The launch takes this kernel only for halves of whole vectors (vectorized()).
                    Int half = assume_divisible(x.shape(2) / 2, Vec);
                    F32 position = cast<f32>(Int(positions(token)));
                    for_(thread_idx().x, x.shape(1) * (half / Vec), threads, [&](Int p) {
                      Int head = p / (half / Vec), i = (p % (half / Vec)) * Vec;
                      std::array<Value<T>, Vec> a = x.pointer_at({token, head, i}).template load_vector<Vec>();
                      std::array<Value<T>, Vec> b = x.pointer_at({token, head, i + half}).template load_vector<Vec>();
                      std::array<Value<T>, Vec> ra, rb;
                      for (size_t j = 0; j < size_t(Vec); ++j) {
                        F32 angle = position * F32(inv_freq(i + int(j)));
                        F32 c = cos(angle), s = sin(angle), fa = cast<f32>(a[j]), fb = cast<f32>(b[j]);
                        ra[j] = cast<T>(fa * c - fb * s);
                        rb[j] = cast<T>(fb * c + fa * s);
                      }
                      x.pointer_at({token, head, i}).template store_vector<Vec>(ra);
                      x.pointer_at({token, head, i + half}).template store_vector<Vec>(rb);
                    });
                  }};
  return k;
}

/// Whether each half of every head of x is whole 16-byte vectors on 16-byte boundaries.
template <class T>
bool vectorized(const DeviceTensor<T>& x) {
  constexpr int64_t vec = detail::vector<T>;
  return (x.shape[2] / 2) % vec == 0 && x.stride[0] % vec == 0 && x.stride[1] % vec == 0 && x.ptr % 16 == 0;
}

template <class T>
Launch plan(const DeviceTensor<T>& x, const DeviceTensor<int32_t>& positions, const DeviceTensor<float>& inv_freq,
            const ElementwiseOptions& options, const std::source_location& where) {
  const char* op = "rope";
  detail::require(x.rank == 3, op, "x is a tensor of rank " + std::to_string(x.rank) + "; it takes (tokens, heads, head_dim)", where);
  detail::require(x.stride[2] == 1, op, "x's head_dim is not contiguous (its last stride is " + std::to_string(x.stride[2]) + ")", where);
  detail::require(x.shape[2] % 2 == 0, op, "head_dim " + std::to_string(x.shape[2]) + " is odd; rotary embedding rotates pairs", where);
  detail::require(positions.rank == 1 && positions.shape[0] == x.shape[0], op,
                  "positions is " + detail::shape_of(positions) + "; it takes (" + std::to_string(x.shape[0]) + "), one per token",
                  where);
  detail::require(inv_freq.rank == 1 && inv_freq.shape[0] == x.shape[2] / 2, op,
                  "inv_freq is " + detail::shape_of(inv_freq) + "; it takes (" + std::to_string(x.shape[2] / 2) +
                      "), as rope_inv_freq(head_dim, theta) makes it",
                  where);
  detail::require(x.shape[0] < (int64_t(1) << 31), op, "x has more than 2^31 - 1 tokens", where);
  return Launch{.grid = uint32_t(std::max<int64_t>(x.shape[0], 1)), .block = threads, .stream = options.stream, .where = where};
}

template <class T>
void rope_t(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<int32_t>& positions, const DeviceTensor<float>& inv_freq,
            const ElementwiseOptions& options, const std::source_location& where) {
  Launch launch = plan(x, positions, inv_freq, options, where);
  if (x.shape[0] * x.shape[1] == 0) return;
  if (vectorized(x)) rope_kernel<T, detail::vector<T>>()(device, launch, x, positions, inv_freq);
  else rope_kernel<T, 1>()(device, launch, x, positions, inv_freq);
}

template <class T>
CompiledKernel rope_compile_t(const Target& target, int64_t tokens, int64_t heads, int64_t head_dim, const std::source_location& where) {
  const auto x = DeviceTensor<T>::for_compile({tokens, heads, head_dim}, where);
  const auto positions = DeviceTensor<int32_t>::for_compile({tokens}, where);
  const auto inv_freq = DeviceTensor<float>::for_compile({head_dim / 2}, where);
  (void)plan(x, positions, inv_freq, {}, where);
  return vectorized(x) ? rope_kernel<T, detail::vector<T>>().compile(target, x, positions, inv_freq)
                       : rope_kernel<T, 1>().compile(target, x, positions, inv_freq);
}

}  // namespace

std::vector<float> rope_inv_freq(int64_t head_dim, double theta) {
  if (head_dim < 2 || head_dim % 2 || !(theta > 1))
    throw Error("error: rope_inv_freq: head_dim must be even and positive and theta above 1, not " + std::to_string(head_dim) + " and " +
                std::to_string(theta));
  std::vector<float> f(size_t(head_dim / 2));
  for (int64_t i = 0; i < head_dim / 2; ++i) f[size_t(i)] = float(std::pow(theta, -2.0 * double(i) / double(head_dim)));
  return f;
}

#define CUTEJIT_ROPE_FOR(T)                                                                                                      \
  void rope(const Device& device, const DeviceTensor<T>& x, const DeviceTensor<int32_t>& positions,                             \
            const DeviceTensor<float>& inv_freq, const ElementwiseOptions& options, std::source_location where) {               \
    rope_t<T>(device, x, positions, inv_freq, options, where);                                                                  \
  }
CUTEJIT_ROPE_FOR(f32)
CUTEJIT_ROPE_FOR(f16)
CUTEJIT_ROPE_FOR(bf16)
#undef CUTEJIT_ROPE_FOR

CompiledKernel rope_compile(const Target& target, DType element, int64_t tokens, int64_t heads, int64_t head_dim,
                            std::source_location where) {
  return detail::with_element(element, "rope_compile", where, [&]<class T>(T) { return rope_compile_t<T>(target, tokens, heads, head_dim, where); });
}

}  // namespace cutejit::kernels
