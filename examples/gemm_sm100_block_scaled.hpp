// Named kernels of cutejit/kernels/gemm/sm100_block_scaled.hpp, their launches and their checks.
#pragma once

#include "cutejit/kernels/gemm/sm100_block_scaled.hpp"

#include "gemm_sm100.hpp"

namespace examples {
using namespace cutejit;

/// C (M x N, bf16) = (A SFA)(B SFB)^T, A (M x K) and B (N x K) FP4 pairs (K / 2 bytes per
/// row), SFA (M x K / 16) and SFB (N x K / 16) UE4M3 bytes in the 128x4 blocked layout.
inline Kernel gemm_nvfp4_sm100{"gemm_nvfp4_sm100", [](TmaDescriptor<uint8_t> a, TmaDescriptor<uint8_t> b, TmaDescriptor<uint8_t> sfa,
                                                      TmaDescriptor<uint8_t> sfb, TmaDescriptor<bf16> c, Int m, Int n, Int k) {
  gemm_sm100::kernel(gemm_sm100::Nvfp4{a, b, sfa, sfb}, c, m, n, k);
}};
/// gemm_nvfp4_sm100 with its tiles handed out by cluster launch control, one CTA per tile
/// (launch_config<Nvfp4, Scheduling::clc>).
inline Kernel gemm_nvfp4_sm100_clc{"gemm_nvfp4_sm100_clc", [](TmaDescriptor<uint8_t> a, TmaDescriptor<uint8_t> b, TmaDescriptor<uint8_t> sfa,
                                                              TmaDescriptor<uint8_t> sfb, TmaDescriptor<bf16> c, Int m, Int n, Int k) {
  gemm_sm100::kernel<gemm_sm100::Scheduling::clc>(gemm_sm100::Nvfp4{a, b, sfa, sfb}, c, m, n, k);
}};
/// The same with A and B e4m3 (K bytes per row) and UE8M0 scales per 32 elements (M x K / 32).
inline Kernel gemm_mxfp8_sm100{"gemm_mxfp8_sm100", [](TmaDescriptor<f8e4m3> a, TmaDescriptor<f8e4m3> b, TmaDescriptor<uint8_t> sfa,
                                                      TmaDescriptor<uint8_t> sfb, TmaDescriptor<bf16> c, Int m, Int n, Int k) {
  gemm_sm100::kernel(gemm_sm100::Mxfp8{a, b, sfa, sfb}, c, m, n, k);
}};
/// gemm_mxfp8_sm100 on cluster launch control (launch_config<Mxfp8, Scheduling::clc>).
inline Kernel gemm_mxfp8_sm100_clc{"gemm_mxfp8_sm100_clc", [](TmaDescriptor<f8e4m3> a, TmaDescriptor<f8e4m3> b, TmaDescriptor<uint8_t> sfa,
                                                              TmaDescriptor<uint8_t> sfb, TmaDescriptor<bf16> c, Int m, Int n, Int k) {
  gemm_sm100::kernel<gemm_sm100::Scheduling::clc>(gemm_sm100::Mxfp8{a, b, sfa, sfb}, c, m, n, k);
}};

/// A block-scaled kernel of main loop `Mainloop` cross-compiled for `target`.
template <class Mainloop, class K>
CompiledKernel gemm_block_scaled_sm100_compile(const K& kernel, const Target& target, int64_t m = 256, int64_t n = 256,
                                               int64_t k = 1024) {
  gemm_sm100::check_shape<Mainloop>(m, n, k);
  using T = typename Mainloop::T;
  auto op = gemm_sm100::operand_tensor_map_for_compile<T>();
  auto sfa = gemm_sm100::scale_tensor_map_for_compile(gemm_sm100::tile_m, Mainloop::half_chunks);
  auto sfb = gemm_sm100::scale_tensor_map_for_compile(Mainloop::tile_n, Mainloop::half_chunks);
  return kernel.compile(target, op, op, sfa, sfb, gemm_sm100::c_tensor_map_for_compile(), int32_t(m), int32_t(n), int32_t(k));
}
inline CompiledKernel gemm_nvfp4_sm100_compile(const Target& target) {
  return gemm_block_scaled_sm100_compile<gemm_sm100::Nvfp4>(gemm_nvfp4_sm100, target);
}
inline CompiledKernel gemm_nvfp4_sm100_clc_compile(const Target& target) {
  return gemm_block_scaled_sm100_compile<gemm_sm100::Nvfp4>(gemm_nvfp4_sm100_clc, target);
}
inline CompiledKernel gemm_mxfp8_sm100_compile(const Target& target) {
  return gemm_block_scaled_sm100_compile<gemm_sm100::Mxfp8>(gemm_mxfp8_sm100, target);
}
inline CompiledKernel gemm_mxfp8_sm100_clc_compile(const Target& target) {
  return gemm_block_scaled_sm100_compile<gemm_sm100::Mxfp8>(gemm_mxfp8_sm100_clc, target);
}

}  // namespace examples
