// kernels::gemm on sm_90a: gemm/sm90.hpp's wgmma GEMM, one kernel per (element types, A's major,
// B's major, tile width), each traced with the plain store or the call's epilogue; and for glu
// (bf16, K-major, tiles 256 or 128 wide) the gated kernel, traced with the gate's activation.
#include "cutejit/kernels/gemm/sm90.hpp"

#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cutejit/jit/autotune.hpp"

#include "kernels/element_names.hpp"
#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels::detail {

namespace {

constexpr WgmmaMajor wgmma_major(Major m) { return m == Major::k ? WgmmaMajor::k : WgmmaMajor::mn; }

template <class TA, class TC, Major A, Major B, int TileN, bool Glu = false>
constexpr gemm_sm90::Config config_of{
    .a_major = wgmma_major(A), .b_major = wgmma_major(B), .tile_n = TileN, .out = dtype_of<TC>::value, .glu = Glu};

template <class TA, class TC, Major A, Major B, int TileN>
auto& sm90_kernel() {
  static Kernel k{std::string("cutejit_gemm_sm90_") + element_name<TA>() + "_" + (A == Major::k ? "t" : "n") + (B == Major::k ? "n" : "t") +
                      "_n" + std::to_string(TileN) + output_suffix<TA, TC>(),
                  [](TmaDescriptor<TA> a, TmaDescriptor<TA> b, TmaDescriptor<TC> c, Tensor<TC> c_in, Tensor<TC> bias, Tensor<f32> scale_a,
                     Tensor<f32> scale_b, Value<f32> alpha, Value<f32> beta, Int m, Int n, Int k, Constexpr<int> epilogue) {
                    constexpr gemm_sm90::Config config = config_of<TA, TC, A, B, TileN>;
                    if (int(epilogue) == 0) gemm_sm90::kernel<TA, config>(a, b, c, m, n, k);
                    else gemm_sm90::kernel<TA, config>(a, b, c, m, n, k, LinearEpilogue<TC>{c_in, bias, scale_a, scale_b, alpha, beta, int(epilogue)});
                  }};
  return k;
}

/// The gated kernel (GemmOptions::glu): `gate` is the Activation of W's product, and the linear
/// epilogue applies to act(w) * v.
template <int TileN>
auto& sm90_glu_kernel() {
  static Kernel k{"cutejit_gemm_sm90_bf16_tn_glu_n" + std::to_string(TileN),
                  [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Tensor<bf16> c_in, Tensor<bf16> bias,
                     Tensor<f32> scale_a, Tensor<f32> scale_b, Value<f32> alpha, Value<f32> beta, Int m, Int n, Int k, Constexpr<int> epilogue,
                     Constexpr<int> gate) {
                    constexpr gemm_sm90::Config config = config_of<bf16, bf16, Major::k, Major::k, TileN, true>;
                    gemm_sm90::kernel<bf16, config>(
                        a, b, c, m, n, k, GatedEpilogue<bf16>{Activation(int(gate)), {c_in, bias, scale_a, scale_b, alpha, beta, int(epilogue)}});
                  }};
  return k;
}

/// The glu kernels' widths: half a tile's columns are C's, at least one 64-column chunk.
int glu_tile_n(int tile_n) { return tile_n < 128 ? 128 : tile_n; }

/// f.template operator()<TA, TC, Glu>(kernel, config) for the problem's element types, majors
/// and fusion, and the tile width `tile_n`. FP8 operands are K-major and glu takes bf16 K-major
/// ones (make_problem, family_for), so no other kernel is instantiated.
template <class F>
auto with_kernel(const GemmProblem& p, int tile_n, F&& f) {
  return with_elements(p, [&]<class TA, class TC>() {
    if constexpr (std::is_same_v<TA, bf16>)
      if (p.fusion & fusion_glu)
        return glu_tile_n(tile_n) == 256
                   ? f.template operator()<TA, TC, true>(sm90_glu_kernel<256>(), config_of<TA, TC, Major::k, Major::k, 256, true>)
                   : f.template operator()<TA, TC, true>(sm90_glu_kernel<128>(), config_of<TA, TC, Major::k, Major::k, 128, true>);
    auto width = [&]<Major A, Major B>() {
      return gemm_sm90::with_tile_n(tile_n, [&](auto w) {
        constexpr int TileN = decltype(w)::value;
        return f.template operator()<TA, TC, false>(sm90_kernel<TA, TC, A, B, TileN>(), config_of<TA, TC, A, B, TileN>);
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

/// Calls `kernel.prepare` or `kernel.compile` (`call`) with the arguments every kernel takes
/// after its launch or target, and the gate's activation for the glu kernel.
template <bool Glu, class TC, class Call>
auto with_arguments(const GemmProblem& p, const TensorMap<TC>& tc, Call&& call) {
  if constexpr (Glu)
    return call(tc, typed<TC>(p.c), typed<TC>(p.bias), p.scale_a, p.scale_b, p.alpha, p.beta, int32_t(p.m), int32_t(p.n), int32_t(p.k),
                p.epilogue, p.fusion >> fusion_activation_shift);
  else
    return call(tc, typed<TC>(p.c), typed<TC>(p.bias), p.scale_a, p.scale_b, p.alpha, p.beta, int32_t(p.m), int32_t(p.n), int32_t(p.k),
                p.epilogue);
}

/// The launch of the kernel `tile_n` wide for the problem.
PreparedLaunch prepare_width(const Device& device, const GemmProblem& p, int tile_n) {
  return with_kernel(p, tile_n, [&]<class TA, class TC, bool Glu>(auto& kernel, const gemm_sm90::Config& config) {
    auto [ab, bb] = boxes<TA>(config);
    auto ta = make_tensor_map(rows_in_memory<TA>(p.a, p.a_major), {ab[0], ab[1]}, TmaSwizzle::bytes128);
    auto tb = make_tensor_map(rows_in_memory<TA>(p.b, p.b_major), {bb[0], bb[1]}, TmaSwizzle::bytes128);
    auto tc = gemm_sm90::output_map(typed<TC>(p.c));
    Launch launch = gemm_sm90::launch_config(device, p.m, p.n, config);
    launch.stream = p.stream;
    launch.where = p.where;
    return with_arguments<Glu>(p, tc, [&](const auto&... rest) { return kernel.prepare(device, launch, ta, tb, rest...); });
  });
}

/// GemmOptions::tune: the fastest tile width for the problem on this device, timed once on the
/// call's stream and remembered (autotune). The candidates write a scratch C of C's extent (and
/// read it, with beta: its values do not matter to the time), so the caller's C is written
/// once; it is made only when they run, so a call that a record answers allocates nothing and
/// waits for nothing (and may be captured into a graph).
int tuned_width(const Device& device, const GemmProblem& p) {
  const bool glu = p.fusion & fusion_glu;
  std::vector<int> widths = glu ? std::vector<int>{256, 128} : std::vector<int>(std::begin(gemm_sm90::tile_widths), std::end(gemm_sm90::tile_widths));
  std::once_flag made;
  std::optional<Buffer<uint8_t>> scratch;
  auto trial = [&] {  // on autotune's worker threads
    std::call_once(made, [&] { scratch = device.alloc<uint8_t>(size_t((p.m - 1) * p.c.stride[0] + p.n) * size_t(size_in_bytes(p.out))); });
    GemmProblem t = p;
    t.c.ptr = scratch->data();
    // The unread bias and scales are C's first row.
    if (!(p.epilogue & epilogue_bias)) t.bias.ptr = scratch->data();
    if (!(p.epilogue & epilogue_scale_a)) t.scale_a.ptr = t.scale_b.ptr = scratch->data();
    return t;
  };
  const TuneKey key{"kernels::gemm sm90 " + std::string(name(p.ab)) + " " + std::string(name(p.out)) + (p.a_major == Major::k ? " t" : " n") +
                        (p.b_major == Major::k ? "n" : "t") + (glu ? " glu" : ""),
                    {p.m, p.n, p.k, p.a.stride[0], p.a.stride[1], p.b.stride[0], p.b.stride[1], p.c.stride[0], p.epilogue, p.fusion}};
  TuneOptions options;
  options.bench.stream = p.stream;
  auto tuned = autotune(device, key, widths, [&](int w) { return prepare_width(device, trial(), w); }, options);
  if (!tuned.from_record) device.synchronize();  // the scratch C outlives every candidate's launch
  return tuned.config;
}

}  // namespace

PreparedLaunch gemm_sm90_prepare(const Device& device, const GemmProblem& p) {
  if (p.tune) return prepare_width(device, p, tuned_width(device, p));
  // With glu a tile's accumulators span twice its columns of C: B's rows choose the width.
  return prepare_width(device, p, gemm_sm90::choose_tile_n(device.multiprocessors(), p.m, p.fusion & fusion_glu ? 2 * p.n : p.n));
}

std::vector<CompiledKernel> gemm_sm90_compile(const Target& target, const GemmProblem& p) {
  std::vector<CompiledKernel> out;
  for (int tile_n : gemm_sm90::tile_widths) {
    if ((p.fusion & fusion_glu) && tile_n < 128) continue;  // glu_tile_n: the 128-wide kernel
    out.push_back(with_kernel(p, tile_n, [&]<class TA, class TC, bool Glu>(auto& kernel, const gemm_sm90::Config& config) {
      auto [ab, bb] = boxes<TA>(config);
      auto ta = TensorMap<TA>::for_compile(2, {ab[0], ab[1]}, TmaSwizzle::bytes128);
      auto tb = TensorMap<TA>::for_compile(2, {bb[0], bb[1]}, TmaSwizzle::bytes128);
      auto tc = gemm_sm90::output_map_for_compile<TC>();
      return with_arguments<Glu>(p, tc, [&](const auto&... rest) { return kernel.compile(target, ta, tb, rest...); });
    }));
  }
  return out;
}

}  // namespace cutejit::kernels::detail
