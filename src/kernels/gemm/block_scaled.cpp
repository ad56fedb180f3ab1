// kernels::gemm_block_scaled: the operands checked at the caller's line, then the architecture's
// kernel: gemm/sm100_block_scaled.hpp's tcgen05 GEMM on the sm_100 family (NVFP4, MXFP8), the
// block-scaled products of gemm/sm120.hpp's TMA-fed mma.sync GEMM on the sm_120 family (NVFP4,
// MXFP4, MXFP8). One kernel per format and family, alpha applied by the epilogue.
#include "cutejit/kernels/gemm_block_scaled.hpp"

#include <string>
#include <type_traits>

#include "cutejit/kernels/gemm/sm100_block_scaled.hpp"
#include "cutejit/kernels/gemm/sm120.hpp"
#include "cutejit/layout/blocked_scales.hpp"
#include "kernels/checks.hpp"
#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels {

namespace {

constexpr const char* format_name(BlockScaledFormat f) {
  return f == BlockScaledFormat::nvfp4 ? "nvfp4" : f == BlockScaledFormat::mxfp4 ? "mxfp4" : "mxfp8";
}

enum class Family { sm100, sm120 };

/// A call's checked operands: the shape, and the operands as the kernels take them.
struct Problem {
  BlockScaledFormat format;
  int64_t m, n, k;
  DeviceTensor<uint8_t> a, sfa, b, sfb;
  DeviceTensor<bf16> c;
  float alpha;
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

Problem make_problem(const char* op, BlockScaledFormat format, const DeviceTensor<uint8_t>& a, const DeviceTensor<uint8_t>& sfa,
                     const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb, const DeviceTensor<bf16>& c,
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
  detail::require(c.stride[0] % 8 == 0 && c.ptr % 16 == 0, op,
                  "c must start on 16 bytes and its rows too (row stride " + std::to_string(c.stride[0]) + ", not a multiple of 8)", where);
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
  return {format, m, n, k, a, sfa, b, sfb, c, options.alpha, options.stream, where};
}

// The sm_100 family: the scales by TMA in whole 512-byte chunks, C by TMA.
template <class Mainloop>
auto& sm100_kernel(BlockScaledFormat format) {
  using T = typename Mainloop::T;
  static Kernel k{std::string("cutejit_gemm_sm100_") + format_name(format) + "_tn",
                  [](TmaDescriptor<T> a, TmaDescriptor<T> b, TmaDescriptor<uint8_t> sfa, TmaDescriptor<uint8_t> sfb, TmaDescriptor<bf16> c,
                     Value<f32> alpha, Int m, Int n, Int k) {
                    gemm_sm100::kernel(Mainloop{a, b, sfa, sfb}, c, m, n, k, [&](const F32& x, const Int&, const Int&) { return alpha * x; });
                  }};
  return k;
}

template <class Mainloop>
PreparedLaunch sm100_prepare(const Device& device, const Problem& p) {
  gemm_sm100::check_shape<Mainloop>(p.m, p.n, p.k, p.where);
  using T = typename Mainloop::T;  // e4m3 for MXFP8, bytes of FP4 pairs for NVFP4
  const int64_t blocks = p.k / scale_block(p.format);
  auto ta = gemm_sm100::operand_tensor_map(detail::typed<T>(p.a)), tb = gemm_sm100::operand_tensor_map(detail::typed<T>(p.b));
  auto tsfa = gemm_sm100::scale_tensor_map(p.sfa, p.m, blocks, gemm_sm100::tile_m, Mainloop::half_chunks);
  auto tsfb = gemm_sm100::scale_tensor_map(p.sfb, p.n, blocks, Mainloop::tile_n, Mainloop::half_chunks);
  auto tc = gemm_sm100::c_tensor_map(p.c);
  Launch launch = gemm_sm100::launch_config<Mainloop>(device.multiprocessors(), p.m, p.n);
  launch.stream = p.stream;
  launch.where = p.where;
  return sm100_kernel<Mainloop>(p.format).prepare(device, launch, ta, tb, tsfa, tsfb, tc, p.alpha, int32_t(p.m), int32_t(p.n), int32_t(p.k));
}

template <class Mainloop>
CompiledKernel sm100_compile(const Target& target, const Problem& p) {
  gemm_sm100::check_shape<Mainloop>(p.m, p.n, p.k, p.where);
  using T = typename Mainloop::T;
  auto op = gemm_sm100::operand_tensor_map_for_compile<T>();
  return sm100_kernel<Mainloop>(p.format).compile(target, op, op, gemm_sm100::scale_tensor_map_for_compile(gemm_sm100::tile_m, Mainloop::half_chunks),
                                                  gemm_sm100::scale_tensor_map_for_compile(Mainloop::tile_n, Mainloop::half_chunks),
                                                  gemm_sm100::c_tensor_map_for_compile(), p.alpha, int32_t(p.m), int32_t(p.n), int32_t(p.k));
}

// The sm_120 family: A and B by TMA into the mma.sync ring, the scales read beside it.
template <class Op>
auto& sm120_kernel(BlockScaledFormat format) {
  static Kernel k{std::string("cutejit_gemm_sm120_") + format_name(format) + "_tn",
                  [](TmaDescriptor<uint8_t> a, TmaDescriptor<uint8_t> b, Tensor<uint8_t> sfa, Tensor<uint8_t> sfb, Tensor<bf16> c,
                     Value<f32> alpha, Int m, Int n, Int k) {
                    gemm_sm120::kernel<Op, bf16>(a, b, c, m, n, k, [&](const F32& x, const Int&, const Int&) { return alpha * x; },
                                                 gemm_sm120::block_scaled<Op>(sfa, sfb, m, n, k));
                  }};
  return k;
}

template <class Op>
PreparedLaunch sm120_prepare(const Device& device, const Problem& p) {
  gemm_sm120::check_block_scaled_shape<Op>(sm120_kernel<Op>(p.format).name(), p.m, p.n, p.k, p.where);
  Launch launch = gemm_sm120::launch(p.m, p.n, gemm_sm120::Resources<uint8_t>::shared_bytes);
  launch.stream = p.stream;
  launch.where = p.where;
  return sm120_kernel<Op>(p.format).prepare(device, launch, gemm_sm120::operand_map(p.a), gemm_sm120::operand_map(p.b), p.sfa, p.sfb, p.c, p.alpha, int32_t(p.m), int32_t(p.n),
                                            int32_t(p.k));
}

template <class Op>
CompiledKernel sm120_compile(const Target& target, const Problem& p) {
  gemm_sm120::check_block_scaled_shape<Op>(sm120_kernel<Op>(p.format).name(), p.m, p.n, p.k, p.where);
  auto op = gemm_sm120::operand_map_for_compile<uint8_t>();
  return sm120_kernel<Op>(p.format).compile(target, op, op, p.sfa, p.sfb, p.c, p.alpha, int32_t(p.m), int32_t(p.n), int32_t(p.k));
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

PreparedLaunch prepare(const Device& device, const Problem& p, const char* op) {
  const Family family = family_for(device.target(), p.format, op, p.where);
  return with_format(p.format, [&]<class Mainloop, class Op>() {
    if constexpr (!std::is_void_v<Mainloop>)
      if (family == Family::sm100) return sm100_prepare<Mainloop>(device, p);
    return sm120_prepare<Op>(device, p);
  });
}

}  // namespace

void gemm_block_scaled(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a, const DeviceTensor<uint8_t>& sfa,
                       const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb, const DeviceTensor<bf16>& c,
                       const BlockScaledOptions& options, std::source_location where) {
  Problem p = make_problem("gemm_block_scaled", format, a, sfa, b, sfb, c, options, where);
  if (p.m == 0 || p.n == 0) return;
  prepare(device, p, "gemm_block_scaled")();
}

PreparedLaunch gemm_block_scaled_prepare(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a,
                                         const DeviceTensor<uint8_t>& sfa, const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb,
                                         const DeviceTensor<bf16>& c, const BlockScaledOptions& options, std::source_location where) {
  Problem p = make_problem("gemm_block_scaled_prepare", format, a, sfa, b, sfb, c, options, where);
  detail::require(p.m > 0 && p.n > 0, "gemm_block_scaled_prepare", "c " + detail::shape_of(c) + " is empty: there is nothing to launch", where);
  return prepare(device, p, "gemm_block_scaled_prepare");
}

std::vector<CompiledKernel> gemm_block_scaled_compile(const Target& target, BlockScaledFormat format, const DeviceTensor<uint8_t>& a,
                                                      const DeviceTensor<uint8_t>& sfa, const DeviceTensor<uint8_t>& b,
                                                      const DeviceTensor<uint8_t>& sfb, const DeviceTensor<bf16>& c,
                                                      const BlockScaledOptions& options, std::source_location where) {
  const char* op = "gemm_block_scaled_compile";
  Problem p = make_problem(op, format, a, sfa, b, sfb, c, options, where);
  detail::require(p.m > 0 && p.n > 0, op, "c " + detail::shape_of(c) + " is empty: gemm_block_scaled launches nothing for it", where);
  const Family family = family_for(target, format, op, where);
  return with_format(format, [&]<class Mainloop, class Op>() {
    if constexpr (!std::is_void_v<Mainloop>)
      if (family == Family::sm100) return std::vector<CompiledKernel>{sm100_compile<Mainloop>(target, p)};
    return std::vector<CompiledKernel>{sm120_compile<Op>(target, p)};
  });
}

}  // namespace cutejit::kernels
