/** \file
 * The block-scaled mma.sync atoms of the sm_120 family (CuTe's SM120_16x8x32_TN_VS and
 * SM120_16x8x64_TN_VS): D(16 x 8, f32) = (A * SFA)(B * SFB)^T + C by one warp, where every
 * `scale_block` K elements of a row of A (a column of B) share one scale factor:
 *
 *   SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN  MXFP8: kind::mxf8f6f4, UE8M0 per 32 (any of e4m3,
 *                                          e5m2, e3m2, e2m3, e2m1 with MxfAtom<...>)
 *   SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN  MXFP4: kind::mxf4, UE8M0 per 32
 *   SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN  NVFP4: kind::mxf4nvf4, UE4M3 per 16
 *
 * Fragments are bytes (uint8_t register tensors), laid out as mma.sync m16n8k32's 8-bit
 * operands are: kind::mxf8f6f4 keeps one element per byte (FP6 in bits 0-5, FP4 in bits 2-5),
 * the k64 kinds two FP4 per byte (e2m1x2, the lower K in the low nibble), so their (M, K/2)
 * tile of bytes has the same layout. The scale factors of a thread are one 32-bit register, a
 * scale per byte (the lowest K block first), given by the threads of each quad that the
 * instruction's selectors (0, 0) name: lane 4 g holds row g's, lane 4 g + 1 row g + 8's (lanes
 * 4 g + 2 and 4 g + 3 repeat them), and lane 4 g column g's of B (the other lanes repeat it).
 * `layout_sfa()` and `layout_sfb()` say so as thread-value layouts of the (16, K / scale_block)
 * and (8, K / scale_block) scale tiles.
 *
 * `MmaSyncF8F6F4` is the same kind::f8f6f4 fragments without scale factors.
 *
 * Compile-verified for sm_120a, sm_120f, sm_121a and sm_121f: ptxas takes them and the tests
 * read QMMA.SF / OMMA.SF / QMMA in their SASS; none has run on an sm_120 GPU.
 */
#pragma once

#include <string>
#include <vector>

#include "cutejit/arch/sm120.hpp"
#include "cutejit/atom/sm80/mma.hpp"
#include "cutejit/atom/tiled_mma.hpp"
#include "cutejit/tensor/tensor.hpp"

namespace cutejit {

using detail::ScaledMmaKind;
using detail::MxType;

namespace detail {
/// What every kind::f8f6f4-shaped atom shares: byte fragments laid out as mma.sync m16n8k32's
/// 8-bit operands, f32 accumulators, one warp; K counted in bytes (32), the fragments' unit, so
/// that a TiledMma tiles them.
struct F8F6F4Fragments {
  using ElementA = uint8_t;
  using ElementB = uint8_t;
  using ElementC = float;
  using ElementD = float;
  static constexpr int m = 16, n = 8, k = 32, threads = 32;
  /// Where an FP4 value sits in its byte: bits 2-5, so that an unpacking ldmatrix (which leaves
  /// it in bits 0-3) into these fragments shifts its registers by 2.
  static constexpr int unpacked_fp4_shift = 2;
  /// (thread, value) -> (row, K byte) of A's 16 x 32 bytes, (column, K byte) of B's 8 x 32, and
  /// (row, column) of C.
  static Layout layout_a() { return mma_sync_layout_a(16, 8, 32, 8); }
  static Layout layout_b() { return mma_sync_layout_b(16, 8, 32, 8); }
  static Layout layout_c() { return mma_sync_layout_c(16, 8, 32); }
};
}  // namespace detail

template <ScaledMmaKind Kind, MxType A = MxType::e2m1, MxType B = A>
  requires(Kind == ScaledMmaKind::mxf8f6f4 || (A == MxType::e2m1 && B == MxType::e2m1))
struct MmaSyncBlockScaled : detail::F8F6F4Fragments {
  static constexpr ScaledMmaKind kind = Kind;
  /// The 32 bytes of K hold 32 elements (kind::mxf8f6f4) or 64 (the FP4 kinds).
  static constexpr int k_elements = Kind == ScaledMmaKind::mxf8f6f4 ? 32 : 64;
  /// K elements per scale factor, and scale factors per row of A (column of B).
  static constexpr int scale_block = Kind == ScaledMmaKind::mxf4nvf4 ? 16 : 32;
  static constexpr int scales = k_elements / scale_block;

  static std::string name() {
    const char* kind = Kind == ScaledMmaKind::mxf8f6f4 ? "mxf8f6f4" : Kind == ScaledMmaKind::mxf4 ? "mxf4" : "mxf4nvf4";
    return "mma.sync.m16n8k" + std::to_string(k_elements) + ".kind::" + kind + "." + detail::ptx_name(A) + "." + detail::ptx_name(B) +
           (Kind == ScaledMmaKind::mxf4nvf4 ? ".ue4m3" : ".ue8m0");
  }
  /// (thread, value) -> (row, K block) of A's scales and (column, K block) of B's.
  static Layout layout_sfa() {
    return Layout(IntTuple{IntTuple{2, 2, 8}, scales}, IntTuple{IntTuple{8, 0, 1}, 16});
  }
  static Layout layout_sfb() { return Layout(IntTuple{IntTuple{4, 8}, scales}, IntTuple{IntTuple{0, 1}, 8}); }

  /// This thread's D values from its A and B bytes, C values and scale registers.
  static std::vector<detail::ValueId> call(std::span<const detail::ValueId> a, std::span<const detail::ValueId> b,
                                           std::span<const detail::ValueId> c, const Value<uint32_t>& scale_a,
                                           const Value<uint32_t>& scale_b, detail::Where w) {
    return detail::mma_sync_block_scaled(Kind, A, B, a, b, c, scale_a.id(), scale_b.id(), w);
  }
};

using SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN = MmaSyncBlockScaled<ScaledMmaKind::mxf8f6f4, MxType::e4m3>;
using SM120_16x8x32_F32E2M1E2M1F32_UE8M0_TN = MmaSyncBlockScaled<ScaledMmaKind::mxf8f6f4, MxType::e2m1>;
using SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN = MmaSyncBlockScaled<ScaledMmaKind::mxf4>;
using SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN = MmaSyncBlockScaled<ScaledMmaKind::mxf4nvf4>;

/// mma.sync m16n8k32 kind::f8f6f4 without scale factors: any mix of FP8 (e4m3, e5m2), FP6
/// (e3m2, e2m3) and FP4 (e2m1) operands, one element per byte as in kind::mxf8f6f4, f32
/// accumulators. Its fragments are the block-scaled atoms', and it has the plain atoms' call, so
/// TiledMma's gemm() issues it.
template <MxType A, MxType B = A>
struct MmaSyncF8F6F4 : detail::F8F6F4Fragments {
  static std::string name() { return std::string("mma.sync.m16n8k32.kind::f8f6f4.") + detail::ptx_name(A) + "." + detail::ptx_name(B); }
  static std::vector<detail::ValueId> call(std::span<const detail::ValueId> a, std::span<const detail::ValueId> b,
                                           std::span<const detail::ValueId> c, detail::Where w) {
    return detail::mma_sync_f8f6f4(A, B, a, b, c, w);
  }
};

using SM120_16x8x32_F32E2M1E2M1F32_TN = MmaSyncF8F6F4<MxType::e2m1>;
using SM120_16x8x32_F32E3M2E2M3F32_TN = MmaSyncF8F6F4<MxType::e3m2, MxType::e2m3>;

/// d = (a * scale_a)(b * scale_b)^T + c for one atom: `a` (16 bytes), `b` (8 bytes), `c` and `d`
/// (4 f32) register tensors in the atom's value order, the scales this thread's registers.
template <ScaledMmaKind Kind, MxType A, MxType B>
void mma(const MmaSyncBlockScaled<Kind, A, B>&, const Tensor<float>& d, const Tensor<uint8_t>& a, const Tensor<uint8_t>& b,
         const Tensor<float>& c, const Value<uint32_t>& scale_a, const Value<uint32_t>& scale_b,
         detail::Where w = detail::Where::current()) {
  auto values = [&](const auto& t, int64_t count) {
    if (size(t.layout()).value() != count)
      detail::fail("a block-scaled mma.sync fragment here has " + std::to_string(count) + " values per thread", w);
    std::vector<detail::ValueId> v;
    for (int64_t i = 0; i < count; ++i) v.push_back(t(IntTuple(i)).read(w).id());
    return v;
  };
  std::vector<detail::ValueId> out =
      MmaSyncBlockScaled<Kind, A, B>::call(values(a, 16), values(b, 8), values(c, 4), scale_a, scale_b, w);
  for (int64_t i = 0; i < 4; ++i) d(IntTuple(i)) = F32(out[size_t(i)]);
}

/// A thread's scale register from its scale factors of one atom (a byte each, the lowest K
/// block in the lowest byte).
inline Value<uint32_t> scale_register(const Tensor<uint8_t>& scales, detail::Where w = detail::Where::current()) {
  Value<uint32_t> r(0u);
  for (int64_t j = 0; j < size(scales.layout()).value(); ++j)
    r = r | (cast<uint32_t>(Value<uint8_t>(scales(IntTuple(j)).read(w))) << uint32_t(8 * j));
  return r;
}

/// acc += (A * SFA)(B * SFB)^T over a TiledMma's register fragments: A, B and acc from
/// partition_fragment_A/B/C, the scale factors from partition_fragment_SFA (scales, RestM,
/// RestK) and partition_fragment_SFB (scales, RestN, RestK). One atom for every (m, n, k), k
/// outermost, each with the scale registers of its row block of A and column block of B.
template <ScaledMmaKind Kind, MxType A, MxType B>
void gemm(const TiledMma<MmaSyncBlockScaled<Kind, A, B>>& tiled, const Tensor<float>& acc, const Tensor<uint8_t>& a,
          const Tensor<uint8_t>& b, const Tensor<uint8_t>& sfa, const Tensor<uint8_t>& sfb, detail::Where w = detail::Where::current()) {
  using Op = MmaSyncBlockScaled<Kind, A, B>;
  detail::check_gemm_fragments(tiled.shape(), acc.layout(), a.layout(), b.layout(), w);
  const int64_t rest_m = size(mode(acc.layout(), 1)).value(), rest_n = size(mode(acc.layout(), 2)).value(),
                rest_k = size(mode(a.layout(), 2)).value();
  auto check_scales = [&](const Tensor<uint8_t>& sf, const char* name, int64_t rest) {
    if (rank(sf.layout()) != 3 || size(mode(sf.layout(), 0)).value() != Op::scales || size(mode(sf.layout(), 1)).value() != rest ||
        size(mode(sf.layout(), 2)).value() != rest_k)
      detail::fail(std::string("the ") + name + " fragment must be (" + std::to_string(Op::scales) + ", " + std::to_string(rest) + ", " +
                       std::to_string(rest_k) + ") (partition_fragment_" + name + " of the tile's scales), not " +
                       to_string(sf.layout().shape()),
                   w);
  };
  check_scales(sfa, "SFA", rest_m);
  check_scales(sfb, "SFB", rest_n);
  // Each fragment's values are read once per K block, not once per atom that uses them.
  auto values = [&](const Tensor<uint8_t>& t, int64_t i, int64_t k) {
    std::vector<detail::ValueId> v;
    for (int64_t x = 0; x < size(mode(t.layout(), 0)).value(); ++x) v.push_back(t(IntTuple(x), IntTuple(i), IntTuple(k), w).read(w).id());
    return v;
  };
  for (int64_t k = 0; k < rest_k; ++k) {
    std::vector<std::vector<detail::ValueId>> b_values;
    std::vector<Value<uint32_t>> scale_b;
    for (int64_t n = 0; n < rest_n; ++n) {
      b_values.push_back(values(b, n, k));
      scale_b.push_back(scale_register(sfb(_, n, k), w));
    }
    for (int64_t m = 0; m < rest_m; ++m) {
      std::vector<detail::ValueId> a_values = values(a, m, k);
      Value<uint32_t> scale_a = scale_register(sfa(_, m, k), w);
      for (int64_t n = 0; n < rest_n; ++n) {
        // Alternate the direction of n along m, as gemm() does, so that consecutive atoms share B.
        int64_t nn = m % 2 ? rest_n - 1 - n : n;
        std::vector<detail::ValueId> c;
        for (int64_t x = 0; x < 4; ++x) c.push_back(acc(IntTuple(x), IntTuple(m), IntTuple(nn), w).read(w).id());
        std::vector<detail::ValueId> d = Op::call(a_values, b_values[size_t(nn)], c, scale_a, scale_b[size_t(nn)], w);
        for (int64_t x = 0; x < 4; ++x) acc(IntTuple(x), IntTuple(m), IntTuple(nn), w) = F32(d[size_t(x)]);
      }
    }
  }
}

}  // namespace cutejit
