// kernels::gemm on the sm_100 family: gemm/sm100.hpp's persistent tcgen05 GEMM (one CTA per
// tile, 128 x 256 tiles), A and B K-major, traced with the plain store or the call's epilogue.
#include "cutejit/kernels/gemm/sm100.hpp"

#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels::detail {

namespace {

using Mainloop = gemm_sm100::Dense<bf16>;

auto& sm100_kernel() {
  static Kernel k{"cutejit_gemm_sm100_bf16_tn", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Tensor<bf16> c_in,
                                                  Tensor<bf16> bias, Value<f32> alpha, Value<f32> beta, Int m, Int n, Int k,
                                                  Constexpr<int> epilogue) {
                    if (int(epilogue) == 0) gemm_sm100::kernel(Mainloop{a, b}, c, m, n, k);
                    else gemm_sm100::kernel(Mainloop{a, b}, c, m, n, k, LinearEpilogue{c_in, bias, alpha, beta, int(epilogue)});
                  }};
  return k;
}

}  // namespace

PreparedLaunch gemm_sm100_prepare(const Device& device, const GemmProblem& p) {
  auto ta = make_tensor_map(p.a, {uint32_t(Mainloop::a_box_rows), uint32_t(Mainloop::tile_k)}, TmaSwizzle::bytes128);
  auto tb = make_tensor_map(p.b, {uint32_t(Mainloop::b_box_rows), uint32_t(Mainloop::tile_k)}, TmaSwizzle::bytes128);
  auto tc = make_tensor_map(p.c, {32u, uint32_t(gemm_sm100::chunk_cols)}, TmaSwizzle::bytes64);
  Launch launch = gemm_sm100::launch_config<Mainloop>(device.multiprocessors(), p.m, p.n);
  launch.stream = p.stream;
  launch.where = p.where;
  return sm100_kernel().prepare(device, launch, ta, tb, tc, p.c, p.bias, p.alpha, p.beta, int32_t(p.m), int32_t(p.n), int32_t(p.k),
                                p.epilogue);
}

std::vector<CompiledKernel> gemm_sm100_compile(const Target& target, const GemmProblem& p) {
  auto [ta, tb] = gemm_sm100::tensor_maps_for_compile<Mainloop>();
  return {sm100_kernel().compile(target, ta, tb, gemm_sm100::c_tensor_map_for_compile(), p.c, p.bias, p.alpha, p.beta, int32_t(p.m),
                                 int32_t(p.n), int32_t(p.k), p.epilogue)};
}

}  // namespace cutejit::kernels::detail
