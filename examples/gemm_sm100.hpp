// Named kernels of cutejit/kernels/gemm/sm100.hpp, their launches and their checks.
#pragma once

#include "cutejit/kernels/gemm/sm100.hpp"

#include "example.hpp"

namespace examples {
using namespace cutejit;

inline Kernel gemm_bf16_sm100{"gemm_bf16_sm100", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Int m, Int n, Int k) {
  gemm_sm100::kernel(gemm_sm100::Dense<bf16>{a, b}, c, m, n, k);
}};
inline Kernel gemm_fp8_sm100{"gemm_fp8_sm100", [](TmaDescriptor<f8e4m3> a, TmaDescriptor<f8e4m3> b, TmaDescriptor<bf16> c, Int m, Int n, Int k) {
  gemm_sm100::kernel(gemm_sm100::Dense<f8e4m3>{a, b}, c, m, n, k);
}};
/// The BF16 GEMM on the 2-CTA MMA: clusters of 2 sharing 256 x 256 tiles (launch_config<Dense<bf16, 2>>).
inline Kernel gemm_bf16_sm100_2cta{"gemm_bf16_sm100_2cta", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Int m,
                                                              Int n, Int k) {
  gemm_sm100::kernel(gemm_sm100::Dense<bf16, 2>{a, b}, c, m, n, k);
}};
/// The 2-CTA BF16 GEMM in clusters of two pairs along M (cluster_shape 4), which share B's
/// rows by TMA multicast: each CTA loads half of its 128 rows of B (launch_config<Dense<bf16, 2, 2>>).
inline Kernel gemm_bf16_sm100_2cta_multicast{"gemm_bf16_sm100_2cta_multicast", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b,
                                                                                  TmaDescriptor<bf16> c, Int m, Int n, Int k) {
  gemm_sm100::kernel(gemm_sm100::Dense<bf16, 2, 2>{a, b}, c, m, n, k);
}};
/// The BF16 GEMM with its tiles handed out by cluster launch control: one CTA per tile,
/// launch_config<Dense<bf16>, Scheduling::clc>.
inline Kernel gemm_bf16_sm100_clc{"gemm_bf16_sm100_clc", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Int m,
                                                            Int n, Int k) {
  gemm_sm100::kernel<gemm_sm100::Scheduling::clc>(gemm_sm100::Dense<bf16>{a, b}, c, m, n, k);
}};

/// A dense kernel cross-compiled for `target` (an sm_100-family target) at an m x n x k shape.
template <class T, int Ctas = 1, int PairsM = 1, int PairsN = 1, class K>
CompiledKernel gemm_sm100_compile(const K& kernel, const Target& target, int64_t m = 256 * PairsM, int64_t n = 512 * PairsN, int64_t k = 512) {
  using Mainloop = gemm_sm100::Dense<T, Ctas, PairsM, PairsN>;
  gemm_sm100::check_shape<Mainloop>(m, n, k);
  auto [ta, tb] = gemm_sm100::tensor_maps_for_compile<Mainloop>();
  return kernel.compile(target, ta, tb, gemm_sm100::c_tensor_map_for_compile(), int32_t(m), int32_t(n), int32_t(k));
}
inline CompiledKernel gemm_bf16_sm100_compile(const Target& target) { return gemm_sm100_compile<bf16>(gemm_bf16_sm100, target); }
inline CompiledKernel gemm_fp8_sm100_compile(const Target& target) { return gemm_sm100_compile<f8e4m3>(gemm_fp8_sm100, target); }
inline CompiledKernel gemm_bf16_sm100_clc_compile(const Target& target) { return gemm_sm100_compile<bf16>(gemm_bf16_sm100_clc, target); }
inline CompiledKernel gemm_bf16_sm100_2cta_compile(const Target& target) {
  return gemm_sm100_compile<bf16, 2>(gemm_bf16_sm100_2cta, target);
}
inline CompiledKernel gemm_bf16_sm100_2cta_multicast_compile(const Target& target) {
  return gemm_sm100_compile<bf16, 2, 2>(gemm_bf16_sm100_2cta_multicast, target);
}

}  // namespace examples
