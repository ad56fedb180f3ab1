// kernels::gemm for a few rows of A (M up to 8, both operands K-major), on every target from
// sm_80: gemm/small_m.hpp's bandwidth-bound kernel, one per element types (M and the rows of B
// a warp are trace-time values), traced with the plain store or the call's epilogue, with the
// call's fusions (rmsnorm_a and glu, bf16 only), and waiting for the kernel before it where the
// call asks for programmatic dependent launch on sm_90 and newer. From 3 rows of bf16 or f16 A
// it hands the problem to the tensor-core form (small_m_mma.cpp) where that takes it.
#include "cutejit/kernels/gemm/small_m.hpp"

#include <string>

#include "kernels/dependent_launch.hpp"
#include "kernels/element_names.hpp"
#include "kernels/gemm/gemm_problem.hpp"
#include "kernels/gemm/small_m_fusion.hpp"

namespace cutejit::kernels::detail {

namespace {

static_assert(gemm_small_m::Config::max_m == gemm_fusion_max_m);

/// The traced fusions of GemmProblem::fusion: the gated unit, and the norm.
gemm_small_m::Fusion fusion_of(int code, const Tensor<bf16>& norm_weight, const F32& eps) {
  gemm_small_m::Fusion f = gated_fusion(code);
  if (code & fusion_norm) f.norm = gemm_small_m::Fusion::RowNorm{norm_weight, eps};
  return f;
}

template <class T, class TC>
auto& small_m_kernel() {
  static Kernel k{std::string("cutejit_gemm_small_m_") + element_name<T>() + output_suffix<T, TC>(),
                  [](Tensor<T> a, Tensor<T> b, Tensor<TC> c, Tensor<TC> bias, Tensor<f32> scale_a, Tensor<f32> scale_b, Value<f32> alpha,
                     Value<f32> beta, Constexpr<int> epilogue, Tensor<bf16> norm_weight, Value<f32> eps, Constexpr<int> fusion,
                     Constexpr<bool> dependent, Constexpr<int> m, Constexpr<int> rows) {
                    const gemm_small_m::Config config{.m = m, .rows = rows};
                    const gemm_small_m::Fusion fused = fusion_of(int(fusion), norm_weight, eps);
                    if (int(epilogue) == 0) gemm_small_m::kernel(config, a, b, c, Identity{}, fused, dependent);
                    else
                      gemm_small_m::kernel(config, a, b, c, LinearEpilogue<TC>{c, bias, scale_a, scale_b, alpha, beta, int(epilogue)}, fused,
                                           dependent);
                  }};
  return k;
}

/// f.template operator()<T, TC>(kernel) for the problem's element types.
template <class F>
auto with_kernel(const GemmProblem& p, F&& f) {
  return with_elements(p, [&]<class T, class TC>() { return f.template operator()<T, TC>(small_m_kernel<T, TC>()); });
}

/// Two rows of B a warp, unless that leaves fewer than two CTAs a multiprocessor; with glu
/// always two, a row of W and one of V for one column of C (the CTAs of a plain GEMM over B).
int rows_for(const GemmProblem& p, int multiprocessors) {
  if (p.fusion & fusion_glu) return 2;
  return p.n / (gemm_small_m::Config::warps * 2) >= 2 * multiprocessors ? 2 : 1;
}

/// Whether the tensor-core form (small_m_mma.cpp) takes the problem: from `mma_from_m` rows of
/// A. Timed against each other on an H100 (cutejit_bench_kernels few-rows, 2026-12-07, at
/// Qwen3-8B's four decode projections): this kernel up to 7% faster at M = 1 and 2 (one shape
/// a tie at 2), a tie at 3, the tensor cores 0-10% faster at 4 and 23-45% at 8, where this
/// kernel's M FMAs a weight, not the weights' bytes, set its pace.
constexpr int64_t mma_from_m = 3;
bool on_tensor_cores(const GemmProblem& p) { return p.m >= mma_from_m && gemm_small_m_mma_fits(p); }

}  // namespace

/// This kernel up to 8 rows; past that only the tensor-core one.
bool gemm_small_m_fits(const GemmProblem& p) {
  const int vec = p.ab == DType::f8e4m3 ? gemm_small_m::Config::vec<f8e4m3> : gemm_small_m::Config::vec<bf16>;
  return (p.m >= 1 && p.m <= gemm_small_m::Config::max_m && p.a_major == Major::k && p.b_major == Major::k && p.k % vec == 0) ||
         gemm_small_m_mma_fits(p);
}

PreparedLaunch gemm_small_m_prepare(const Device& device, const GemmProblem& p) {
  if (on_tensor_cores(p)) return gemm_small_m_mma_prepare(device, p);
  const gemm_small_m::Config config{.m = int(p.m), .rows = rows_for(p, device.multiprocessors())};
  return with_kernel(p, [&]<class T, class TC>(auto& kernel) {
    const bool dependent = dependent_launch(device.target(), p.programmatic_dependent_launch);
    Launch launch = gemm_small_m::launch(p.n, config, (p.fusion & fusion_glu) != 0, dependent);
    launch.stream = p.stream;
    launch.where = p.where;
    return kernel.prepare(device, launch, typed<T>(p.a), typed<T>(p.b), typed<TC>(p.c), typed<TC>(p.bias), p.scale_a, p.scale_b, p.alpha,
                          p.beta, p.epilogue, p.norm_weight, p.eps, p.fusion, Constexpr<bool>{dependent}, config.m, config.rows);
  });
}

std::vector<CompiledKernel> gemm_small_m_compile(const Target& target, const GemmProblem& p) {
  if (on_tensor_cores(p)) return {gemm_small_m_mma_compile(target, p)};
  std::vector<CompiledKernel> out;
  // Each width rows_for may pick, as that depends on the GPU's multiprocessors.
  for (int rows : {1, 2}) {
    if (rows == 1 && (p.fusion & fusion_glu)) continue;
    out.push_back(with_kernel(p, [&]<class T, class TC>(auto& kernel) {
      return kernel.compile(target, typed<T>(p.a), typed<T>(p.b), typed<TC>(p.c), typed<TC>(p.bias), p.scale_a, p.scale_b, p.alpha, p.beta,
                            p.epilogue, p.norm_weight, p.eps, p.fusion, Constexpr<bool>{dependent_launch(target, p.programmatic_dependent_launch)},
                            int(p.m), rows);
    }));
  }
  return out;
}

}  // namespace cutejit::kernels::detail
