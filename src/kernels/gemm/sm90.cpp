// kernels::gemm on sm_90a: gemm/sm90.hpp's wgmma GEMM, one kernel per (element types, A's major,
// B's major, tile width), each traced with the plain store or the call's epilogue.
#include "cutejit/kernels/gemm/sm90.hpp"

#include <string>

#include "kernels/element_names.hpp"
#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels::detail {

namespace {

constexpr WgmmaMajor wgmma_major(Major m) { return m == Major::k ? WgmmaMajor::k : WgmmaMajor::mn; }

template <class TA, class TC, Major A, Major B, int TileN>
constexpr gemm_sm90::Config config_of{.a_major = wgmma_major(A), .b_major = wgmma_major(B), .tile_n = TileN, .out = dtype_of<TC>::value};

template <class TA, class TC, Major A, Major B, int TileN>
auto& sm90_kernel() {
  static Kernel k{std::string("cutejit_gemm_sm90_") + element_name<TA>() + "_" + (A == Major::k ? "t" : "n") + (B == Major::k ? "n" : "t") +
                      "_n" + std::to_string(TileN),
                  [](TmaDescriptor<TA> a, TmaDescriptor<TA> b, TmaDescriptor<TC> c, Tensor<TC> c_in, Tensor<TC> bias, Value<f32> alpha,
                     Value<f32> beta, Int m, Int n, Int k, Constexpr<int> epilogue) {
                    constexpr gemm_sm90::Config config = config_of<TA, TC, A, B, TileN>;
                    if (int(epilogue) == 0) gemm_sm90::kernel<TA, config>(a, b, c, m, n, k);
                    else gemm_sm90::kernel<TA, config>(a, b, c, m, n, k, LinearEpilogue<TC>{c_in, bias, alpha, beta, int(epilogue)});
                  }};
  return k;
}

/// f.template operator()<TA, TC>(kernel, config) for the problem's element types and majors and
/// the tile width `tile_n`. FP8 operands are K-major (make_problem), so no MN-major FP8 kernel
/// is instantiated.
template <class F>
auto with_kernel(const GemmProblem& p, int tile_n, F&& f) {
  return with_elements(p, [&]<class TA, class TC>() {
    auto width = [&]<Major A, Major B>() {
      return gemm_sm90::with_tile_n(tile_n, [&](auto w) {
        constexpr int TileN = decltype(w)::value;
        return f.template operator()<TA, TC>(sm90_kernel<TA, TC, A, B, TileN>(), config_of<TA, TC, A, B, TileN>);
      });
    };
    if constexpr (sizeof(TA) == 1) return width.template operator()<Major::k, Major::k>();
    else if (p.a_major == Major::k)
      return p.b_major == Major::k ? width.template operator()<Major::k, Major::k>() : width.template operator()<Major::k, Major::mn>();
    else return p.b_major == Major::k ? width.template operator()<Major::mn, Major::k>() : width.template operator()<Major::mn, Major::mn>();
  });
}

/// The TMA boxes of A and B for a configuration (gemm_sm90::operand_box).
template <class TA>
std::pair<std::array<uint32_t, 2>, std::array<uint32_t, 2>> boxes(const gemm_sm90::Config& config) {
  return {gemm_sm90::operand_box<TA>(config.a_major, gemm_sm90::tile_m), gemm_sm90::operand_box<TA>(config.b_major, config.b_box_rows())};
}

}  // namespace

PreparedLaunch gemm_sm90_prepare(const Device& device, const GemmProblem& p) {
  const int tile_n = gemm_sm90::choose_tile_n(device.multiprocessors(), p.m, p.n);
  return with_kernel(p, tile_n, [&]<class TA, class TC>(auto& kernel, const gemm_sm90::Config& config) {
    auto [ab, bb] = boxes<TA>(config);
    auto ta = make_tensor_map(rows_in_memory<TA>(p.a, p.a_major), {ab[0], ab[1]}, TmaSwizzle::bytes128);
    auto tb = make_tensor_map(rows_in_memory<TA>(p.b, p.b_major), {bb[0], bb[1]}, TmaSwizzle::bytes128);
    auto tc = make_tensor_map(typed<TC>(p.c), {uint32_t(gemm_sm90::chunk_rows), uint32_t(gemm_sm90::chunk_cols)}, gemm_sm90::chunk_swizzle<TC>);
    Launch launch = gemm_sm90::launch_config(device, p.m, p.n, config);
    launch.stream = p.stream;
    launch.where = p.where;
    return kernel.prepare(device, launch, ta, tb, tc, typed<TC>(p.c), typed<TC>(p.bias), p.alpha, p.beta, int32_t(p.m), int32_t(p.n),
                          int32_t(p.k), p.epilogue);
  });
}

std::vector<CompiledKernel> gemm_sm90_compile(const Target& target, const GemmProblem& p) {
  std::vector<CompiledKernel> out;
  for (int tile_n : gemm_sm90::tile_widths)
    out.push_back(with_kernel(p, tile_n, [&]<class TA, class TC>(auto& kernel, const gemm_sm90::Config& config) {
      auto [ab, bb] = boxes<TA>(config);
      auto ta = TensorMap<TA>::for_compile(2, {ab[0], ab[1]}, TmaSwizzle::bytes128);
      auto tb = TensorMap<TA>::for_compile(2, {bb[0], bb[1]}, TmaSwizzle::bytes128);
      auto tc = TensorMap<TC>::for_compile(2, {uint32_t(gemm_sm90::chunk_rows), uint32_t(gemm_sm90::chunk_cols)}, gemm_sm90::chunk_swizzle<TC>);
      return kernel.compile(target, ta, tb, tc, typed<TC>(p.c), typed<TC>(p.bias), p.alpha, p.beta, int32_t(p.m), int32_t(p.n),
                            int32_t(p.k), p.epilogue);
    }));
  return out;
}

}  // namespace cutejit::kernels::detail
