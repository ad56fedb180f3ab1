/** \file
 * The sm_100 block-scaled MMA atom (tcgen05.mma.cta_group::1.kind::{mxf8f6f4, mxf4, mxf4nvf4}
 * .block_scale, A and B from shared memory): D (M x N, f32 in TMEM) = (A * SFA)(B * SFB)^T + D,
 * each `Vector` elements of K of a row of A (of a column of B) sharing one scale factor read
 * from Tensor Memory.
 *
 * The operands are shared-memory tiles as for the dense atom (umma.hpp): `UmmaOperand` of
 * 8-bit elements, an FP4 pair per byte for the FP4 kinds; one MMA step reads 32 bytes of K (32
 * FP8 or 64 FP4 elements) and `scales` scale factors per row.
 *
 * The scale factors reach TMEM from shared memory by tcgen05.cp, issued by the MMA thread
 * before the MMAs that read them (the ISA orders a thread's tcgen05.cp before its later
 * tcgen05.mma). `UmmaScaleFactors` takes a stage's scale tile, a shared-memory tensor of
 * bytes of shape (MN, K blocks), derives its copies (one 32x128b.warpx4 per 512-byte chunk of
 * 128 rows x 4 blocks) and each MMA step's TMEM column and scale-factor id, and checks the
 * whole path by the models of arch/sm100/scale_factors.hpp: for every (row, block), the TMEM
 * byte each MMA step reads must be one the copies filled from the byte where the tile holds
 * that scale. A tile in another layout is a trace-time error naming the scale and both bytes.
 *
 * CuTe names: SM100_MMA_MXF8F6F4_SS, SM100_MMA_MXF4_SS, SM100_MMA_MXF4NVF4_SS.
 */
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "cutejit/arch/sm100/scale_factors.hpp"
#include "cutejit/atom/sm100/umma.hpp"
#include "cutejit/layout/blocked_scales.hpp"

namespace cutejit {

namespace detail {
/// What a scale tile's layout gives its copies and its MMA steps (bytes from the tile's data
/// pointer, TMEM columns from the scale operand's address).
struct UmmaScalePlan {
  struct Copy {
    uint32_t byte;    ///< the chunk's first byte in the tile
    uint32_t column;  ///< where tcgen05.cp puts it
  };
  struct Step {
    uint32_t column;  ///< the MMA step's scale operand: this column of the copies' TMEM
    int id;           ///< its scale-factor id (the byte of the column its first scale is in)
  };
  std::vector<Copy> copies;
  std::vector<Step> steps;
  sm100::SmemDescriptor copy_fields;  ///< tcgen05.cp's source descriptor, start address 0
  int columns = 0;                    ///< TMEM columns the copies fill
};
/// The plan for an (MN, K blocks) byte tile of this static layout, read `scales_per_mma` blocks
/// per MMA step by an operand of `mn` rows, checked against the models; `which` ("SFA",
/// "SFB") names it in errors.
UmmaScalePlan plan_umma_scale_factors(const Layout& layout, int mn, int scales_per_mma, const char* which, Where w);
}  // namespace detail

/// One stage's scale factors of an operand in shared memory, with their copies into TMEM and
/// the TMEM address and id each MMA step reads them at.
class UmmaScaleFactors {
 public:
  /// `tile`: a shared-memory tensor of bytes (UE8M0 or UE4M3), static shape (mn, K blocks), no
  /// swizzle; `mn`: 128 (A) or the atom's N (128 or 256).
  UmmaScaleFactors(const Tensor<uint8_t>& tile, int mn, int scales_per_mma, const char* which,
                   detail::Where w = detail::Where::current()) {
    if (tile.data().space() != Space::shared) detail::fail(std::string("the MMA's ") + which + " must be in shared memory", w);
    if (!is_static(tile.layout()) || !tile.swizzle_base().is_static() || (tile.swizzle() && tile.swizzle()->bits() != 0))
      detail::fail(std::string("the MMA's ") + which + " needs an unswizzled tile of static layout (its copies are fixed at trace time)", w);
    plan_ = detail::plan_umma_scale_factors(tile.layout(), mn, scales_per_mma, which, w);
    if (tile.data().alignment() < 16 || tile.swizzle_base().value() != 0)
      detail::fail(std::string("the MMA's ") + which + " tile must start 16-byte aligned (tcgen05.cp's descriptor counts 16-byte units)", w);
    Value<uint32_t> address(detail::shared_address(tile.data().id(), w));
    base_ = cast<uint64_t>((address >> 4u) & 0x3fffu) | Value<uint64_t>(plan_.copy_fields.encode());
  }

  /// TMEM columns the scale factors take.
  int columns() const { return plan_.columns; }
  int k_steps() const { return int(plan_.steps.size()); }
  /// Issues the tcgen05.cp that put the tile into TMEM at `tmem` (lane 0). Called by the
  /// thread that issues the MMAs, before them.
  void copy_to_tmem(const Value<uint32_t>& tmem, detail::Where w = detail::Where::current()) const {
    for (const detail::UmmaScalePlan::Copy& c : plan_.copies) {
      Value<uint64_t> desc = c.byte == 0 ? base_ : base_ + Value<uint64_t>(uint64_t(c.byte >> 4));
      Value<uint32_t> to = c.column == 0 ? tmem : tmem + c.column;
      detail::tcgen05_cp("32x128b.warpx4", to.id(), desc.id(), w);
    }
  }
  /// The scale operand of MMA step `s` when the tile was copied to `tmem`.
  Value<uint32_t> address(const Value<uint32_t>& tmem, int s, detail::Where w = detail::Where::current()) const {
    const uint32_t column = step(s, w).column;
    return column == 0 ? tmem : tmem + column;
  }
  /// The scale-factor id of MMA step `s` (the instruction descriptor's field).
  int id(int s, detail::Where w = detail::Where::current()) const { return step(s, w).id; }
  const detail::UmmaScalePlan& plan() const { return plan_; }

 private:
  const detail::UmmaScalePlan::Step& step(int s, detail::Where w) const {
    if (s < 0 || s >= k_steps()) detail::fail("K step " + std::to_string(s) + " is outside these scale factors' " + std::to_string(k_steps()), w);
    return plan_.steps[size_t(s)];
  }
  detail::UmmaScalePlan plan_;
  Value<uint64_t> base_;
};

/// The block-scaled tcgen05.mma: `T` the operand tiles' element (f8e4m3 or f8e5m2 for
/// kind::mxf8f6f4; uint8_t holding two e2m1 for the FP4 kinds), `Scale` the scale type (UE8M0;
/// UE4M3 for kind::mxf4nvf4 only), `Vector` the elements per scale (32; 16 for mxf4nvf4).
/// M = 128; N a multiple of 8 up to 256, but the scale path here covers N = 128 and 256.
template <class T, sm100::BlockScaledKind Kind, sm100::ScaleType Scale, int Vector, int M, int N>
struct Tcgen05MmaBlockScaledSS {
  using element_type = T;
  static constexpr sm100::BlockScaledKind kind = Kind;
  static constexpr bool fp4 = Kind != sm100::BlockScaledKind::mxf8f6f4;
  static constexpr int m = M, n = N, vector = Vector;
  /// K per MMA step in elements (32 bytes of each operand row), and the scales it reads per row.
  static constexpr int k = fp4 ? 64 : 32, scales = k / Vector;
  static_assert(fp4 ? std::is_same_v<T, uint8_t> : (std::is_same_v<T, f8e4m3> || std::is_same_v<T, f8e5m2>),
                "the FP4 kinds read e2m1 pairs (uint8_t tiles), kind::mxf8f6f4 here reads f8e4m3 or f8e5m2");
  static_assert(Vector == 32 || (Vector == 16 && Kind == sm100::BlockScaledKind::mxf4nvf4),
                "scales cover 32 elements of K (16 with kind::mxf4nvf4)");
  static_assert(Scale == sm100::ScaleType::ue8m0 || Kind == sm100::BlockScaledKind::mxf4nvf4, "UE4M3 scales are kind::mxf4nvf4's only");
  static_assert(M == 128, "this block-scaled atom has M = 128 (row i of D in TMEM lane i)");
  static_assert(N == 128 || N == 256, "this block-scaled atom's scale path covers N = 128 and 256");

  /// The instruction descriptor with scale-factor ids `a_id` and `b_id` (they change from one
  /// K step to the next).
  static uint32_t instruction_descriptor(int a_id, int b_id) {
    const sm100::OperandType t = fp4 ? sm100::OperandType::e2m1 : detail::umma_operand_type<T>();
    return sm100::BlockScaledInstrDescriptor{.kind = Kind, .a = t, .b = t, .scale = Scale, .scale_a_id = a_id, .scale_b_id = b_id,
                                             .m = M, .n = N}
        .encode();
  }
};

template <class T, int M, int N>
using SM100_MMA_MXF8F6F4_SS = Tcgen05MmaBlockScaledSS<T, sm100::BlockScaledKind::mxf8f6f4, sm100::ScaleType::ue8m0, 32, M, N>;
template <int M, int N>
using SM100_MMA_MXF4_SS = Tcgen05MmaBlockScaledSS<uint8_t, sm100::BlockScaledKind::mxf4, sm100::ScaleType::ue8m0, 32, M, N>;
/// NVFP4: UE4M3 scales per 16 elements.
template <int M, int N>
using SM100_MMA_MXF4NVF4_SS = Tcgen05MmaBlockScaledSS<uint8_t, sm100::BlockScaledKind::mxf4nvf4, sm100::ScaleType::ue4m3, 16, M, N>;

/// The scale operands of one atom: `sfa` (M x K blocks) and `sfb` (N x K blocks) byte tiles.
template <class T, sm100::BlockScaledKind K, sm100::ScaleType S, int V, int M, int N>
std::pair<UmmaScaleFactors, UmmaScaleFactors> make_umma_scale_factors(const Tcgen05MmaBlockScaledSS<T, K, S, V, M, N>& atom,
                                                                      const Tensor<uint8_t>& sfa, const Tensor<uint8_t>& sfb,
                                                                      detail::Where w = detail::Where::current()) {
  UmmaScaleFactors a(sfa, M, atom.scales, "SFA", w), b(sfb, N, atom.scales, "SFB", w);
  if (a.k_steps() != b.k_steps())
    detail::fail("SFA and SFB cover different K: " + std::to_string(a.k_steps()) + " and " + std::to_string(b.k_steps()) + " MMA steps", w);
  return {a, b};
}

/// D (TMEM at `d`) = (A SFA)(B SFB)^T + (accumulate ? D : 0) over the operands' K, the scale
/// factors already copied to TMEM at `sfa_tmem` and `sfb_tmem` (UmmaScaleFactors::copy_to_tmem,
/// by this thread). One tcgen05.mma per K step. Called by one thread.
template <class T, sm100::BlockScaledKind K, sm100::ScaleType S, int V, int M, int N>
void gemm(const Tcgen05MmaBlockScaledSS<T, K, S, V, M, N>&, const Value<uint32_t>& d, const UmmaOperand<T>& a,
          const UmmaOperand<T>& b, const UmmaScaleFactors& sfa, const Value<uint32_t>& sfa_tmem, const UmmaScaleFactors& sfb,
          const Value<uint32_t>& sfb_tmem, const Bool& accumulate, detail::Where w = detail::Where::current()) {
  using Atom = Tcgen05MmaBlockScaledSS<T, K, S, V, M, N>;
  if (a.major() != UmmaMajor::k || b.major() != UmmaMajor::k)
    detail::fail("the block-scaled MMA reads A and B K-major here; " + std::string(a.major() != UmmaMajor::k ? "A" : "B") +
                     " is MN-major",
                 w);
  if (a.k_steps() != b.k_steps() || a.k_steps() != sfa.k_steps() || sfa.k_steps() != sfb.k_steps())
    detail::fail("the operands and scale factors cover different K: A " + std::to_string(a.k_steps()) + ", B " +
                     std::to_string(b.k_steps()) + ", SFA " + std::to_string(sfa.k_steps()) + ", SFB " + std::to_string(sfb.k_steps()) +
                     " MMA steps",
                 w);
  for (int s = 0; s < a.k_steps(); ++s)
    detail::tcgen05_mma_block_scaled(K, V, d.id(), a.descriptor(s, w).id(), b.descriptor(s, w).id(),
                                     Atom::instruction_descriptor(sfa.id(s, w), sfb.id(s, w)), sfa.address(sfa_tmem, s, w).id(),
                                     sfb.address(sfb_tmem, s, w).id(), (s == 0 ? accumulate : Bool(true)).id(), w);
}

}  // namespace cutejit
