/** \file
 * The warp-level copies of sm_80 and newer as atoms:
 *   - `CpAsync<Bytes>`: cp.async of 4, 8 or 16 bytes per instruction, global -> shared,
 *     asynchronous until `cp_async_wait<N>()`; `copy_if` zero-fills what its predicate excludes
 *     (residue tiles read nothing past the tensor). `cp_async_fence()` commits a group.
 *   - `make_tiled_copy(atom, threads, values)`: the atom repeated over a thread layout with a
 *     value layout per thread (CuTe make_tiled_copy); `get_slice(t).partition_S/D` give a
 *     thread's source and destination, and `copy(tiled, src, dst)` moves them.
 *   - `ldmatrix<Count, Transpose>(row)`: a warp's Count 8 x 8 matrices of 16-bit values from
 *     shared memory, each register two neighbouring values (the layout mma.sync's A and B
 *     fragments use).
 *   - `make_tiled_copy_A/B(LdMatrix<Count>{}, tiled_mma)`: ldmatrix as the copy that fills a
 *     TiledMma's A or B fragments from shared memory (CuTe's make_tiled_copy_A with
 *     SM75_U32x4_LDSM_N): `partition_S(sA)` gives each lane its row addresses, laid out like
 *     the fragment (V, RestM, RestK) with V the 16 bytes at one address, and
 *     `copy(s2r, src, fragment)` loads the fragment with one ldmatrix per (RestM, RestK).
 *   - `LdMatrix<Count, false, LdMatrixSource::b4x16_p64>` (and `b6x16_p32`): the Blackwell a and
 *     f targets' ldmatrix.m8n16 that unpacks FP4 (FP6) operands, for byte fragments such as
 *     kind::f8f6f4's (CuTe SM100_SU4_DU8x16_x{Count}_LDSM_N, SM100_SU6_DU8x16_x{Count}_LDSM_N).
 *     In shared memory each row of 16 values is packed into its first 8 (12) bytes and padded
 *     to 16 (the TMA's 16U4_ALIGN16B and 16U6_ALIGN16B forms), so a tile of them is laid out as
 *     a tile of bytes, one 16-byte row per 16 values; each value arrives in the low bits of its
 *     own byte. A TiledMma atom that reads FP4 higher in its bytes (kind::f8f6f4
 *     and kind::mxf8f6f4: bits 2-5, `Op::unpacked_fp4_shift`) gets its registers shifted there
 *     by the copy, four values a shift, so the fragment is the atom's as it arrives.
 *   - `LdMatrix<Count, true>` on byte fragments (and `LdMatrix<Count, true, LdMatrixSource::...>`):
 *     the Blackwell a and f targets' ldmatrix.m16n16.x{Count}.trans (.b8, or unpacking FP4 /
 *     FP6 rows as above), for 8-bit (4-, 6-bit) operands stored M- or N-major (CuTe
 *     SM100_U8x8_LDSM_T, SM100_U8x16_LDSM_T, SM100_SU4/SU6_DU8x16_x{Count}_LDSM_T). One x2
 *     is a whole A fragment of kind::f8f6f4, or two B fragments side by side along N (the
 *     copy then fills two RestN blocks at once, so the TiledMma has one atom along N).
 */
#pragma once

#include <array>

#include "cutejit/arch/sm80.hpp"
#include "cutejit/atom/tiled_mma.hpp"
#include "cutejit/tensor/copy.hpp"
#include "cutejit/tensor/partition.hpp"

namespace cutejit {

/// cp.async of `Bytes` per instruction (16: L2 only, .cg; 4 and 8: through L1, .ca).
template <int Bytes>
  requires(Bytes == 4 || Bytes == 8 || Bytes == 16)
struct CpAsync {
  static constexpr int bytes = Bytes;
};

/// Closes the group of this thread's cp.async copies issued since the last fence.
inline void cp_async_fence(detail::Where w = detail::Where::current()) { detail::cp_async_commit_group(w); }
/// Waits until at most `Pending` of this thread's groups are in flight; then a barrier makes
/// the other threads' copies visible too.
template <int Pending = 0>
void cp_async_wait(detail::Where w = detail::Where::current()) {
  detail::cp_async_wait_group(Pending, w);
}
/// The same with a count known only when the kernel is traced (a Constexpr stage count).
inline void cp_async_wait(int pending, detail::Where w = detail::Where::current()) { detail::cp_async_wait_group(pending, w); }

namespace detail {
/// One cp.async per group of `Bytes / sizeof(T)` elements that are contiguous and aligned on
/// both sides (the copy planner's groups), predicated with zero-fill when `coords` is given.
template <int Bytes, Element T>
void cp_async_planned(const Tensor<T>& src, const Tensor<T>& dst, const CoordTensor* coords, const IntTuple* bound, Where w) {
  constexpr int64_t vector = Bytes / int64_t(sizeof(T));
  static_assert(vector >= 1, "a cp.async moves at least one element");
  if (src.data().space() != Space::global || dst.data().space() != Space::shared)
    fail("cp.async copies from global to shared memory; this copy's source is " +
             std::string(src.data().space() == Space::global ? "global" : "not global") + " and its destination is " +
             (dst.data().space() == Space::shared ? "shared" : "not shared"),
         w);
  CopyPlan p = plan_copy(copy_side(src), copy_side(dst), int(sizeof(T)), coords, bound, w);
  if (p.vector < vector) {
    // cp.async moves 4, 8 or 16 bytes; a shorter provable run can only go through copy().
    const int64_t run = p.vector * int64_t(sizeof(T));
    fail("cannot prove that this copy moves aligned, contiguous runs of " + std::to_string(Bytes) + " bytes on both sides (the " +
             "longest provable run is " + std::to_string(run) + " bytes); " +
             (run >= 4 ? "use CpAsync<" + std::to_string(run) + "> or align the tiles"
                       : std::string("cp.async moves at least 4 bytes: align the tiles, or copy() without cp.async")),
         w);
  }
  Integer groups = size(p.src_groups) * (p.vector / vector);
  if (!groups.is_static()) fail("a cp.async copy needs a static number of elements per thread", w);
  for (int64_t g = 0; g < groups.value(); ++g) {
    // Group g: run g / (p.vector / vector), part g % (p.vector / vector) of it.
    int64_t run = g / (p.vector / vector), part = g % (p.vector / vector);
    Integer s = p.src_groups(run) + part * vector, d = p.dst_groups(run) + part * vector;
    ValueId src_bytes{};
    if (coords) {
      std::vector<IntTuple> c;
      for (size_t k = 0; k < p.coord_groups.size(); ++k)
        c.emplace_back(coords->origin()[k] + p.coord_groups[k](run) + (p.coord_in_group[k](part * vector)));
      Bool inside = elem_less(c.size() == 1 ? c[0] : IntTuple(std::move(c)), *bound, w);
      src_bytes = select(inside, Operand<int32_t>(Bytes, w), Operand<int32_t>(0, w)).id();
    }
    cp_async(dst.address(d, w).id(), src.address(s, w).id(), Bytes, src_bytes, w);
  }
}
}  // namespace detail

/// dst = src (a thread's global and shared partitions) with cp.async.
template <int Bytes, Element T>
void copy(CpAsync<Bytes>, const Tensor<T>& src, const Tensor<T>& dst, detail::Where w = detail::Where::current()) {
  detail::cp_async_planned<Bytes>(src, dst, nullptr, nullptr, w);
}
/// The same where elem_less(coords(i), bound); the other elements of dst are zero-filled.
template <int Bytes, Element T>
void copy_if(CpAsync<Bytes>, const CoordTensor& coords, const IntTuple& bound, const Tensor<T>& src, const Tensor<T>& dst,
             detail::Where w = detail::Where::current()) {
  detail::cp_async_planned<Bytes>(src, dst, &coords, &bound, w);
}

template <class Atom>
class ThrCopy;

/// A copy atom repeated over a thread layout, each thread moving a value layout's elements
/// (CuTe make_tiled_copy(atom, thr_layout, val_layout)).
template <class Atom>
class TiledCopy {
 public:
  TiledCopy(const Layout& threads, const Layout& values) : tv_(make_layout_tv(threads, values)), threads_(cutejit::size(threads).value()) {}
  /// The tile one step of the copy covers, and its (thread, value) -> tile index layout.
  const Tile& tiler() const { return tv_.tiler; }
  const Layout& layout_tv() const { return tv_.tv; }
  int64_t size() const { return threads_; }
  ThrCopy<Atom> get_slice(const Int& thread) const { return ThrCopy<Atom>(*this, thread); }

 private:
  TVLayout tv_;
  int64_t threads_;
};

template <class Atom>
TiledCopy<Atom> make_tiled_copy(Atom, const Layout& threads, const Layout& values) {
  return TiledCopy<Atom>(threads, values);
}

/// One thread's view of a TiledCopy: its values of each tile-sized block of a tensor, as
/// (V, RestM, RestN, ...) — the block's values first, then which block.
template <class Atom>
class ThrCopy {
 public:
  ThrCopy(const TiledCopy<Atom>& tiled, Int thread) : tiled_(tiled), thread_(thread) {}
  template <class Tn>
  Tn partition_S(const Tn& src) const { return partition(src); }
  template <class Tn>
  Tn partition_D(const Tn& dst) const { return partition(dst); }

 private:
  template <class Tn>
  Tn partition(const Tn& t) const {
    // ((tile), (rest)) -> the thread's values of the tile, for every rest coordinate.
    Tn blocks = zipped_divide(t, tiled_.tiler());
    return composition(blocks, Tile{tiled_.layout_tv(), _}).slice(IntTuple{IntTuple{IntTuple(thread_), _}, _});
  }
  TiledCopy<Atom> tiled_;
  Int thread_;
};

/// A tiled copy of a thread's partitions with the atom.
template <class Atom, Element T>
void copy(const TiledCopy<Atom>&, const Tensor<T>& src, const Tensor<T>& dst, detail::Where w = detail::Where::current()) {
  copy(Atom{}, src, dst, w);
}
template <class Atom, Element T>
void copy_if(const TiledCopy<Atom>&, const CoordTensor& coords, const IntTuple& bound, const Tensor<T>& src, const Tensor<T>& dst,
             detail::Where w = detail::Where::current()) {
  copy_if(Atom{}, coords, bound, src, dst, w);
}

/// ldmatrix.sync.aligned.m8n8.x{Count}[.trans].shared.b16: lane l gives the address of row
/// l % 8 of matrix l / 8 (16-byte aligned, in shared memory); register i holds this lane's two
/// neighbouring values of matrix i: row lane / 4, columns 2 (lane % 4) + {0, 1} (with
/// `Transpose`, the matrix is read transposed).
template <int Count, bool Transpose = false, Element T>
  requires((Count == 1 || Count == 2 || Count == 4) && sizeof(T) == 2)
std::array<Value<uint32_t>, Count> ldmatrix(const Pointer<T>& row, detail::Where w = detail::Where::current()) {
  std::vector<detail::ValueId> r = detail::ldmatrix(row.id(), Count, Transpose, w);
  std::array<Value<uint32_t>, Count> out;
  for (int i = 0; i < Count; ++i) out[size_t(i)] = Value<uint32_t>(r[size_t(i)]);
  return out;
}

/// What a row of an ldmatrix holds in shared memory: 16 bytes of the fragment's values (the
/// m8n8 forms), or 16 FP4 / FP6 values packed and padded to 16 bytes, unpacked to a byte each.
enum class LdMatrixSource { b16, b4x16_p64, b6x16_p32 };

/// ldmatrix.x{Count} as a copy atom for a TiledMma's operand fragments (CuTe SM75_U32x{Count}_LDSM_N);
/// with `Transpose`, ldmatrix.trans for operands stored M- or N-major (SM75_U16x{2 Count}_LDSM_T):
/// B = V^T of attention's P V, or a row-major B of a GEMM, and on byte fragments the m16n16
/// form (SM100_U8x{8 Count}_LDSM_T); with another `Source`, the unpacking ldmatrix.m8n16
/// (SM100_SU4_DU8x16_LDSM_N, SM100_SU6_DU8x16_LDSM_N), transposed ldmatrix.m16n16 (_LDSM_T).
template <int Count, bool Transpose = false, LdMatrixSource Source = LdMatrixSource::b16>
  requires(Count == 1 || Count == 2 || Count == 4) && (Source == LdMatrixSource::b16 || !Transpose || Count <= 2)
struct LdMatrix {
  static constexpr int count = Count;
  static constexpr bool transpose = Transpose;
  static constexpr LdMatrixSource source = Source;
};

template <int Count>
using SM100_SU4_DU8x16_LDSM_N = LdMatrix<Count, false, LdMatrixSource::b4x16_p64>;
template <int Count>
using SM100_SU6_DU8x16_LDSM_N = LdMatrix<Count, false, LdMatrixSource::b6x16_p32>;
using SM100_U8x8_LDSM_T = LdMatrix<1, true>;   ///< on byte fragments: ldmatrix.m16n16.x1.trans.b8
using SM100_U8x16_LDSM_T = LdMatrix<2, true>;  ///< on byte fragments: ldmatrix.m16n16.x2.trans.b8
template <int Count>
using SM100_SU4_DU8x16_LDSM_T = LdMatrix<Count, true, LdMatrixSource::b4x16_p64>;
template <int Count>
using SM100_SU6_DU8x16_LDSM_T = LdMatrix<Count, true, LdMatrixSource::b6x16_p32>;

/// ldmatrix tiled like a TiledMma's A or B: each thread's sources are the row addresses it gives.
template <class Op, int Count, bool Transpose, LdMatrixSource Source = LdMatrixSource::b16>
class TiledLdMatrix {
 public:
  TiledLdMatrix(const TiledMma<Op>& tiled, MmaOperand x, int element_bytes, detail::Where w)
      : x_(x),
        shape_(detail::ldmatrix_source(tiled.shape(), x, Count, Transpose, element_bytes, w)),
        blocks_per_load_(int(shape_.atom_n / tiled.shape().atom_n)) {}

  /// The fragment's (RestP) blocks one load fills: 2 for the B fragments of ldmatrix.m16n16.
  int blocks_per_load() const { return blocks_per_load_; }

  class Slice {
   public:
    Slice(MmaOperand x, detail::TiledMmaShape shape, IntTuple thread) : x_(x), shape_(std::move(shape)), thread_(std::move(thread)) {}
    /// This thread's row addresses in a shared tile of the operand ((M, K) for A, (N, K) for B):
    /// (V, RestP, RestQ), V the values one address covers.
    template <Element T>
    Tensor<T> partition_S(const Tensor<T>& t, detail::Where w = detail::Where::current()) const {
      return t.transform([&](const Layout& l) { return detail::mma_partition(shape_, x_, l, thread_.leaf(), w); });
    }
    /// The fragment the copy fills is the TiledMma's own (CuTe retile_D): unchanged.
    template <Element T>
    const Tensor<T>& retile_D(const Tensor<T>& fragment) const { return fragment; }

   private:
    MmaOperand x_;
    detail::TiledMmaShape shape_;
    IntTuple thread_;
  };
  Slice get_slice(const Int& thread) const { return Slice(x_, shape_, IntTuple(thread)); }

 private:
  MmaOperand x_;
  detail::TiledMmaShape shape_;
  int blocks_per_load_;
};

template <int Count, bool Transpose, LdMatrixSource Source, class Op>
TiledLdMatrix<Op, Count, Transpose, Source> make_tiled_copy_A(LdMatrix<Count, Transpose, Source>, const TiledMma<Op>& tiled,
                                                              detail::Where w = detail::Where::current()) {
  return TiledLdMatrix<Op, Count, Transpose, Source>(tiled, MmaOperand::a, int(sizeof(typename Op::ElementA)), w);
}
template <int Count, bool Transpose, LdMatrixSource Source, class Op>
TiledLdMatrix<Op, Count, Transpose, Source> make_tiled_copy_B(LdMatrix<Count, Transpose, Source>, const TiledMma<Op>& tiled,
                                                              detail::Where w = detail::Where::current()) {
  return TiledLdMatrix<Op, Count, Transpose, Source>(tiled, MmaOperand::b, int(sizeof(typename Op::ElementB)), w);
}

/// fragment = the operand at `src` (a partition_S of a shared tile): one ldmatrix per block.
template <class Op, int Count, bool Transpose, LdMatrixSource Source, Element T>
void copy(const TiledLdMatrix<Op, Count, Transpose, Source>& tiled, const Tensor<T>& src, const Tensor<T>& fragment,
          detail::Where w = detail::Where::current()) {
  static_assert(sizeof(T) <= 4 && (sizeof(T) <= 2 || !Transpose), "ldmatrix loads 8-, 16- and 32-bit values, ldmatrix.trans 8- and 16-bit ones");
  static_assert(Source == LdMatrixSource::b16 || sizeof(T) == 1, "an unpacking ldmatrix fills fragments of bytes");
  constexpr bool m16n16 = Transpose && sizeof(T) == 1;  // ldmatrix.m16n16.trans: two registers a matrix
  constexpr int64_t per_register = 4 / int64_t(sizeof(T)), registers = m16n16 ? 2 * Count : Count;
  const int64_t blocks = tiled.blocks_per_load(), values_per_block = registers * per_register / blocks;
  if (src.data().space() != Space::shared) detail::fail("ldmatrix loads from shared memory; this copy's source is not shared", w);
  if (rank(src) != 3 || rank(fragment) != 3 || size(mode(fragment.layout(), 0)).value() != values_per_block ||
      size(mode(src.layout(), 1)).value() * blocks != size(mode(fragment.layout(), 1)).value() ||
      size(mode(src.layout(), 2)) != size(mode(fragment.layout(), 2)))
    detail::fail("an ldmatrix copy goes from partition_S of a shared tile to the TiledMma's fragment of the same tile; got " +
                     to_string(src.layout()) + " and " + to_string(fragment.layout()),
                 w);
  detail::check_ldmatrix_rows(mode(src.layout(), 0), src.swizzle(), int(sizeof(T)), Transpose, w);
  const int bits = Source == LdMatrixSource::b4x16_p64 ? 4 : Source == LdMatrixSource::b6x16_p32 ? 6 : 8;
  for (int64_t j = 0; j < size(mode(src.layout(), 2)).value(); ++j)
    for (int64_t i = 0; i < size(mode(src.layout(), 1)).value(); ++i) {
      const detail::ValueId row = src.pointer_at(IntTuple{0, i, j}, w).id();
      std::vector<detail::ValueId> loaded = m16n16                         ? detail::ldmatrix_transposed_bytes(row, Count, bits, w)
                                            : Source == LdMatrixSource::b16 ? detail::ldmatrix(row, Count, Transpose, w)
                                                                            : detail::ldmatrix_unpacked(row, Count, bits, w);
      if constexpr (Source == LdMatrixSource::b4x16_p64 && requires { Op::unpacked_fp4_shift; })
        for (detail::ValueId& r : loaded) r = (Value<uint32_t>(r) << uint32_t(Op::unpacked_fp4_shift)).id();
      std::vector<detail::ValueId> values = detail::unpack_registers(loaded, dtype_v<T>, w);
      // Two blocks a load (m16n16's B): register 2r + h is register r of block h.
      for (int64_t v = 0; v < registers * per_register; ++v) {
        const int64_t reg = v / per_register, h = reg % blocks, block_value = (reg / blocks) * per_register + v % per_register;
        fragment(IntTuple(block_value), IntTuple(blocks * i + h), IntTuple(j), w) = Value<T>(values[size_t(v)]);
      }
    }
}

}  // namespace cutejit
