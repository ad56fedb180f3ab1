// kernels::gemm on sm_90a: gemm/sm90.hpp's wgmma GEMM, one kernel per (A's major, B's major, tile
// width), each traced with the plain store or the call's epilogue.
#include "cutejit/kernels/gemm/sm90.hpp"

#include <string>

#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels::detail {

namespace {

constexpr WgmmaMajor wgmma_major(Major m) { return m == Major::k ? WgmmaMajor::k : WgmmaMajor::mn; }

template <Major A, Major B, int TileN>
auto& sm90_kernel() {
  static Kernel k{std::string("cutejit_gemm_sm90_bf16_") + (A == Major::k ? "t" : "n") + (B == Major::k ? "n" : "t") + "_n" +
                      std::to_string(TileN),
                  [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Tensor<bf16> c_in, Tensor<bf16> bias,
                     Value<f32> alpha, Value<f32> beta, Int m, Int n, Int k, Constexpr<int> epilogue) {
                    constexpr gemm_sm90::Config config{.a_major = wgmma_major(A), .b_major = wgmma_major(B), .tile_n = TileN};
                    if (int(epilogue) == 0) gemm_sm90::kernel<bf16, config>(a, b, c, m, n, k);
                    else gemm_sm90::kernel<bf16, config>(a, b, c, m, n, k, LinearEpilogue{c_in, bias, alpha, beta, int(epilogue)});
                  }};
  return k;
}

/// f(kernel, config) for the problem's majors and the tile width `tile_n`.
template <class F>
auto with_kernel(const GemmProblem& p, int tile_n, F&& f) {
  auto width = [&]<Major A, Major B>() {
    return gemm_sm90::with_tile_n(tile_n, [&](auto w) {
      constexpr int TileN = decltype(w)::value;
      constexpr gemm_sm90::Config config{.a_major = wgmma_major(A), .b_major = wgmma_major(B), .tile_n = TileN};
      return f(sm90_kernel<A, B, TileN>(), config);
    });
  };
  if (p.a_major == Major::k) return p.b_major == Major::k ? width.template operator()<Major::k, Major::k>() : width.template operator()<Major::k, Major::mn>();
  return p.b_major == Major::k ? width.template operator()<Major::mn, Major::k>() : width.template operator()<Major::mn, Major::mn>();
}

/// The TMA boxes of A and B for a configuration (gemm_sm90::operand_box).
std::pair<std::array<uint32_t, 2>, std::array<uint32_t, 2>> boxes(const gemm_sm90::Config& config) {
  return {gemm_sm90::operand_box<bf16>(config.a_major, gemm_sm90::tile_m), gemm_sm90::operand_box<bf16>(config.b_major, config.b_box_rows())};
}

}  // namespace

PreparedLaunch gemm_sm90_prepare(const Device& device, const GemmProblem& p) {
  const int tile_n = gemm_sm90::choose_tile_n(device.multiprocessors(), p.m, p.n);
  return with_kernel(p, tile_n, [&](auto& kernel, const gemm_sm90::Config& config) {
    auto [ab, bb] = boxes(config);
    auto ta = make_tensor_map(rows_in_memory(p.a, p.a_major), {ab[0], ab[1]}, TmaSwizzle::bytes128);
    auto tb = make_tensor_map(rows_in_memory(p.b, p.b_major), {bb[0], bb[1]}, TmaSwizzle::bytes128);
    auto tc = make_tensor_map(p.c, {uint32_t(gemm_sm90::chunk_rows), uint32_t(gemm_sm90::chunk_cols)}, gemm_sm90::chunk_swizzle<bf16>);
    Launch launch = gemm_sm90::launch_config(device, p.m, p.n, config);
    launch.stream = p.stream;
    launch.where = p.where;
    return kernel.prepare(device, launch, ta, tb, tc, p.c, p.bias, p.alpha, p.beta, int32_t(p.m), int32_t(p.n), int32_t(p.k), p.epilogue);
  });
}

std::vector<CompiledKernel> gemm_sm90_compile(const Target& target, const GemmProblem& p) {
  std::vector<CompiledKernel> out;
  for (int tile_n : gemm_sm90::tile_widths)
    out.push_back(with_kernel(p, tile_n, [&](auto& kernel, const gemm_sm90::Config& config) {
      auto [ab, bb] = boxes(config);
      auto ta = TensorMap<bf16>::for_compile(2, {ab[0], ab[1]}, TmaSwizzle::bytes128);
      auto tb = TensorMap<bf16>::for_compile(2, {bb[0], bb[1]}, TmaSwizzle::bytes128);
      auto tc = TensorMap<bf16>::for_compile(2, {uint32_t(gemm_sm90::chunk_rows), uint32_t(gemm_sm90::chunk_cols)}, gemm_sm90::chunk_swizzle<bf16>);
      return kernel.compile(target, ta, tb, tc, p.c, p.bias, p.alpha, p.beta, int32_t(p.m), int32_t(p.n), int32_t(p.k), p.epilogue);
    }));
  return out;
}

}  // namespace cutejit::kernels::detail
