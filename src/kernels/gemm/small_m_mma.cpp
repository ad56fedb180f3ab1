// kernels::gemm for a few rows of bf16 or f16 A on the tensor cores (gemm/small_m_mma.hpp), on
// every target from sm_80: one kernel per element types and blocks of 8 rows of A (gemm hands
// it up to gemm_few_rows_max_m rows; the kernel takes up to 64), traced with the plain store or
// the call's epilogue, with glu, and waiting for the kernel before it where the call asks for
// programmatic dependent launch on sm_90 and newer. small_m.cpp decides when it runs instead of
// the FMA kernel.
#include "cutejit/kernels/gemm/small_m_mma.hpp"

#include <string>

#include "kernels/dependent_launch.hpp"
#include "kernels/element_names.hpp"
#include "kernels/gemm/gemm_problem.hpp"
#include "kernels/gemm/small_m_fusion.hpp"

namespace cutejit::kernels::detail {

namespace {

using gemm_small_m_mma::Config;
static_assert(gemm_few_rows_max_m <= Config::block_m * Config::max_m_blocks);

template <class T, class TC>
auto& small_m_mma_kernel() {
  static Kernel k{std::string("cutejit_gemm_small_m_mma_") + element_name<T>() + output_suffix<T, TC>(),
                  [](Tensor<T> a, Tensor<T> b, Tensor<TC> c, Tensor<TC> bias, Tensor<f32> scale_a, Tensor<f32> scale_b, Value<f32> alpha,
                     Value<f32> beta, Constexpr<int> epilogue, Constexpr<int> fusion, Constexpr<int> m_blocks, Constexpr<bool> dependent) {
                    const gemm_small_m::Fusion fused = gated_fusion(int(fusion));
                    const Config config = Config::for_blocks(int(m_blocks));
                    if (int(epilogue) == 0) gemm_small_m_mma::kernel(config, a, b, c, Identity{}, fused, dependent);
                    else
                      gemm_small_m_mma::kernel(config, a, b, c, LinearEpilogue<TC>{c, bias, scale_a, scale_b, alpha, beta, int(epilogue)},
                                               fused, dependent);
                  }};
  return k;
}

/// f.template operator()<T, TC>(kernel) for the problem's element types (bf16 or f16).
template <class F>
auto with_kernel(const GemmProblem& p, F&& f) {
  if (p.ab == DType::f16) return f.template operator()<f16, f16>(small_m_mma_kernel<f16, f16>());
  return f.template operator()<bf16, bf16>(small_m_mma_kernel<bf16, bf16>());
}

}  // namespace

bool gemm_small_m_mma_fits(const GemmProblem& p) {
  const bool glu = p.fusion & fusion_glu;
  return p.m >= 1 && p.m <= gemm_few_rows_max_m && p.a_major == Major::k && p.b_major == Major::k &&
         (p.ab == DType::bf16 || p.ab == DType::f16) && !(p.fusion & fusion_norm) && p.k % Config::chunk == 0 &&
         p.n % Config::columns_per_cta(glu) == 0;
}

PreparedLaunch gemm_small_m_mma_prepare(const Device& device, const GemmProblem& p) {
  return with_kernel(p, [&]<class T, class TC>(auto& kernel) {
    const bool dependent = dependent_launch(device.target(), p.programmatic_dependent_launch);
    Launch launch = gemm_small_m_mma::launch(p.n, Config::for_m(p.m), (p.fusion & fusion_glu) != 0, dependent);
    launch.stream = p.stream;
    launch.where = p.where;
    return kernel.prepare(device, launch, typed<T>(p.a), typed<T>(p.b), typed<TC>(p.c), typed<TC>(p.bias), p.scale_a, p.scale_b, p.alpha,
                          p.beta, p.epilogue, p.fusion, Constexpr<int>{Config::m_blocks_for(p.m)}, Constexpr<bool>{dependent});
  });
}

CompiledKernel gemm_small_m_mma_compile(const Target& target, const GemmProblem& p) {
  return with_kernel(p, [&]<class T, class TC>(auto& kernel) {
    return kernel.compile(target, typed<T>(p.a), typed<T>(p.b), typed<TC>(p.c), typed<TC>(p.bias), p.scale_a, p.scale_b, p.alpha, p.beta,
                          p.epilogue, p.fusion, Constexpr<int>{Config::m_blocks_for(p.m)},
                          Constexpr<bool>{dependent_launch(target, p.programmatic_dependent_launch)});
  });
}

}  // namespace cutejit::kernels::detail
