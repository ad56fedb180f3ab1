// A gemm call as the architecture kernels take it: the checked shape and layouts, the operands,
// and the epilogue, both as host values and as the traced function each kernel applies.
#pragma once

#include <cstddef>
#include <source_location>
#include <string>

#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/gemm.hpp"
#include "cutejit/kernels/gemm_hook.hpp"
#include "cutejit/kernels/gemm/epilogue.hpp"

namespace cutejit::kernels::detail {

/// The epilogue a kernel is traced with, one small integer: 0 is the plain store (the kernels'
/// Identity, no hook at all); otherwise bit 0 is set, bit 1 reads C (beta), bit 2 adds the bias, bits 3-4 hold
/// the Activation, and bits 5-8 say which scales multiply the product (GemmScales): A's (one
/// value, or one per row with bit 6) and B's (one value, or one per column of C with bit 8).
/// alpha is always applied (a multiply by 1 is exact).
enum EpilogueBits : int {
  epilogue_hook = 1 << 0,
  epilogue_beta = 1 << 1,
  epilogue_bias = 1 << 2,
  epilogue_activation_shift = 3,
  epilogue_activation_mask = 3,
  epilogue_scale_a = 1 << 5,
  epilogue_scale_a_rows = 1 << 6,
  epilogue_scale_b = 1 << 7,
  epilogue_scale_b_columns = 1 << 8,
  /// GemmOptions::hook: applied last; the bits from epilogue_hook_serial_shift hold its serial,
  /// so that each hook's kernels are specializations of their own.
  epilogue_user_hook = 1 << 9,
  epilogue_hook_serial_shift = 12,
};
inline constexpr int max_hook_serial = (1 << (31 - epilogue_hook_serial_shift)) - 1;

/// The hook of the gemm call being traced on this thread (HookScope in gemm.cpp sets it): the
/// traced epilogue calls it for epilogue code `code`. Throws when it is not that code's hook (a
/// trace of the kernel from anywhere but a call that gives the hook).
const GemmHook& tracing_hook(int code);

/// Makes `hook` the one tracing_hook gives on this thread while it lives (around a call's
/// prepare or compile, where its kernels are traced).
class HookScope {
 public:
  explicit HookScope(const GemmHook* hook);
  ~HookScope();
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;

 private:
  const GemmHook* previous_;
};

inline int epilogue_code(const GemmOptions& o) {
  if (o.alpha == 1.0f && o.beta == 0.0f && !o.bias && o.activation == Activation::none && !o.scales && !o.hook) return 0;
  int scales = 0;
  if (o.scales)
    scales = epilogue_scale_a | (o.scales->a.shape[0] > 1 ? epilogue_scale_a_rows : 0) | epilogue_scale_b |
             (o.scales->b.shape[0] > 1 ? epilogue_scale_b_columns : 0);
  const int user = o.hook ? epilogue_user_hook | (o.hook->serial() << epilogue_hook_serial_shift) : 0;
  return epilogue_hook | (o.beta != 0.0f ? epilogue_beta : 0) | (o.bias ? epilogue_bias : 0) |
         (int(o.activation) << epilogue_activation_shift) | scales | user;
}

/// The fusions of GemmOptions (rmsnorm_a, glu) as one small integer, traced into the few-row
/// kernel: bit 0 the norm, bit 1 the gated unit, the bits above its Activation.
enum FusionBits : int { fusion_norm = 1 << 0, fusion_glu = 1 << 1, fusion_activation_shift = 2 };

inline int fusion_code(const GemmOptions& o) {
  return (o.rmsnorm_a ? fusion_norm : 0) | (o.glu ? fusion_glu | (int(*o.glu) << fusion_activation_shift) : 0);
}

/// An Activation, traced: x itself, or the function of x it names.
inline F32 activate(Activation a, const F32& x) {
  switch (a) {
    case Activation::none: return x;
    case Activation::relu: return max(x, F32(0.0f));
    case Activation::silu: return x / (1.0f + exp(-x));
    case Activation::gelu_tanh: {
      const float k = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * x * (1.0f + tanh(k * (x + 0.044715f * x * x * x)));
    }
  }
  return x;
}

/// A tensor with its element type set aside (a DeviceTensor's fields do not depend on it):
/// GemmProblem's element types say what its operands hold, and typed() gives one back.
using AnyTensor = DeviceTensor<std::byte>;

template <class T, class U>
DeviceTensor<T> typed(const DeviceTensor<U>& x) {
  DeviceTensor<T> t;
  t.ptr = x.ptr, t.rank = x.rank, t.shape = x.shape, t.stride = x.stride;
  return t;
}

/// The checks of the epilogue's terms that every GEMM operator shares (an FP8 C takes no beta and
/// no bias; the bias is N contiguous values of C's type `out`; the activation is one of the
/// four), at the caller's line `where` as operator `op`; and the bias as the kernels take it:
/// C's first row (at `c_ptr`, never read) where there is none.
AnyTensor checked_bias(const char* op, DType out, int64_t n, uint64_t c_ptr, const GemmOptions& options, const std::source_location& where);

struct GemmProblem {
  /// C is (m, n); B has n rows, or 2 n with glu.
  int64_t m = 0, n = 0, k = 0;
  Major a_major = Major::k, b_major = Major::k;
  /// A's and B's element type (bf16, f16 or f8e4m3) and C's and the bias's (gemm.hpp's overloads).
  DType ab = DType::bf16, out = DType::bf16;
  AnyTensor a, b, c;
  /// The bias, or (when there is none) C's first row, which the kernel never reads: every
  /// kernel takes the same parameters whatever its epilogue.
  AnyTensor bias;
  /// GemmScales' two vectors, or (without them) C's first row as f32 values, never read.
  DeviceTensor<f32> scale_a, scale_b;
  float alpha = 1.0f, beta = 0.0f;
  int epilogue = 0;
  /// rmsnorm_a's weights, or (without it) A's first row, never read; and its epsilon.
  DeviceTensor<bf16> norm_weight;
  float eps = 0.0f;
  int fusion = 0;
  bool tune = false;
  std::shared_ptr<const GemmHook> hook;  ///< GemmOptions::hook, alive while the call traces
  StreamHandle stream = nullptr;
  bool programmatic_dependent_launch = false;  ///< GemmOptions'
  std::source_location where;
};

/// f.template operator()<TA, TC>() for the problem's element types: the run-time types to the
/// kernel templates of each architecture.
template <class F>
auto with_elements(const GemmProblem& p, F&& f) {
  switch (p.ab) {
    case DType::f16: return f.template operator()<f16, f16>();
    case DType::f8e4m3:
      if (p.out == DType::f8e4m3) return f.template operator()<f8e4m3, f8e4m3>();
      return f.template operator()<f8e4m3, bf16>();
    default: return f.template operator()<bf16, bf16>();
  }
}

/// The traced epilogue of GemmProblem::epilogue (nonzero): alpha (scale_a scale_b x) + beta C +
/// bias, activated.
template <class TC>
struct LinearEpilogue {
  const Tensor<TC>& c;
  const Tensor<TC>& bias;
  const Tensor<f32>& scale_a;
  const Tensor<f32>& scale_b;
  F32 alpha, beta;
  int code;

  F32 operator()(const F32& acc, const Int& row, const Int& col) const {
    F32 x = acc;
    if (code & epilogue_scale_a) x = x * F32(scale_a(code & epilogue_scale_a_rows ? row : Int(0)));
    if (code & epilogue_scale_b) x = x * F32(scale_b(code & epilogue_scale_b_columns ? col : Int(0)));
    x = alpha * x;
    if (code & epilogue_beta) x = x + beta * cast<float>(Value<TC>(c(row, col)));
    if (code & epilogue_bias) x = x + cast<float>(Value<TC>(bias(col)));
    x = activate(Activation((code >> epilogue_activation_shift) & epilogue_activation_mask), x);
    if (code & epilogue_user_hook) x = tracing_hook(code)(x, row, col);
    return x;
  }
};

/// The traced epilogue of a gated product (GemmOptions::glu): act(w) * v, then the linear
/// epilogue (with code 0, only alpha, a multiply by 1).
template <class TC>
struct GatedEpilogue {
  Activation gate;
  LinearEpilogue<TC> then;

  F32 operator()(const F32& w, const F32& v, const Int& row, const Int& col) const { return then(activate(gate, w) * v, row, col); }
};

/// (M, K) or (N, K) with strides swapped: the operand as memory holds it, rows contiguous, for
/// a TMA map (a K-major operand as it is, an MN-major one as its (K, M) transpose).
template <class T>
DeviceTensor<T> rows_in_memory(const AnyTensor& x, Major major) {
  if (major == Major::k) return typed<T>(x);
  return DeviceTensor<T>::make(x.ptr, std::array<int64_t, 2>{x.shape[1], x.shape[0]}, std::array<int64_t, 2>{x.stride[1], x.stride[0]});
}

// The architecture kernels: sm90.cpp, sm100.cpp, sm80.cpp, and small_m.cpp for a few rows of
// A on any of them (where gemm_small_m_fits; the only one that takes the norm), which hands the
// batches its FMAs cannot keep up with to small_m_mma.cpp's tensor-core kernel.
PreparedLaunch gemm_sm90_prepare(const Device& device, const GemmProblem& p);
std::vector<CompiledKernel> gemm_sm90_compile(const Target& target, const GemmProblem& p);
PreparedLaunch gemm_sm100_prepare(const Device& device, const GemmProblem& p);
std::vector<CompiledKernel> gemm_sm100_compile(const Target& target, const GemmProblem& p);
PreparedLaunch gemm_sm80_prepare(const Device& device, const GemmProblem& p);
std::vector<CompiledKernel> gemm_sm80_compile(const Target& target, const GemmProblem& p);
bool gemm_small_m_fits(const GemmProblem& p);
PreparedLaunch gemm_small_m_prepare(const Device& device, const GemmProblem& p);
std::vector<CompiledKernel> gemm_small_m_compile(const Target& target, const GemmProblem& p);
bool gemm_small_m_mma_fits(const GemmProblem& p);
PreparedLaunch gemm_small_m_mma_prepare(const Device& device, const GemmProblem& p);
CompiledKernel gemm_small_m_mma_compile(const Target& target, const GemmProblem& p);

}  // namespace cutejit::kernels::detail
