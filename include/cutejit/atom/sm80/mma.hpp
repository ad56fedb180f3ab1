/** \file
 * The mma.sync atoms (sm_80 and newer; FP8 from sm_89), one per kind the PTX ISA has, named
 * as CuTe names them: SM80_16x8x16_F32BF16BF16F32_TN is D(f32) = A(bf16) * B(bf16) + C(f32),
 * 16 x 8 x 16, A row-major (M x K, "T") and B column-major (N x K, "N"). Each is one warp
 * (32 threads) and carries the thread-value layouts of the PTX ISA's fragments
 * (src/atom/mma_sync_layouts.cpp, in CuTe's notation), so TiledMma can partition for it.
 */
#pragma once

#include <span>
#include <string>
#include <vector>

#include "cutejit/arch/sm80.hpp"
#include "cutejit/layout/layout.hpp"

namespace cutejit {

namespace detail {
/// The thread-value layouts of mma.sync m{m}n{n}k{k} whose A and B elements are `ab_bits` wide.
Layout mma_sync_layout_a(int m, int n, int k, int ab_bits);
Layout mma_sync_layout_b(int m, int n, int k, int ab_bits);
Layout mma_sync_layout_c(int m, int n, int k);
}  // namespace detail

/// One mma.sync kind: D = A * B + C on an M x N x K block, by one warp. `TF32`: A and B are
/// f32 values read as TF32 (the tensor core ignores their low 13 mantissa bits).
template <int M, int N, int K, Element D, Element A, Element B, Element C, bool TF32 = false>
struct MmaSync {
  using ElementD = D;
  using ElementA = A;
  using ElementB = B;
  using ElementC = C;
  static constexpr int m = M, n = N, k = K, threads = 32;

  static std::string name() {
    auto type = [](DType t, bool tf32) { return t == DType::f32 && tf32 ? std::string("tf32") : std::string(cutejit::name(t)); };
    return "mma.sync.m" + std::to_string(M) + "n" + std::to_string(N) + "k" + std::to_string(K) + "." + type(dtype_v<D>, false) +
           "." + type(dtype_v<A>, TF32) + "." + type(dtype_v<B>, TF32) + "." + type(dtype_v<C>, false);
  }
  static Layout layout_a() { return detail::mma_sync_layout_a(M, N, K, bits<A>()); }
  static Layout layout_b() { return detail::mma_sync_layout_b(M, N, K, bits<B>()); }
  static Layout layout_c() { return detail::mma_sync_layout_c(M, N, K); }

  /// This thread's D values from its A, B and C values, each in its layout's value order.
  static std::vector<detail::ValueId> call(std::span<const detail::ValueId> a, std::span<const detail::ValueId> b,
                                           std::span<const detail::ValueId> c, detail::Where w) {
    return detail::mma_sync(M, N, K, {dtype_v<D>, dtype_v<A>, dtype_v<B>, dtype_v<C>, TF32}, a, b, c, w);
  }

 private:
  template <class T>
  static constexpr int bits() { return 8 * int(sizeof(T)); }
};

// 16-bit floats (sm_80).
using SM80_16x8x16_F32BF16BF16F32_TN = MmaSync<16, 8, 16, float, bf16, bf16, float>;
using SM80_16x8x8_F32BF16BF16F32_TN = MmaSync<16, 8, 8, float, bf16, bf16, float>;
using SM80_16x8x16_F32F16F16F32_TN = MmaSync<16, 8, 16, float, f16, f16, float>;
using SM80_16x8x8_F32F16F16F32_TN = MmaSync<16, 8, 8, float, f16, f16, float>;
using SM80_16x8x16_F16F16F16F16_TN = MmaSync<16, 8, 16, f16, f16, f16, f16>;
using SM80_16x8x8_F16F16F16F16_TN = MmaSync<16, 8, 8, f16, f16, f16, f16>;
// TF32 (sm_80).
using SM80_16x8x8_F32TF32TF32F32_TN = MmaSync<16, 8, 8, float, float, float, float, true>;
using SM80_16x8x4_F32TF32TF32F32_TN = MmaSync<16, 8, 4, float, float, float, float, true>;
// 8-bit integers, signed and unsigned (sm_80).
using SM80_16x8x32_S32S8S8S32_TN = MmaSync<16, 8, 32, int32_t, int8_t, int8_t, int32_t>;
using SM80_16x8x32_S32S8U8S32_TN = MmaSync<16, 8, 32, int32_t, int8_t, uint8_t, int32_t>;
using SM80_16x8x32_S32U8S8S32_TN = MmaSync<16, 8, 32, int32_t, uint8_t, int8_t, int32_t>;
using SM80_16x8x32_S32U8U8S32_TN = MmaSync<16, 8, 32, int32_t, uint8_t, uint8_t, int32_t>;
using SM80_16x8x16_S32S8S8S32_TN = MmaSync<16, 8, 16, int32_t, int8_t, int8_t, int32_t>;
using SM80_16x8x16_S32S8U8S32_TN = MmaSync<16, 8, 16, int32_t, int8_t, uint8_t, int32_t>;
using SM80_16x8x16_S32U8S8S32_TN = MmaSync<16, 8, 16, int32_t, uint8_t, int8_t, int32_t>;
using SM80_16x8x16_S32U8U8S32_TN = MmaSync<16, 8, 16, int32_t, uint8_t, uint8_t, int32_t>;
// FP8 (sm_89 and newer).
using SM89_16x8x32_F32E4M3E4M3F32_TN = MmaSync<16, 8, 32, float, f8e4m3, f8e4m3, float>;
using SM89_16x8x32_F32E4M3E5M2F32_TN = MmaSync<16, 8, 32, float, f8e4m3, f8e5m2, float>;
using SM89_16x8x32_F32E5M2E4M3F32_TN = MmaSync<16, 8, 32, float, f8e5m2, f8e4m3, float>;
using SM89_16x8x32_F32E5M2E5M2F32_TN = MmaSync<16, 8, 32, float, f8e5m2, f8e5m2, float>;
// FP64 (sm_80 DMMA).
using SM80_8x8x4_F64F64F64F64_TN = MmaSync<8, 8, 4, double, double, double, double>;

}  // namespace cutejit
