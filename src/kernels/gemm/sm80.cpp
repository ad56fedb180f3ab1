// kernels::gemm from sm_80 on: gemm/sm80.hpp's multistage mma.sync GEMM (128 x 128 tiles, 3
// stages), A and B of either major (read from their strides), traced with the plain store or the
// call's epilogue. The path of sm_80, sm_86, sm_89 and sm_120a, and of the sm_100 family for
// MN-major operands.
#include "cutejit/kernels/gemm/sm80.hpp"

#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels::detail {

namespace {

using Atom = SM80_16x8x16_F32BF16BF16F32_TN;
constexpr gemm_sm80::Config config{};

auto& sm80_kernel() {
  static Kernel k{"cutejit_gemm_sm80_bf16", [](Tensor<bf16> a, Tensor<bf16> b, Tensor<bf16> c, Tensor<bf16> bias, Value<f32> alpha,
                                              Value<f32> beta, Constexpr<int> epilogue) {
                    if (int(epilogue) == 0) gemm_sm80::kernel<Atom, bf16, config>(a, b, c);
                    else gemm_sm80::kernel<Atom, bf16, config>(a, b, c, LinearEpilogue{c, bias, alpha, beta, int(epilogue)});
                  }};
  return k;
}

}  // namespace

PreparedLaunch gemm_sm80_prepare(const Device& device, const GemmProblem& p) {
  Launch launch = gemm_sm80::launch<bf16>(p.m, p.n, config);
  launch.stream = p.stream;
  launch.where = p.where;
  return sm80_kernel().prepare(device, launch, p.a, p.b, p.c, p.bias, p.alpha, p.beta, p.epilogue);
}

std::vector<CompiledKernel> gemm_sm80_compile(const Target& target, const GemmProblem& p) {
  return {sm80_kernel().compile(target, p.a, p.b, p.c, p.bias, p.alpha, p.beta, p.epilogue)};
}

}  // namespace cutejit::kernels::detail
