/** \file
 * stmatrix (sm_90 and newer): a warp stores one, two or four 8 x 8 matrices of 16-bit values
 * to shared memory in one instruction, each matrix row a 16-byte write. It is the fast way from
 * MMA fragments to a shared-memory tile (the first half of a TMA-store epilogue):
 *  - register j of lane l holds row l / 4 of matrix j, columns 2 (l % 4) and 2 (l % 4) + 1,
 *    the lower column in the low half (`pack_pair`);
 *  - lane l gives the address of row l % 8 of matrix l / 8 (lanes past 8 x Count: ignored);
 *  - `transposed`: each register's pair goes down a column instead (row and column swap), for a
 *    column-major tile.
 * The rows may be anywhere (a swizzled tile's rows are scattered 16-byte chunks), but each must
 * be 16-byte aligned.
 *
 * `StMatrix<Count>` is stmatrix as a copy atom for a TiledMma's C fragment (CuTe's
 * make_tiled_copy_C with SM90_U32x{Count}_STSM_N): `make_tiled_copy_C(StMatrix<4>{}, tiled)`
 * derives from the atom's C layout which row each lane addresses (checked lane by lane: the
 * fragment must be made of 8 x 8 matrices, one per register of packed pairs), its
 * `partition_D(sC)` gives each thread its row addresses in a shared C tile, and
 * `copy(r2s, fragment, dst)` stores a 16-bit fragment (the accumulators converted) with one
 * stmatrix per `Count` registers. For wgmma's m64nN C that is one stmatrix.x4 per 16 columns.
 */
#pragma once

#include <array>
#include <optional>

#include "cutejit/atom/sm90/wgmma.hpp"
#include "cutejit/atom/tiled_mma.hpp"
#include "cutejit/tensor/fragment.hpp"
#include "cutejit/tensor/tensor.hpp"

namespace cutejit {

/// `Count` (1, 2 or 4) 8 x 8 matrices of a 16-bit type from the warp's registers to shared
/// memory at this lane's row address `row` (see above).
template <Element T, size_t Count>
  requires(sizeof(T) == 2 && (Count == 1 || Count == 2 || Count == 4))
void stmatrix(const Pointer<T>& row, const std::array<Value<uint32_t>, Count>& registers, bool transposed = false,
              detail::Where w = detail::Where::current()) {
  std::array<detail::ValueId, Count> ids;
  for (size_t j = 0; j < Count; ++j) ids[j] = registers[j].id();
  detail::stmatrix(row.id(), ids, transposed, w);
}

namespace detail {
/// The tiled MMA with C's thread-value layout replaced by where stmatrix.x{count} writes it:
/// ((thread), (8, G)): lane 8 j + r of each warp gives the address of row r of matrix j of
/// each group of `count` registers (G groups), a row's 8 values following. Fails unless C's
/// fragment is made of such matrices (register p: values 2p, 2p + 1, neighbours in a row).
TiledMmaShape stmatrix_destination(const TiledMmaShape& s, int count, Where w);
/// Checks that a partition of stmatrix destinations writes 16 contiguous bytes at each row address.
void check_stmatrix_rows(const Layout& row, const std::optional<Swizzle>& swizzle, Where w);
}  // namespace detail

/// stmatrix.x{Count} as a copy atom for a TiledMma's C fragment (CuTe SM90_U32x{Count}_STSM_N).
template <int Count>
  requires(Count == 1 || Count == 2 || Count == 4)
struct StMatrix {
  static constexpr int count = Count;
};

/// stmatrix tiled like a TiledMma's C: each thread's destinations are the row addresses it gives.
template <class Op, int Count>
class TiledStMatrix {
 public:
  TiledStMatrix(const TiledMma<Op>& tiled, detail::Where w) : shape_(detail::stmatrix_destination(tiled.shape(), Count, w)) {}

  class Slice {
   public:
    Slice(detail::TiledMmaShape shape, IntTuple thread) : shape_(std::move(shape)), thread_(std::move(thread)) {}
    /// This thread's row addresses in a shared (M, N) tile of C: ((8, G), RestM, RestN), the
    /// 8 values one address covers, for each group of Count registers.
    template <Element T>
    Tensor<T> partition_D(const Tensor<T>& t, detail::Where w = detail::Where::current()) const {
      return t.transform([&](const Layout& l) { return detail::mma_partition(shape_, MmaOperand::c, l, thread_.leaf(), w); });
    }
    /// The fragment the copy reads is the TiledMma's own (CuTe retile_S): unchanged.
    template <Element T>
    const Tensor<T>& retile_S(const Tensor<T>& fragment) const { return fragment; }

   private:
    detail::TiledMmaShape shape_;
    IntTuple thread_;
  };
  Slice get_slice(const Int& thread) const { return Slice(shape_, IntTuple(thread)); }

 private:
  detail::TiledMmaShape shape_;
};

template <int Count, class Op>
TiledStMatrix<Op, Count> make_tiled_copy_C(StMatrix<Count>, const TiledMma<Op>& tiled, detail::Where w = detail::Where::current()) {
  return TiledStMatrix<Op, Count>(tiled, w);
}

/// dst (a partition_D of a shared C tile) = fragment (a 16-bit (V, RestM, RestN) C fragment of
/// the TiledMma): one stmatrix per group of Count packed registers of each block.
template <class Op, int Count, Element T>
  requires(sizeof(T) == 2)
void copy(const TiledStMatrix<Op, Count>&, const Tensor<T>& fragment, const Tensor<T>& dst, detail::Where w = detail::Where::current()) {
  if (dst.data().space() != Space::shared) detail::fail("stmatrix stores to shared memory; this copy's destination is not shared", w);
  if (rank(dst) != 3 || rank(fragment) != 3 || rank(mode(dst.layout(), 0)) != 2 ||
      size(mode(fragment.layout(), 0)).value() != 2 * Count * size(mode(mode(dst.layout(), 0), 1)).value() ||
      size(mode(dst.layout(), 1)) != size(mode(fragment.layout(), 1)) || size(mode(dst.layout(), 2)) != size(mode(fragment.layout(), 2)))
    detail::fail("a stmatrix copy goes from the TiledMma's C fragment of a tile to partition_D of a shared tile of the same shape; got " +
                     to_string(fragment.layout()) + " and " + to_string(dst.layout()),
                 w);
  detail::check_stmatrix_rows(mode(mode(dst.layout(), 0), 0), dst.swizzle(), w);
  const int64_t groups = size(mode(mode(dst.layout(), 0), 1)).value();
  // A compact register fragment is read as the 32-bit registers of its pairs: values written
  // there as pack_pair(cast, cast) are one cvt.rn.bf16x2.f32 each, wherever the copy is.
  std::optional<Tensor<uint32_t>> packed;
  if (fragment.data().space() == Space::local && coalesce(mode(fragment.layout(), 0)) == Layout(size(mode(fragment.layout(), 0)), 1))
    packed = recast<uint32_t>(fragment, w);
  for (int64_t n = 0; n < size(mode(dst.layout(), 2)).value(); ++n)
    for (int64_t m = 0; m < size(mode(dst.layout(), 1)).value(); ++m)
      for (int64_t g = 0; g < groups; ++g) {
        std::array<Value<uint32_t>, Count> registers;
        for (int64_t j = 0; j < Count; ++j) {
          int64_t p = g * Count + j;  // register p: values 2p and 2p + 1
          registers[size_t(j)] = packed ? (*packed)(IntTuple(p), IntTuple(m), IntTuple(n), w).read(w)
                                        : pack_pair(fragment(IntTuple(2 * p), IntTuple(m), IntTuple(n), w).read(w),
                                                    fragment(IntTuple(2 * p + 1), IntTuple(m), IntTuple(n), w).read(w), w);
        }
        stmatrix(dst.pointer_at(IntTuple{IntTuple{0, g}, m, n}, w), registers, false, w);
      }
}

}  // namespace cutejit
