// kernels::gemm from sm_80 on: gemm/sm80.hpp's multistage mma.sync GEMM (128 x 128 tiles, 3
// stages), A and B of either major (read from their strides; FP8 K-major), one kernel per
// element types, traced with the plain store or the call's epilogue. The path of sm_80, sm_86,
// sm_89 and sm_120a, and of the sm_100 family for MN-major operands.
#include "cutejit/kernels/gemm/sm80.hpp"

#include <string>
#include <type_traits>

#include "kernels/element_names.hpp"
#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels::detail {

namespace {

/// The mma.sync atom of each element type: m16n8k16 for 16-bit operands, m16n8k32 for FP8 (sm_89 on).
template <class TA>
using Atom = std::conditional_t<std::is_same_v<TA, bf16>, SM80_16x8x16_F32BF16BF16F32_TN,
                                std::conditional_t<std::is_same_v<TA, f16>, SM80_16x8x16_F32F16F16F32_TN, SM89_16x8x32_F32E4M3E4M3F32_TN>>;
constexpr gemm_sm80::Config config{};

template <class TA, class TC>
auto& sm80_kernel() {
  static Kernel k{std::string("cutejit_gemm_sm80_") + element_name<TA>() + output_suffix<TA, TC>(),
                  [](Tensor<TA> a, Tensor<TA> b, Tensor<TC> c, Tensor<TC> bias, Tensor<f32> scale_a, Tensor<f32> scale_b, Value<f32> alpha,
                     Value<f32> beta, Constexpr<int> epilogue) {
                    if (int(epilogue) == 0) gemm_sm80::kernel<Atom<TA>, TC, config>(a, b, c);
                    else gemm_sm80::kernel<Atom<TA>, TC, config>(a, b, c, LinearEpilogue<TC>{c, bias, scale_a, scale_b, alpha, beta, int(epilogue)});
                  }};
  return k;
}

}  // namespace

PreparedLaunch gemm_sm80_prepare(const Device& device, const GemmProblem& p) {
  return with_elements(p, [&]<class TA, class TC>() {
    Launch launch = gemm_sm80::launch<TA>(p.m, p.n, config);
    launch.stream = p.stream;
    launch.where = p.where;
    return sm80_kernel<TA, TC>().prepare(device, launch, typed<TA>(p.a), typed<TA>(p.b), typed<TC>(p.c), typed<TC>(p.bias), p.scale_a,
                                         p.scale_b, p.alpha, p.beta, p.epilogue);
  });
}

std::vector<CompiledKernel> gemm_sm80_compile(const Target& target, const GemmProblem& p) {
  return with_elements(p, [&]<class TA, class TC>() {
    return std::vector<CompiledKernel>{
        sm80_kernel<TA, TC>().compile(target, typed<TA>(p.a), typed<TA>(p.b), typed<TC>(p.c), typed<TC>(p.bias), p.scale_a, p.scale_b, p.alpha,
                                      p.beta, p.epilogue)};
  });
}

}  // namespace cutejit::kernels::detail
