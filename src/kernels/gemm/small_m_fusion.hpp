// The few-row kernels' traced fusions (gemm/small_m.hpp's Fusion) from GemmProblem::fusion's
// bits, which the FMA kernel (small_m.cpp) and the tensor-core one (small_m_mma.cpp) read alike.
#pragma once

#include "cutejit/kernels/gemm/small_m.hpp"
#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels::detail {

/// The gated unit of fusion code `code`: none, or B = [W; V] with its gate (none: the identity).
/// The norm is the caller's to add.
inline gemm_small_m::Fusion gated_fusion(int code) {
  gemm_small_m::Fusion f;
  f.gated = (code & fusion_glu) != 0;
  if (const auto act = Activation(code >> fusion_activation_shift); f.gated && act != Activation::none)
    f.gate = [act](const F32& x) { return activate(act, x); };
  return f;
}

}  // namespace cutejit::kernels::detail
