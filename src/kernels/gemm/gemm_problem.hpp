// A gemm call as the architecture kernels take it: the checked shape and layouts, the operands,
// and the epilogue, both as host values and as the traced function each kernel applies.
#pragma once

#include <source_location>
#include <string>

#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/gemm.hpp"
#include "cutejit/kernels/gemm/epilogue.hpp"

namespace cutejit::kernels::detail {

/// The epilogue a kernel is traced with, one small integer: 0 is the plain store (the kernels'
/// Identity, no hook at all); otherwise bit 0 reads C (beta), bit 1 adds the bias, and the bits
/// above hold the Activation. alpha is always applied (a multiply by 1 is exact).
enum EpilogueBits : int { epilogue_hook = 1 << 0, epilogue_beta = 1 << 1, epilogue_bias = 1 << 2, epilogue_activation_shift = 3 };

inline int epilogue_code(const GemmOptions& o) {
  if (o.alpha == 1.0f && o.beta == 0.0f && !o.bias && o.activation == Activation::none) return 0;
  return epilogue_hook | (o.beta != 0.0f ? epilogue_beta : 0) | (o.bias ? epilogue_bias : 0) |
         (int(o.activation) << epilogue_activation_shift);
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

struct GemmProblem {
  /// C is (m, n); B has n rows, or 2 n with glu.
  int64_t m = 0, n = 0, k = 0;
  Major a_major = Major::k, b_major = Major::k;
  DeviceTensor<bf16> a, b, c;
  /// The bias, or (when there is none) C's first row, which the kernel never reads: every
  /// kernel takes the same parameters whatever its epilogue.
  DeviceTensor<bf16> bias;
  float alpha = 1.0f, beta = 0.0f;
  int epilogue = 0;
  /// rmsnorm_a's weights, or (without it) A's first row, never read; and its epsilon.
  DeviceTensor<bf16> norm_weight;
  float eps = 0.0f;
  int fusion = 0;
  StreamHandle stream = nullptr;
  std::source_location where;
};

/// The checks every kernel shares; `op` names the operator in errors.
GemmProblem make_problem(const char* op, const DeviceTensor<bf16>& a, const DeviceTensor<bf16>& b, const DeviceTensor<bf16>& c,
                         const GemmOptions& options, const std::source_location& where);

/// The traced epilogue of GemmProblem::epilogue (nonzero): alpha x + beta C + bias, activated.
struct LinearEpilogue {
  const Tensor<bf16>& c;
  const Tensor<bf16>& bias;
  F32 alpha, beta;
  int code;

  F32 operator()(const F32& acc, const Int& row, const Int& col) const {
    F32 x = alpha * acc;
    if (code & epilogue_beta) x = x + beta * cast<float>(BF16(c(row, col)));
    if (code & epilogue_bias) x = x + cast<float>(BF16(bias(col)));
    return activate(Activation(code >> epilogue_activation_shift), x);
  }
};

/// (M, K) or (N, K) with strides swapped: the operand as memory holds it, rows contiguous, for
/// a TMA map (a K-major operand as it is, an MN-major one as its (K, M) transpose).
DeviceTensor<bf16> rows_in_memory(const DeviceTensor<bf16>& x, Major major);

// The architecture kernels: sm90.cpp, sm100.cpp, sm80.cpp, and small_m.cpp for a few rows of
// A on any of them (where gemm_small_m_fits; the only one that takes fusions).
PreparedLaunch gemm_sm90_prepare(const Device& device, const GemmProblem& p);
std::vector<CompiledKernel> gemm_sm90_compile(const Target& target, const GemmProblem& p);
PreparedLaunch gemm_sm100_prepare(const Device& device, const GemmProblem& p);
std::vector<CompiledKernel> gemm_sm100_compile(const Target& target, const GemmProblem& p);
PreparedLaunch gemm_sm80_prepare(const Device& device, const GemmProblem& p);
std::vector<CompiledKernel> gemm_sm80_compile(const Target& target, const GemmProblem& p);
bool gemm_small_m_fits(const GemmProblem& p);
PreparedLaunch gemm_small_m_prepare(const Device& device, const GemmProblem& p);
std::vector<CompiledKernel> gemm_small_m_compile(const Target& target, const GemmProblem& p);

}  // namespace cutejit::kernels::detail
