// kernels::gemm for a few rows of bf16 A (M up to 8, both operands K-major), on every target from
// sm_80: gemm/small_m.hpp's bandwidth-bound kernel, one per M and rows-per-warp, traced with the
// plain store or the call's epilogue, and with the call's fusions (rmsnorm_a, glu).
#include "cutejit/kernels/gemm/small_m.hpp"

#include <string>

#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels::detail {

namespace {

static_assert(gemm_small_m::Config::max_m == gemm_fusion_max_m);

/// The traced fusions of GemmProblem::fusion.
gemm_small_m::Fusion fusion_of(int code, const Tensor<bf16>& norm_weight, const F32& eps) {
  gemm_small_m::Fusion f;
  if (code & fusion_norm) f.norm = gemm_small_m::Fusion::RowNorm{norm_weight, eps};
  f.gated = (code & fusion_glu) != 0;
  if (const auto act = Activation(code >> fusion_activation_shift); f.gated && act != Activation::none)
    f.gate = [act](const F32& x) { return activate(act, x); };
  return f;
}

template <int M, int R>
auto& small_m_kernel() {
  static Kernel k{"cutejit_gemm_small_m_bf16_m" + std::to_string(M) + "_r" + std::to_string(R),
                  [](Tensor<bf16> a, Tensor<bf16> b, Tensor<bf16> c, Tensor<bf16> bias, Value<f32> alpha, Value<f32> beta,
                     Constexpr<int> epilogue, Tensor<bf16> norm_weight, Value<f32> eps, Constexpr<int> fusion) {
                    constexpr gemm_small_m::Config config{.m = M, .rows = R};
                    const gemm_small_m::Fusion fused = fusion_of(int(fusion), norm_weight, eps);
                    if (int(epilogue) == 0) gemm_small_m::kernel<config>(a, b, c, Identity{}, fused);
                    else gemm_small_m::kernel<config>(a, b, c, LinearEpilogue<bf16>{c, bias, alpha, beta, int(epilogue)}, fused);
                  }};
  return k;
}

/// f(kernel, config) for M = p.m and `rows` rows of B a warp.
template <class F>
auto with_kernel(const GemmProblem& p, int rows, F&& f) {
  auto of_m = [&]<int R>() {
    switch (p.m) {
      case 1: return f(small_m_kernel<1, R>(), gemm_small_m::Config{.m = 1, .rows = R});
      case 2: return f(small_m_kernel<2, R>(), gemm_small_m::Config{.m = 2, .rows = R});
      case 3: return f(small_m_kernel<3, R>(), gemm_small_m::Config{.m = 3, .rows = R});
      case 4: return f(small_m_kernel<4, R>(), gemm_small_m::Config{.m = 4, .rows = R});
      case 5: return f(small_m_kernel<5, R>(), gemm_small_m::Config{.m = 5, .rows = R});
      case 6: return f(small_m_kernel<6, R>(), gemm_small_m::Config{.m = 6, .rows = R});
      case 7: return f(small_m_kernel<7, R>(), gemm_small_m::Config{.m = 7, .rows = R});
      default: return f(small_m_kernel<8, R>(), gemm_small_m::Config{.m = 8, .rows = R});
    }
  };
  return rows == 1 ? of_m.template operator()<1>() : of_m.template operator()<2>();
}

/// Two rows of B a warp, unless that leaves fewer than two CTAs a multiprocessor; with glu
/// always two, a row of W and one of V for one column of C (the CTAs of a plain GEMM over B).
int rows_for(const GemmProblem& p, int multiprocessors) {
  if (p.fusion & fusion_glu) return 2;
  return p.n / (gemm_small_m::Config::warps * 2) >= 2 * multiprocessors ? 2 : 1;
}

}  // namespace

bool gemm_small_m_fits(const GemmProblem& p) {
  return p.ab == DType::bf16 && p.m >= 1 && p.m <= gemm_small_m::Config::max_m && p.a_major == Major::k && p.b_major == Major::k &&
         p.k % gemm_small_m::Config::vec == 0;
}

PreparedLaunch gemm_small_m_prepare(const Device& device, const GemmProblem& p) {
  return with_kernel(p, rows_for(p, device.multiprocessors()), [&](auto& kernel, const gemm_small_m::Config& config) {
    Launch launch = gemm_small_m::launch(p.n, config, (p.fusion & fusion_glu) != 0);
    launch.stream = p.stream;
    launch.where = p.where;
    return kernel.prepare(device, launch, typed<bf16>(p.a), typed<bf16>(p.b), typed<bf16>(p.c), typed<bf16>(p.bias), p.alpha, p.beta, p.epilogue, p.norm_weight, p.eps, p.fusion);
  });
}

std::vector<CompiledKernel> gemm_small_m_compile(const Target& target, const GemmProblem& p) {
  std::vector<CompiledKernel> out;
  // Each width rows_for may pick, as that depends on the GPU's multiprocessors.
  for (int rows : {1, 2}) {
    if (rows == 1 && (p.fusion & fusion_glu)) continue;
    out.push_back(with_kernel(p, rows, [&](auto& kernel, const gemm_small_m::Config&) {
      return kernel.compile(target, typed<bf16>(p.a), typed<bf16>(p.b), typed<bf16>(p.c), typed<bf16>(p.bias), p.alpha, p.beta, p.epilogue, p.norm_weight, p.eps, p.fusion);
    }));
  }
  return out;
}

}  // namespace cutejit::kernels::detail
