/** \file
 * The sm_100 tensor-core MMA atom (tcgen05.mma, cta_group::1, A and B from shared memory):
 * D (M x N in Tensor Memory) = A (M x K) * B (N x K)^T + D, issued by one thread for the whole
 * CTA and completing asynchronously; `tcgen05_commit(bar)` makes an mbarrier arrive once the
 * MMAs a thread issued are done (that is how a pipeline stage is freed, and how the epilogue
 * learns that the accumulators are ready). One MMA reads 32 bytes of K of each operand row:
 * K = 16 for bf16/f16 (kind::f16), 8 for f32 read as TF32 (kind::tf32), 32 for FP8
 * (kind::f8f6f4) and for 8-bit integers (kind::i8, s32 accumulators; sm_100a and sm_110a only).
 *
 * Operands are shared-memory tensors of shape (MN, K), each in one of the layouts the tensor
 * core reads (a TMA box with a 32/64/128-byte swizzle leaves them so): `UmmaOperand` derives the
 * shared-memory descriptor from the tensor's layout and swizzle (major-ness, swizzle mode, the
 * leading and stride byte offsets), then checks it by the descriptor model of
 * arch/sm100/descriptors.hpp: for every K step and every (mn, k) of the MMA, the byte the
 * model says the hardware reads must be the byte where the tensor holds that element. A layout
 * the model says the hardware cannot read, a tile off its swizzle pattern, or the wrong extent
 * is a trace-time error at the user's line.
 *
 * The accumulator lives in TMEM (atom/sm100/tmem.hpp): for M = 128, row i of D is lane i,
 * column j is column j of the allocation (f32, or s32 for kind::i8).
 *
 * The 2-CTA form (CtaGroup::two, CuTe's SM100_MMA_F16BF16_2x1SM_SS): the CTAs of ranks 2k and
 * 2k + 1 of a cluster compute one M = 256 tile together. Each holds its half of the operands at
 * the same shared-memory offset, A's rows 128 r ... 128 r + 127 and B's rows N/2 r ... N/2 r +
 * N/2 - 1 (r = rank % 2), and receives its 128 rows of D in its own TMEM, at the same address.
 * One thread of the even CTA issues the MMA for both; `tcgen05_commit(bar, cta_mask)` then
 * signals the barrier at the same offset in each CTA of the mask.
 *
 * CuTe names: SM100_MMA_F16BF16_SS<T, M, N, AMajor, BMajor>, SM100_MMA_TF32_SS, SM100_MMA_F8F6F4_SS
 * (one FP8 type; `Tcgen05MmaF8F6F4SS<A, B, M, N>` any mix of FP8, FP6 and FP4) and SM100_MMA_S8_SS.
 */
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "cutejit/arch/sm100/descriptors.hpp"
#include "cutejit/arch/sm100/tcgen05.hpp"
#include "cutejit/arch/sm120.hpp"  // MxType
#include "cutejit/arch/sm90.hpp"  // shared_address
#include "cutejit/atom/smem_operand.hpp"
#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/tensor/tensor.hpp"

namespace cutejit {

using UmmaMajor = sm100::Major;
using detail::MxType;

/// The element types tcgen05.mma reads here (f32 is read as TF32), and the descriptor's name
/// for each.
template <class T>
inline constexpr bool is_umma_operand_v = std::is_same_v<T, bf16> || std::is_same_v<T, f16> || std::is_same_v<T, float> ||
                                          std::is_same_v<T, f8e4m3> || std::is_same_v<T, f8e5m2> || std::is_same_v<T, int8_t> ||
                                          std::is_same_v<T, uint8_t>;

namespace detail {
template <class T> sm100::OperandType umma_operand_type() {
  if constexpr (std::is_same_v<T, bf16>) return sm100::OperandType::bf16;
  else if constexpr (std::is_same_v<T, f16>) return sm100::OperandType::f16;
  else if constexpr (std::is_same_v<T, float>) return sm100::OperandType::tf32;
  else if constexpr (std::is_same_v<T, f8e4m3>) return sm100::OperandType::e4m3;
  else if constexpr (std::is_same_v<T, int8_t>) return sm100::OperandType::s8;
  else if constexpr (std::is_same_v<T, uint8_t>) return sm100::OperandType::u8;
  else return sm100::OperandType::e5m2;
}

}  // namespace detail

/// An operand tile in shared memory as one tcgen05.mma atom of `mn` rows (M for A, N for B)
/// reads it, with its descriptors.
template <Element T>
  requires is_umma_operand_v<T>
class UmmaOperand {
 public:
  static constexpr int k_per_mma = 32 / int(sizeof(T));

  /// `tile`: a shared-memory tensor of static shape (mn, K), K a multiple of k_per_mma.
  UmmaOperand(const Tensor<T>& tile, int mn, const char* which, detail::Where w = detail::Where::current()) {
    if (tile.data().space() != Space::shared) detail::fail(std::string("tcgen05.mma's ") + which + " must be in shared memory", w);
    if (!is_static(tile.layout()) || !tile.swizzle_base().is_static())
      detail::fail(std::string("tcgen05.mma's ") + which + " needs a tile of static layout (its descriptor is fixed at trace time)", w);
    plan_ = detail::plan_smem_operand(tile.layout(), tile.swizzle(), tile.swizzle_base().value(), int(sizeof(T)), mn, k_per_mma,
                                      std::string("tcgen05.mma's ") + which, w);
    if (tile.data().alignment() < plan_.alignment)
      detail::fail(std::string("tcgen05.mma's ") + which + " tile (" + sm100::to_string(plan_.fields.swizzle) + ") must start " +
                       std::to_string(plan_.alignment) + "-byte aligned, on its swizzle pattern; its address is known to be only " +
                       std::to_string(tile.data().alignment()) + "-byte aligned",
                   w);
    // Bits 0-13 hold the address >> 4: the start of the shared window is 0 and it is smaller
    // than 2^18 bytes, so adding a K step's bytes >> 4 cannot carry out of the field.
    Value<uint32_t> address(detail::shared_address(tile.data().id(), w));
    base_ = cast<uint64_t>((address >> 4u) & 0x3fffu) | Value<uint64_t>(plan_.fields.encode());
  }

  sm100::Major major() const { return plan_.major; }
  int k_steps() const { return int(plan_.step_bytes.size()); }
  /// The descriptor of K step `s` (K elements k_per_mma s ... k_per_mma (s + 1) - 1).
  Value<uint64_t> descriptor(int s, detail::Where w = detail::Where::current()) const {
    if (s < 0 || s >= k_steps()) detail::fail("K step " + std::to_string(s) + " is outside this operand's " + std::to_string(k_steps()), w);
    const uint32_t bytes = plan_.step_bytes[size_t(s)];
    return bytes == 0 ? base_ : base_ + Value<uint64_t>(uint64_t(bytes >> 4));
  }
  const detail::SmemOperandPlan& plan() const { return plan_; }

 private:
  detail::SmemOperandPlan plan_;
  Value<uint64_t> base_;
};

/// tcgen05.mma with A and B from shared memory: D(M x N, f32, in TMEM) += A(M x K) * B(N x K)^T.
/// One CTA: M = 128 (a lane per row), N a multiple of 8 from 8 to 256. A pair of CTAs
/// (`Group` two): M = 256, 128 rows in each CTA's TMEM, N a multiple of 16 from 32 to 256.
template <class T, int M, int N, UmmaMajor AMajor = UmmaMajor::k, UmmaMajor BMajor = UmmaMajor::k,
          sm100::CtaGroup Group = sm100::CtaGroup::one>
  requires is_umma_operand_v<T>
struct Tcgen05MmaSS {
  using element_type = T;
  static constexpr int m = M, n = N, k = 32 / int(sizeof(T));
  static constexpr UmmaMajor a_major = AMajor, b_major = BMajor;
  static constexpr sm100::CtaGroup group = Group;
  /// The CTAs that share the MMA, and the rows of A and B each one holds.
  static constexpr int ctas = int(Group), a_rows = M / ctas, b_rows = N / ctas;
  static_assert(Group == sm100::CtaGroup::two || M == 128,
                "this tcgen05.mma atom has M = 128 (row i of D in TMEM lane i); M = 64 is not supported yet");
  static_assert(Group == sm100::CtaGroup::one || M == 256,
                "this 2-CTA tcgen05.mma atom has M = 256 (128 rows in each CTA); M = 128 across a pair is not supported yet");
  static_assert(Group == sm100::CtaGroup::two ? (N % 16 == 0 && N >= 32 && N <= 256) : (N % 8 == 0 && N >= 8 && N <= 256),
                "tcgen05.mma has N a multiple of 8 from 8 to 256 (cta_group::1, M = 128) or of 16 from 32 to 256 (cta_group::2, M = 256)");
  static_assert(sizeof(T) == 2 || (AMajor == UmmaMajor::k && BMajor == UmmaMajor::k),
                "tcgen05.mma reads TF32, FP8 and 8-bit integer operands MN-major too, but this atom takes them K-major only");
  static constexpr bool integer = std::is_integral_v<T>;

  /// The instruction descriptor: f32 accumulation (s32 for integers), the operands' types and
  /// majorness, M and N.
  static uint32_t instruction_descriptor() {
    const sm100::OperandType t = detail::umma_operand_type<T>();
    return sm100::InstrDescriptor{.kind = sm100::kind_of(t), .a = t, .b = t,
                                  .d = integer ? sm100::AccumulatorType::s32 : sm100::AccumulatorType::f32, .a_major = AMajor,
                                  .b_major = BMajor, .m = M, .n = N}
        .encode();
  }
  static sm100::MmaKind kind() { return sm100::kind_of(detail::umma_operand_type<T>()); }
};

template <class T, int M, int N, UmmaMajor AMajor = UmmaMajor::k, UmmaMajor BMajor = UmmaMajor::k>
using SM100_MMA_F16BF16_SS = Tcgen05MmaSS<T, M, N, AMajor, BMajor>;
template <class T, int M, int N, UmmaMajor AMajor = UmmaMajor::k, UmmaMajor BMajor = UmmaMajor::k>
using SM100_MMA_F16BF16_2x1SM_SS = Tcgen05MmaSS<T, M, N, AMajor, BMajor, sm100::CtaGroup::two>;
template <class T, int M, int N>
using SM100_MMA_F8F6F4_SS = Tcgen05MmaSS<T, M, N>;
template <int M, int N>
using SM100_MMA_TF32_SS = Tcgen05MmaSS<float, M, N>;
template <class T, int M, int N>
  requires(std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>)
using SM100_MMA_S8_SS = Tcgen05MmaSS<T, M, N>;

/// The operands of one atom: `a` (M x K) and `b` (N x K) tiles, checked as the atom reads them;
/// for a pair, this CTA's halves (a_rows x K and b_rows x K).
template <class T, int M, int N, UmmaMajor AM, UmmaMajor BM, sm100::CtaGroup G>
std::pair<UmmaOperand<T>, UmmaOperand<T>> make_umma_operands(const Tcgen05MmaSS<T, M, N, AM, BM, G>&, const Tensor<T>& a,
                                                               const Tensor<T>& b, detail::Where w = detail::Where::current()) {
  using Atom = Tcgen05MmaSS<T, M, N, AM, BM, G>;
  UmmaOperand<T> A(a, Atom::a_rows, "A", w), B(b, Atom::b_rows, "B", w);
  if (A.major() != AM || B.major() != BM)
    detail::fail(std::string("the atom reads ") + (A.major() != AM ? "A" : "B") + " " +
                     ((A.major() != AM ? AM : BM) == UmmaMajor::k ? "K-major" : "MN-major") + ", but the tile is " +
                     ((A.major() != AM ? A.major() : B.major()) == UmmaMajor::k ? "K-major" : "MN-major"),
                 w);
  if (A.k_steps() != B.k_steps())
    detail::fail("A and B cover different K: " + std::to_string(A.k_steps()) + " and " + std::to_string(B.k_steps()) + " MMA steps", w);
  return {A, B};
}

/// D (TMEM at `d`) = A * B + (accumulate ? D : 0) over the operands' K: one tcgen05.mma per K
/// step, the first with `accumulate`, the rest accumulating. Called by one thread (of the even
/// CTA, for a pair).
template <class T, int M, int N, UmmaMajor AM, UmmaMajor BM, sm100::CtaGroup G>
void gemm(const Tcgen05MmaSS<T, M, N, AM, BM, G>& atom, const Value<uint32_t>& d, const UmmaOperand<T>& a, const UmmaOperand<T>& b,
          const Bool& accumulate, detail::Where w = detail::Where::current()) {
  using Atom = Tcgen05MmaSS<T, M, N, AM, BM, G>;
  if (a.major() != AM || b.major() != BM || a.k_steps() != b.k_steps())
    detail::fail("gemm's operands are not the atom's (make them with make_umma_operands)", w);
  const uint32_t idesc = Atom::instruction_descriptor();
  for (int s = 0; s < a.k_steps(); ++s)
    detail::tcgen05_mma(Atom::kind(), d.id(), a.descriptor(s, w).id(), b.descriptor(s, w).id(), idesc,
                        (s == 0 ? accumulate : Bool(true)).id(), G, w);
}

/// tcgen05.mma kind::f8f6f4 with A and B of any two of the formats E4M3, E5M2, E2M3, E3M2 and
/// E2M1 (CuTe's SM100_MMA_F8F6F4_SS<a_type, b_type, ...>), M = 128, both K-major (FP6 and FP4
/// are read K-major only). Every element takes a byte of shared memory: FP8 as it is, FP6 and
/// FP4 in the unpacked forms (a row's 16 values packed in its first 12 or 8 bytes and padded to
/// 16, as a TMA box of 16U6_ALIGN16B / 16U4_ALIGN16B leaves them), so the tiles, their swizzles
/// and their descriptors are FP8's, of bytes; only the instruction descriptor names the formats.
template <MxType A, MxType B, int M, int N>
struct Tcgen05MmaF8F6F4SS {
  using element_type = uint8_t;
  static constexpr int m = M, n = N, k = 32;
  static constexpr UmmaMajor a_major = UmmaMajor::k, b_major = UmmaMajor::k;
  static constexpr int ctas = 1, a_rows = M, b_rows = N;
  static_assert(M == 128, "this tcgen05.mma atom has M = 128 (row i of D in TMEM lane i)");
  static_assert(N % 8 == 0 && N >= 8 && N <= 256, "tcgen05.mma has N a multiple of 8 from 8 to 256 (cta_group::1, M = 128)");

  static uint32_t instruction_descriptor() {
    return sm100::InstrDescriptor{.kind = sm100::MmaKind::f8f6f4, .a = operand_type(A), .b = operand_type(B),
                                  .d = sm100::AccumulatorType::f32, .m = M, .n = N}
        .encode();
  }
  static sm100::MmaKind kind() { return sm100::MmaKind::f8f6f4; }

 private:
  static constexpr sm100::OperandType operand_type(MxType t) {
    switch (t) {
      case MxType::e4m3: return sm100::OperandType::e4m3;
      case MxType::e5m2: return sm100::OperandType::e5m2;
      case MxType::e3m2: return sm100::OperandType::e3m2;
      case MxType::e2m3: return sm100::OperandType::e2m3;
      case MxType::e2m1: return sm100::OperandType::e2m1;
    }
    return sm100::OperandType::e4m3;
  }
};

/// Its operands: `a` (M x K) and `b` (N x K) byte tiles, checked as the atom reads them.
template <MxType A, MxType B, int M, int N>
std::pair<UmmaOperand<uint8_t>, UmmaOperand<uint8_t>> make_umma_operands(const Tcgen05MmaF8F6F4SS<A, B, M, N>&, const Tensor<uint8_t>& a,
                                                                         const Tensor<uint8_t>& b, detail::Where w = detail::Where::current()) {
  UmmaOperand<uint8_t> ta(a, M, "A", w), tb(b, N, "B", w);
  if (ta.major() != UmmaMajor::k || tb.major() != UmmaMajor::k)
    detail::fail(std::string("kind::f8f6f4 with FP6 or FP4 reads ") + (ta.major() != UmmaMajor::k ? "A" : "B") +
                     " K-major, but the tile is MN-major",
                 w);
  if (ta.k_steps() != tb.k_steps())
    detail::fail("A and B cover different K: " + std::to_string(ta.k_steps()) + " and " + std::to_string(tb.k_steps()) + " MMA steps", w);
  return {ta, tb};
}
/// D (TMEM at `d`) = A * B + (accumulate ? D : 0) over the operands' K, as gemm() of Tcgen05MmaSS.
template <MxType A, MxType B, int M, int N>
void gemm(const Tcgen05MmaF8F6F4SS<A, B, M, N>&, const Value<uint32_t>& d, const UmmaOperand<uint8_t>& a, const UmmaOperand<uint8_t>& b,
          const Bool& accumulate, detail::Where w = detail::Where::current()) {
  using Atom = Tcgen05MmaF8F6F4SS<A, B, M, N>;
  if (a.k_steps() != b.k_steps()) detail::fail("gemm's operands are not the atom's (make them with make_umma_operands)", w);
  const uint32_t idesc = Atom::instruction_descriptor();
  for (int s = 0; s < a.k_steps(); ++s)
    detail::tcgen05_mma(Atom::kind(), d.id(), a.descriptor(s, w).id(), b.descriptor(s, w).id(), idesc,
                        (s == 0 ? accumulate : Bool(true)).id(), sm100::CtaGroup::one, w);
}

/// The mbarrier at `bar` gets one arrival once every tcgen05.mma this thread issued is done.
inline void tcgen05_commit(const Pointer<uint64_t>& bar, detail::Where w = detail::Where::current()) {
  detail::tcgen05_commit(bar.id(), w);
}
/// For a pair's MMAs (cta_group::2): the mbarrier at `bar`'s offset in each CTA of the cluster
/// whose bit is set in `cta_mask` (bit r: rank r) gets the arrival.
inline void tcgen05_commit(const Pointer<uint64_t>& bar, const Operand<int32_t>& cta_mask) {
  detail::tcgen05_commit_multicast(bar.id(), cta_mask.id, cta_mask.where);
}

}  // namespace cutejit
