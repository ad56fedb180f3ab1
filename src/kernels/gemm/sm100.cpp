// kernels::gemm on the sm_100 family: gemm/sm100.hpp's persistent tcgen05 GEMM (one CTA per
// tile, 128 x 256 tiles), A and B K-major, one kernel per element types, traced with the plain
// store or the call's epilogue.
#include "cutejit/kernels/gemm/sm100.hpp"

#include <string>

#include "kernels/element_names.hpp"
#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels::detail {

namespace {

template <class TA, class TC>
auto& sm100_kernel() {
  using Mainloop = gemm_sm100::Dense<TA>;
  static Kernel k{std::string("cutejit_gemm_sm100_") + element_name<TA>() + "_tn" + output_suffix<TA, TC>(),
                  [](TmaDescriptor<TA> a, TmaDescriptor<TA> b, TmaDescriptor<TC> c, Tensor<TC> c_in, Tensor<TC> bias, Tensor<f32> scale_a,
                     Tensor<f32> scale_b, Value<f32> alpha, Value<f32> beta, Int m, Int n, Int k, Constexpr<int> epilogue) {
                    if (int(epilogue) == 0) gemm_sm100::kernel(Mainloop{a, b}, c, m, n, k);
                    else gemm_sm100::kernel(Mainloop{a, b}, c, m, n, k, LinearEpilogue<TC>{c_in, bias, scale_a, scale_b, alpha, beta, int(epilogue)});
                  }};
  return k;
}

}  // namespace

PreparedLaunch gemm_sm100_prepare(const Device& device, const GemmProblem& p) {
  return with_elements(p, [&]<class TA, class TC>() {
    using Mainloop = gemm_sm100::Dense<TA>;
    auto ta = make_tensor_map(typed<TA>(p.a), {uint32_t(Mainloop::a_box_rows), uint32_t(Mainloop::tile_k)}, TmaSwizzle::bytes128);
    auto tb = make_tensor_map(typed<TA>(p.b), {uint32_t(Mainloop::b_box_rows), uint32_t(Mainloop::tile_k)}, TmaSwizzle::bytes128);
    auto tc = gemm_sm100::c_tensor_map(typed<TC>(p.c));
    Launch launch = gemm_sm100::launch_config<Mainloop>(device.multiprocessors(), p.m, p.n);
    launch.stream = p.stream;
    launch.where = p.where;
    return sm100_kernel<TA, TC>().prepare(device, launch, ta, tb, tc, typed<TC>(p.c), typed<TC>(p.bias), p.scale_a, p.scale_b, p.alpha,
                                          p.beta, int32_t(p.m), int32_t(p.n), int32_t(p.k), p.epilogue);
  });
}

std::vector<CompiledKernel> gemm_sm100_compile(const Target& target, const GemmProblem& p) {
  return with_elements(p, [&]<class TA, class TC>() {
    auto [ta, tb] = gemm_sm100::tensor_maps_for_compile<gemm_sm100::Dense<TA>>();
    auto tc = gemm_sm100::c_tensor_map_for_compile<TC>();
    return std::vector<CompiledKernel>{sm100_kernel<TA, TC>().compile(target, ta, tb, tc, typed<TC>(p.c), typed<TC>(p.bias), p.scale_a,
                                                                      p.scale_b, p.alpha, p.beta, int32_t(p.m), int32_t(p.n), int32_t(p.k),
                                                                      p.epilogue)};
  });
}

}  // namespace cutejit::kernels::detail
