// kernels::gemm_block_scaled: the operands checked at the caller's line, then the architecture's
// kernel: gemm/sm100_block_scaled.hpp's tcgen05 GEMM on the sm_100 family (NVFP4, MXFP8), the
// block-scaled products of gemm/sm120.hpp's TMA-fed mma.sync GEMM on the sm_120 family (NVFP4,
// MXFP4, MXFP8). One kernel per format, family and C type, traced with the plain store or with
// kernels::gemm's epilogue (gemm_problem.hpp's LinearEpilogue: alpha, beta, bias, activation, hook).
#include "cutejit/kernels/gemm_block_scaled.hpp"

#include <string>
#include <type_traits>

#include "cutejit/kernels/gemm/sm100_block_scaled.hpp"
#include "cutejit/kernels/gemm/sm120.hpp"
#include "cutejit/layout/blocked_scales.hpp"
#include "kernels/checks.hpp"
#include "kernels/element_names.hpp"
#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels {

namespace {

constexpr const char* format_name(BlockScaledFormat f) {
  return f == BlockScaledFormat::nvfp4 ? "nvfp4" : f == BlockScaledFormat::mxfp4 ? "mxfp4" : "mxfp8";
}

enum class Family { sm100, sm120 };

/// A call's checked operands: the shape, and the operands and epilogue as the kernels take them.
struct Problem {
  BlockScaledFormat format;
  int64_t m, n, k;
  DeviceTensor<uint8_t> a, sfa, b, sfb;
  /// C (of the element type the call's overload took), and the bias or (where there is none) C's
  /// first row, never read.
  detail::AnyTensor c, bias;
  /// What LinearEpilogue takes for GemmScales, which this operator has none of: C's first
  /// value as an f32, never read.
  DeviceTensor<f32> no_scale;
  float alpha, beta;
  int epilogue;  ///< detail::epilogue_code of the options
  std::shared_ptr<const GemmHook> hook;  ///< alive while the call traces
  StreamHandle stream;
  std::source_location where;
};

Family family_for(const Target& t, BlockScaledFormat format, const char* op, const std::source_location& where) {
  const bool arch_specific = t.variant != Target::Variant::portable;
  if ((t.sm == 100 || t.sm == 103) && arch_specific) {
    detail::require(format != BlockScaledFormat::mxfp4, op,
                    "no mxfp4 kernel for " + t.name() + ": its block-scaled GEMM takes nvfp4 and mxfp8 (mxfp4 runs on sm_120a)", where);
    return Family::sm100;
  }
  if ((t.sm == 120 || t.sm == 121) && arch_specific) return Family::sm120;
  throw Error(std::string("error: ") + op + ": no block-scaled kernel for " + t.name() +
                  ": the block-scaled tensor cores are sm_100a and sm_103a's (nvfp4, mxfp8) and sm_120a and sm_121a's (nvfp4, "
                  "mxfp4, mxfp8); on other targets dequantize and run kernels::gemm",
              where);
}

/// The epilogue's terms as kernels::gemm takes them: one set of checks, codes and traced terms.
GemmOptions epilogue_options(const BlockScaledOptions& o) {
  return {.alpha = o.alpha, .beta = o.beta, .bias = o.bias, .activation = o.activation, .hook = o.hook};
}

template <class TC>
Problem make_problem(const char* op, BlockScaledFormat format, const DeviceTensor<uint8_t>& a, const DeviceTensor<uint8_t>& sfa,
                     const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb, const DeviceTensor<TC>& c,
                     const BlockScaledOptions& options, const std::source_location& where) {
  detail::require(format == BlockScaledFormat::nvfp4 || format == BlockScaledFormat::mxfp4 || format == BlockScaledFormat::mxfp8, op,
                  "the format is nvfp4, mxfp4 or mxfp8, not " + std::to_string(int(format)), where);
  detail::require_rows(a, "a", op, 16, where);
  detail::require_rows(b, "b", op, 16, where);
  detail::require(a.shape[1] == b.shape[1], op,
                  "a " + detail::shape_of(a) + " and b " + detail::shape_of(b) + " must have the same K (their second extents, in bytes)", where);
  detail::require(c.rank == 2 && c.shape[0] == a.shape[0] && c.shape[1] == b.shape[0] && c.stride[1] == 1, op,
                  "c is " + detail::shape_of(c) + "; it takes (" + std::to_string(a.shape[0]) + ", " + std::to_string(b.shape[0]) +
                      ") with contiguous rows, the rows of a by the rows of b",
                  where);
  constexpr int64_t c_granule = 16 / int64_t(sizeof(TC));
  detail::require(c.stride[0] % c_granule == 0 && c.ptr % 16 == 0, op,
                  "c must start on 16 bytes and its rows too (row stride " + std::to_string(c.stride[0]) + ", not a multiple of " +
                      std::to_string(c_granule) + ")",
                  where);
  const bool fp4 = format != BlockScaledFormat::mxfp8;
  const int64_t m = a.shape[0], n = b.shape[0], k = a.shape[1] * (fp4 ? 2 : 1), blocks = k / scale_block(format);
  detail::require(k % scale_block(format) == 0, op,
                  "K (" + std::to_string(k) + ") must be whole " + format_name(format) + " scale blocks of " +
                      std::to_string(scale_block(format)) + " elements",
                  where);
  auto scales = [&](const DeviceTensor<uint8_t>& s, const char* name, int64_t rows) {
    const int64_t bytes = blocked_scale_bytes(rows, blocks);
    detail::require(s.rank == 1 && s.stride[0] == 1 && s.shape[0] >= bytes && s.ptr % 16 == 0, op,
                    std::string(name) + " is " + detail::shape_of(s) + "; it takes the " + std::to_string(rows) + " x " +
                        std::to_string(blocks) + " scales in the 128x4 blocked layout, " + std::to_string(bytes) +
                        " contiguous bytes on 16 (blocked_scale_bytes; kernels/gemm_block_scaled.hpp)",
                    where);
  };
  scales(sfa, "sfa", m);
  scales(sfb, "sfb", n);
  const GemmOptions epilogue = epilogue_options(options);
  return {format, m, n, k, a, sfa, b, sfb, detail::typed<std::byte>(c), detail::checked_bias(op, dtype_of<TC>::value, n, c.ptr, epilogue, where),
          DeviceTensor<f32>::make(c.ptr, std::array<int64_t, 1>{1}, std::array<int64_t, 1>{1}, where), options.alpha, options.beta,
          detail::epilogue_code(epilogue), options.hook, options.stream, where};
}

/// A kernel's name: the format's GEMM for the family, "_c" and C's type where C is not bf16.
template <class TC>
std::string kernel_name(const char* family, BlockScaledFormat format) {
  return std::string("cutejit_gemm_") + family + "_" + format_name(format) + "_tn" + detail::output_suffix<bf16, TC>();
}

// The sm_100 family: the scales by TMA in whole 512-byte chunks, C by TMA (and read, for beta,
// through c_in).
template <class Mainloop, class TC>
auto& sm100_kernel(BlockScaledFormat format) {
  using T = typename Mainloop::T;
  static Kernel k{kernel_name<TC>("sm100", format),
                  [](TmaDescriptor<T> a, TmaDescriptor<T> b, TmaDescriptor<uint8_t> sfa, TmaDescriptor<uint8_t> sfb, TmaDescriptor<TC> c,
                     Tensor<TC> c_in, Tensor<TC> bias, Tensor<f32> no_scale, Value<f32> alpha, Value<f32> beta, Int m, Int n, Int k,
                     Constexpr<int> epilogue) {
                    const Mainloop mainloop{a, b, sfa, sfb};
                    if (int(epilogue) == 0) gemm_sm100::kernel(mainloop, c, m, n, k);
                    else gemm_sm100::kernel(mainloop, c, m, n, k,
                                            detail::LinearEpilogue<TC>{c_in, bias, no_scale, no_scale, alpha, beta, int(epilogue)});
                  }};
  return k;
}

template <class Mainloop, class TC>
PreparedLaunch sm100_prepare(const Device& device, const Problem& p) {
  gemm_sm100::check_shape<Mainloop>(p.m, p.n, p.k, p.where);
  using T = typename Mainloop::T;  // e4m3 for MXFP8, bytes of FP4 pairs for NVFP4
  const int64_t blocks = p.k / scale_block(p.format);
  auto ta = gemm_sm100::operand_tensor_map(detail::typed<T>(p.a)), tb = gemm_sm100::operand_tensor_map(detail::typed<T>(p.b));
  auto tsfa = gemm_sm100::scale_tensor_map(p.sfa, p.m, blocks, gemm_sm100::tile_m, Mainloop::half_chunks);
  auto tsfb = gemm_sm100::scale_tensor_map(p.sfb, p.n, blocks, Mainloop::tile_n, Mainloop::half_chunks);
  auto tc = gemm_sm100::c_tensor_map(detail::typed<TC>(p.c));
  Launch launch = gemm_sm100::launch_config<Mainloop>(device.multiprocessors(), p.m, p.n);
  launch.stream = p.stream;
  launch.where = p.where;
  return sm100_kernel<Mainloop, TC>(p.format).prepare(device, launch, ta, tb, tsfa, tsfb, tc, detail::typed<TC>(p.c), detail::typed<TC>(p.bias),
                                                      p.no_scale, p.alpha, p.beta, int32_t(p.m), int32_t(p.n), int32_t(p.k), p.epilogue);
}

template <class Mainloop, class TC>
CompiledKernel sm100_compile(const Target& target, const Problem& p) {
  gemm_sm100::check_shape<Mainloop>(p.m, p.n, p.k, p.where);
  using T = typename Mainloop::T;
  auto op = gemm_sm100::operand_tensor_map_for_compile<T>();
  return sm100_kernel<Mainloop, TC>(p.format).compile(
      target, op, op, gemm_sm100::scale_tensor_map_for_compile(gemm_sm100::tile_m, Mainloop::half_chunks),
      gemm_sm100::scale_tensor_map_for_compile(Mainloop::tile_n, Mainloop::half_chunks), gemm_sm100::c_tensor_map_for_compile<TC>(),
      detail::typed<TC>(p.c), detail::typed<TC>(p.bias), p.no_scale, p.alpha, p.beta, int32_t(p.m), int32_t(p.n), int32_t(p.k), p.epilogue);
}

// The sm_120 family: A and B by TMA into the mma.sync ring, the scales read beside it.
template <class Op, class TC>
auto& sm120_kernel(BlockScaledFormat format) {
  static Kernel k{kernel_name<TC>("sm120", format),
                  [](TmaDescriptor<uint8_t> a, TmaDescriptor<uint8_t> b, Tensor<uint8_t> sfa, Tensor<uint8_t> sfb, Tensor<TC> c,
                     Tensor<TC> bias, Tensor<f32> no_scale, Value<f32> alpha, Value<f32> beta, Int m, Int n, Int k, Constexpr<int> epilogue) {
                    const auto products = gemm_sm120::block_scaled<Op>(sfa, sfb, m, n, k);
                    if (int(epilogue) == 0) gemm_sm120::kernel<Op, TC>(a, b, c, m, n, k, Identity{}, products);
                    else gemm_sm120::kernel<Op, TC>(a, b, c, m, n, k,
                                                    detail::LinearEpilogue<TC>{c, bias, no_scale, no_scale, alpha, beta, int(epilogue)},
                                                    products);
                  }};
  return k;
}

template <class Op, class TC>
PreparedLaunch sm120_prepare(const Device& device, const Problem& p) {
  gemm_sm120::check_block_scaled_shape<Op>(sm120_kernel<Op, TC>(p.format).name(), p.m, p.n, p.k, p.where);
  Launch launch = gemm_sm120::launch(p.m, p.n, gemm_sm120::Resources<uint8_t>::shared_bytes);
  launch.stream = p.stream;
  launch.where = p.where;
  return sm120_kernel<Op, TC>(p.format).prepare(device, launch, gemm_sm120::operand_map(p.a), gemm_sm120::operand_map(p.b), p.sfa, p.sfb,
                                                detail::typed<TC>(p.c), detail::typed<TC>(p.bias), p.no_scale, p.alpha, p.beta,
                                                int32_t(p.m), int32_t(p.n), int32_t(p.k), p.epilogue);
}

template <class Op, class TC>
CompiledKernel sm120_compile(const Target& target, const Problem& p) {
  gemm_sm120::check_block_scaled_shape<Op>(sm120_kernel<Op, TC>(p.format).name(), p.m, p.n, p.k, p.where);
  auto op = gemm_sm120::operand_map_for_compile<uint8_t>();
  return sm120_kernel<Op, TC>(p.format).compile(target, op, op, p.sfa, p.sfb, detail::typed<TC>(p.c), detail::typed<TC>(p.bias), p.no_scale,
                                                p.alpha, p.beta, int32_t(p.m), int32_t(p.n), int32_t(p.k), p.epilogue);
}

/// Calls `f.template operator()<kernel of the sm_100 family, kernel of the sm_120 family>()`
/// with the types of `format`'s main loop and atom.
template <class F>
auto with_format(BlockScaledFormat format, F&& f) {
  switch (format) {
    case BlockScaledFormat::nvfp4: return f.template operator()<gemm_sm100::Nvfp4, SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>();
    case BlockScaledFormat::mxfp4: return f.template operator()<void, SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN>();
    case BlockScaledFormat::mxfp8: break;
  }
  return f.template operator()<gemm_sm100::Mxfp8, SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>();
}

/// `on_sm100.template operator()<Mainloop>()` or `on_sm120.template operator()<Op>()`: the
/// kernel of the family `target` belongs to, for the problem's format (family_for refuses the
/// rest at the caller's line).
template <class Sm100, class Sm120>
auto for_family(const Target& target, const Problem& p, const char* op, Sm100&& on_sm100, Sm120&& on_sm120) {
  const Family family = family_for(target, p.format, op, p.where);
  return with_format(p.format, [&]<class Mainloop, class Op>() {
    if constexpr (!std::is_void_v<Mainloop>)
      if (family == Family::sm100) return on_sm100.template operator()<Mainloop>();
    return on_sm120.template operator()<Op>();
  });
}

template <class TC>
PreparedLaunch prepare(const Device& device, const Problem& p, const char* op) {
  detail::HookScope traced_with(p.hook.get());
  return for_family(
      device.target(), p, op, [&]<class Mainloop>() { return sm100_prepare<Mainloop, TC>(device, p); },
      [&]<class Op>() { return sm120_prepare<Op, TC>(device, p); });
}

template <class TC>
std::vector<CompiledKernel> compile(const Target& target, const Problem& p, const char* op) {
  detail::require(p.m > 0 && p.n > 0, op, "c " + detail::shape_of(p.c) + " is empty: gemm_block_scaled launches nothing for it", p.where);
  detail::HookScope traced_with(p.hook.get());
  return {for_family(
      target, p, op, [&]<class Mainloop>() { return sm100_compile<Mainloop, TC>(target, p); },
      [&]<class Op>() { return sm120_compile<Op, TC>(target, p); })};
}

template <class TC>
void run(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a, const DeviceTensor<uint8_t>& sfa,
         const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb, const DeviceTensor<TC>& c, const BlockScaledOptions& options,
         const std::source_location& where) {
  Problem p = make_problem("gemm_block_scaled", format, a, sfa, b, sfb, c, options, where);
  if (p.m == 0 || p.n == 0) return;
  prepare<TC>(device, p, "gemm_block_scaled")();
}

template <class TC>
PreparedLaunch prepare_call(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a, const DeviceTensor<uint8_t>& sfa,
                            const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb, const DeviceTensor<TC>& c,
                            const BlockScaledOptions& options, const std::source_location& where) {
  const char* op = "gemm_block_scaled_prepare";
  Problem p = make_problem(op, format, a, sfa, b, sfb, c, options, where);
  detail::require(p.m > 0 && p.n > 0, op, "c " + detail::shape_of(c) + " is empty: there is nothing to launch", where);
  return prepare<TC>(device, p, op);
}

}  // namespace

#define CUTEJIT_BLOCK_SCALED_FOR(TC)                                                                                                      \
  void gemm_block_scaled(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a, const DeviceTensor<uint8_t>& sfa, \
                         const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb, const DeviceTensor<TC>& c,                     \
                         const BlockScaledOptions& options, std::source_location where) {                                                 \
    run(device, format, a, sfa, b, sfb, c, options, where);                                                                               \
  }                                                                                                                                       \
  PreparedLaunch gemm_block_scaled_prepare(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a,                 \
                                           const DeviceTensor<uint8_t>& sfa, const DeviceTensor<uint8_t>& b,                              \
                                           const DeviceTensor<uint8_t>& sfb, const DeviceTensor<TC>& c, const BlockScaledOptions& options, \
                                           std::source_location where) {                                                                  \
    return prepare_call(device, format, a, sfa, b, sfb, c, options, where);                                                               \
  }                                                                                                                                       \
  std::vector<CompiledKernel> gemm_block_scaled_compile(const Target& target, BlockScaledFormat format, const DeviceTensor<uint8_t>& a,    \
                                                        const DeviceTensor<uint8_t>& sfa, const DeviceTensor<uint8_t>& b,                 \
                                                        const DeviceTensor<uint8_t>& sfb, const DeviceTensor<TC>& c,                      \
                                                        const BlockScaledOptions& options, std::source_location where) {                  \
    return compile<TC>(target, make_problem("gemm_block_scaled_compile", format, a, sfa, b, sfb, c, options, where),                      \
                       "gemm_block_scaled_compile");                                                                                      \
  }

CUTEJIT_BLOCK_SCALED_FOR(bf16)
CUTEJIT_BLOCK_SCALED_FOR(f16)
CUTEJIT_BLOCK_SCALED_FOR(f8e4m3)
#undef CUTEJIT_BLOCK_SCALED_FOR

}  // namespace cutejit::kernels
