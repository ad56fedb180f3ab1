/** \file
 * MMA atoms as layouts, and their tiling over warps (CuTe's MMA_Atom / TiledMMA / ThrMMA).
 *
 * An MMA operation type (atom/sm80/mma.hpp, atom/sm90/wgmma.hpp) carries its shape M x N x K,
 * element types, threads, and three thread-value layouts, in CuTe's notation:
 *   layout_a: (thread, value) -> index in the M x K tile of A (column-major, m + M * k)
 *   layout_b: (thread, value) -> index in the N x K tile of B (n + N * k)
 *   layout_c: (thread, value) -> index in the M x N tile of C (m + M * n)
 * A value's position in its thread's fragment is its order in the instruction's registers.
 *
 * `make_tiled_mma(atom, atom_layout, permutation)` repeats the atom over a (WM, WN, WK) layout
 * of atoms, one per group of `atom.threads` threads, optionally permuting M, N and K first.
 * `tiled.get_slice(thread)` is one thread's view: `partition_C(gC)` of an (M, N) tile is
 * (V, RestM, RestN), the thread's values of each atom-sized block it owns; `partition_A(gA)` of
 * an (M, K) tile is (V, RestM, RestK) and `partition_B(gB)` of an (N, K) tile is (V, RestN,
 * RestK). `partition_fragment_X` gives register tensors of those shapes, and
 * `gemm(tiled, acc, a, b)` issues the atom over every (m, n, k) of the fragments.
 */
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cutejit/tensor/fragment.hpp"
#include "cutejit/tensor/partition.hpp"

namespace cutejit {

/// Which operand of D = A * B + C.
enum class MmaOperand { a, b, c };

namespace detail {

/// What the partitioning needs to know of a tiled MMA, kept out of the templates.
struct TiledMmaShape {
  std::string atom_name;
  int atom_m, atom_n, atom_k, atom_threads;
  Layout layout_a, layout_b, layout_c;
  Layout atom_layout;                 ///< (WM, WN, WK) -> atom instance, compact
  std::optional<Tile> permutation;    ///< (M, N, K) layouts applied before the atoms tile the data

  int threads() const;
  /// The extent of the tiled MMA along M, N or K (0, 1, 2): the permutation's, or atoms x warps.
  int64_t extent(int mode) const;
};

TiledMmaShape make_tiled_mma_shape(std::string atom_name, int m, int n, int k, int threads, Layout a, Layout b, Layout c,
                                   const Layout& atom_layout, std::optional<Tile> permutation, Where w);
/// CuTe's thrfrg_X: an (P, Q) layout of operand X as ((thread), (value, rest)) ->
/// ((AtomT, (WP, WQ)), (AtomV, (RestP, RestQ))).
Layout mma_thread_fragments(const TiledMmaShape& s, MmaOperand x, const Layout& tile, Where w);
/// Thread `thread`'s part of `tile` (operand x): (V, RestP, RestQ) and the offset of its origin.
SlicedLayout mma_partition(const TiledMmaShape& s, MmaOperand x, const Layout& tile, const Integer& thread, Where w);
/// The (V, RestP, RestQ) shape of a thread's fragment of a tile of this shape.
IntTuple mma_fragment_shape(const TiledMmaShape& s, MmaOperand x, const IntTuple& tile_shape, Where w);
/// The tiled MMA with operand x's thread-value layout replaced by where ldmatrix.x{count} reads
/// it: lane 8 j + r gives the address of row r of the 8 x 8 matrix in register j of the
/// fragment, 16 bytes of `element_bytes`-wide values (with `transpose`, the matrix's rows run
/// across the fragment's columns: the operand is stored M- or N-major). Fails unless the
/// fragment is made of such matrices, one per register (the 8-, 16- and 32-bit (TF32) A and B
/// fragments of mma.sync are; .trans takes 16-bit ones). With `transpose` and 8-bit values, the
/// Blackwell ldmatrix.m16n16.x{count}.trans: 16 x 16 matrices of bytes, two registers each, the
/// A fragment of 16 rows or two B fragments of 8 columns side by side (the result's B atom is
/// then 16 columns wide).
TiledMmaShape ldmatrix_source(const TiledMmaShape& s, MmaOperand x, int count, bool transpose, int element_bytes, Where w);
/// The tiled MMA with operand x's (A's or B's) thread-value layout replaced by its scale
/// factors' `sf`: (thread, value) -> index in the atom's (rows, blocks) scale tile, the value
/// order that of the thread's scale register (CuTe's thrfrg_SFA / thrfrg_SFB). K is counted in
/// scale blocks, `blocks` an atom, so a TiledMma partitions (M, K blocks) tiles of scales as it
/// partitions (M, K) tiles of A.
TiledMmaShape scale_factor_source(const TiledMmaShape& s, MmaOperand x, const Layout& sf, int blocks, Where w);
/// A (V, RestM, RestN) accumulator fragment as ((rows), (columns)) of the thread's values.
Layout accumulator_rowcol(const TiledMmaShape& s, const Layout& fragment, Where w);
/// How many consecutive lanes share each accumulator row (4 for every mma.sync kind).
int accumulator_row_lanes(const TiledMmaShape& s, Where w);
/// For each of `k_blocks` K blocks of `next` (one atom's K each, along prev's N) and each A value
/// v: the C value of `prev`, and the RestN block of prev's accumulator, that hold the same (row,
/// column) in the same lane, at map[kk * values + v].
std::vector<std::pair<int, int>> accumulator_to_a(const TiledMmaShape& prev, const TiledMmaShape& next, int64_t k_blocks, Where w);
/// Checks that a partition of ldmatrix sources reads 16 contiguous bytes at each row address.
void check_ldmatrix_rows(const Layout& row, const std::optional<Swizzle>& swizzle, int element_bytes, bool transpose, Where w);
/// Checks that register fragments of these shapes fit one atom per (m, n, k) and agree.
void check_gemm_fragments(const TiledMmaShape& s, const Layout& d, const Layout& a, const Layout& b, Where w);

}  // namespace detail

template <class Op>
class ThrMma;

/// An MMA atom `Op` tiled over a layout of atoms (CuTe TiledMMA).
template <class Op>
class TiledMma {
 public:
  using Atom = Op;
  TiledMma(const Layout& atom_layout, std::optional<Tile> permutation, detail::Where w)
      : shape_(detail::make_tiled_mma_shape(Op::name(), Op::m, Op::n, Op::k, Op::threads, Op::layout_a(), Op::layout_b(),
                                            Op::layout_c(), atom_layout, std::move(permutation), w)) {}

  /// Threads the tiled MMA needs (a block of at least this many).
  int size() const { return shape_.threads(); }
  /// The M x N x K block one step of the tiled MMA covers.
  int64_t tile_m() const { return shape_.extent(0); }
  int64_t tile_n() const { return shape_.extent(1); }
  int64_t tile_k() const { return shape_.extent(2); }
  const detail::TiledMmaShape& shape() const { return shape_; }

  ThrMma<Op> get_slice(const IntTuple& thread) const { return ThrMma<Op>(*this, thread); }
  ThrMma<Op> get_slice(const Int& thread) const { return ThrMma<Op>(*this, IntTuple(thread)); }

 private:
  detail::TiledMmaShape shape_;
};

/// `atom_layout`: how many atoms along (M, N, K) and in which order threads take them (e.g.
/// (2,2,1) for four warps); `permutation`: CuTe's Tile of M, N and K layouts.
template <class Op>
TiledMma<Op> make_tiled_mma(Op, const Layout& atom_layout = Layout(1, 0), std::optional<Tile> permutation = std::nullopt,
                            detail::Where w = detail::Where::current()) {
  return TiledMma<Op>(atom_layout, std::move(permutation), w);
}

/// One thread's view of a TiledMma (CuTe ThrMMA).
template <class Op>
class ThrMma {
 public:
  ThrMma(const TiledMma<Op>& tiled, IntTuple thread) : tiled_(tiled), thread_(std::move(thread)) {}

  template <class Tn>
  Tn partition_A(const Tn& a, detail::Where w = detail::Where::current()) const { return partition(MmaOperand::a, a, w); }
  template <class Tn>
  Tn partition_B(const Tn& b, detail::Where w = detail::Where::current()) const { return partition(MmaOperand::b, b, w); }
  template <class Tn>
  Tn partition_C(const Tn& c, detail::Where w = detail::Where::current()) const { return partition(MmaOperand::c, c, w); }

  /// Register fragments for this thread's part of a tile of `shape` (or of a tensor's shape).
  Tensor<typename Op::ElementA> partition_fragment_A(const IntTuple& shape, detail::Where w = detail::Where::current()) const {
    return make_rmem_tensor<typename Op::ElementA>(detail::mma_fragment_shape(tiled_.shape(), MmaOperand::a, shape, w), w);
  }
  Tensor<typename Op::ElementB> partition_fragment_B(const IntTuple& shape, detail::Where w = detail::Where::current()) const {
    return make_rmem_tensor<typename Op::ElementB>(detail::mma_fragment_shape(tiled_.shape(), MmaOperand::b, shape, w), w);
  }
  /// (of element type U: the accumulators converted, for an epilogue)
  template <Element U = typename Op::ElementC>
  Tensor<U> partition_fragment_C(const IntTuple& shape, detail::Where w = detail::Where::current()) const {
    return make_rmem_tensor<U>(detail::mma_fragment_shape(tiled_.shape(), MmaOperand::c, shape, w), w);
  }

  /// Block-scaled atoms: this thread's part of an (M, K blocks) tile of A's scale factors, or an
  /// (N, K blocks) tile of B's: (scales, RestM, RestK) and (scales, RestN, RestK), each atom's
  /// values in the order of its scale register's bytes; and register fragments of that shape.
  template <class Tn>
    requires requires { Op::layout_sfa(); }
  Tn partition_SFA(const Tn& sfa, detail::Where w = detail::Where::current()) const {
    return partition_scales(MmaOperand::a, sfa, w);
  }
  template <class Tn>
    requires requires { Op::layout_sfb(); }
  Tn partition_SFB(const Tn& sfb, detail::Where w = detail::Where::current()) const {
    return partition_scales(MmaOperand::b, sfb, w);
  }
  Tensor<uint8_t> partition_fragment_SFA(const IntTuple& shape, detail::Where w = detail::Where::current()) const
    requires requires { Op::layout_sfa(); }
  {
    return make_rmem_tensor<uint8_t>(detail::mma_fragment_shape(scales(MmaOperand::a, w), MmaOperand::a, shape, w), w);
  }
  Tensor<uint8_t> partition_fragment_SFB(const IntTuple& shape, detail::Where w = detail::Where::current()) const
    requires requires { Op::layout_sfb(); }
  {
    return make_rmem_tensor<uint8_t>(detail::mma_fragment_shape(scales(MmaOperand::b, w), MmaOperand::b, shape, w), w);
  }

 private:
  template <class Tn>
  Tn partition(MmaOperand x, const Tn& t, detail::Where w) const {
    return t.transform([&](const Layout& l) { return detail::mma_partition(tiled_.shape(), x, l, thread_.leaf(), w); });
  }
  detail::TiledMmaShape scales(MmaOperand x, detail::Where w) const {
    return detail::scale_factor_source(tiled_.shape(), x, x == MmaOperand::a ? Op::layout_sfa() : Op::layout_sfb(), Op::scales, w);
  }
  template <class Tn>
  Tn partition_scales(MmaOperand x, const Tn& t, detail::Where w) const {
    const detail::TiledMmaShape s = scales(x, w);
    return t.transform([&](const Layout& l) { return detail::mma_partition(s, x, l, thread_.leaf(), w); });
  }
  TiledMma<Op> tiled_;
  IntTuple thread_;
};

/// D = A * B + C over register fragments from partition_fragment_A/B/C: one atom for every
/// (m, n, k), k outermost. D and C may be the same tensor.
template <class Op>
void gemm(const TiledMma<Op>& tiled, const Tensor<typename Op::ElementD>& d, const Tensor<typename Op::ElementA>& a,
          const Tensor<typename Op::ElementB>& b, const Tensor<typename Op::ElementC>& c,
          detail::Where w = detail::Where::current()) {
  detail::check_gemm_fragments(tiled.shape(), d.layout(), a.layout(), b.layout(), w);
  if (c.layout() != d.layout()) detail::fail("gemm's C and D fragments must have the same layout", w);
  const int64_t rest_m = size(mode(d.layout(), 1)), rest_n = size(mode(d.layout(), 2)), rest_k = size(mode(a.layout(), 2));
  const int64_t va = size(mode(a.layout(), 0)), vb = size(mode(b.layout(), 0)), vc = size(mode(d.layout(), 0));
  auto values = [&](const auto& t, int64_t count, int64_t i, int64_t j) {
    std::vector<detail::ValueId> v;
    for (int64_t x = 0; x < count; ++x) v.push_back(t(IntTuple(x), IntTuple(i), IntTuple(j), w).read(w).id());
    return v;
  };
  for (int64_t k = 0; k < rest_k; ++k)
    for (int64_t m = 0; m < rest_m; ++m)
      for (int64_t n = 0; n < rest_n; ++n) {
        // Alternate the direction of n along m so that consecutive atoms share an operand.
        int64_t nn = m % 2 ? rest_n - 1 - n : n;
        std::vector<detail::ValueId> out = Op::call(values(a, va, m, k), values(b, vb, nn, k), values(c, vc, m, nn), w);
        for (int64_t x = 0; x < vc; ++x) d(IntTuple(x), IntTuple(m), IntTuple(nn), w) = Value<typename Op::ElementD>(out[size_t(x)]);
      }
}
/// acc += A * B.
template <class Op>
void gemm(const TiledMma<Op>& tiled, const Tensor<typename Op::ElementC>& acc, const Tensor<typename Op::ElementA>& a,
          const Tensor<typename Op::ElementB>& b, detail::Where w = detail::Where::current()) {
  static_assert(std::is_same_v<typename Op::ElementC, typename Op::ElementD>, "acc += A * B needs C and D of one type");
  gemm(tiled, acc, a, b, acc, w);
}

/// A thread's accumulator seen as rows and columns of the tile (CuTe FA2's
/// convert_layout_acc_rowcol): for m16n8 atoms tiled (4, 1, 1) over a 128 x 64 tile,
/// ((2,2),2,8) becomes ((2,2),(2,8)): the thread's 4 rows, 16 values in each. Row r of
/// every tensor of that tiling (accumulators, coordinates) is the same row of the tile.
template <class Op, class Tn>
Tn accumulator_rowcol(const TiledMma<Op>& tiled, const Tn& acc, detail::Where w = detail::Where::current()) {
  return acc.transform([&](const Layout& l) { return SlicedLayout{detail::accumulator_rowcol(tiled.shape(), l, w), 0}; });
}
/// How many consecutive lanes share each accumulator row: a row's sum or maximum is the
/// thread's own reduced with shuffle_xor over 1, 2, ... below this (4 for mma.sync).
template <class Op>
int accumulator_row_lanes(const TiledMma<Op>& tiled, detail::Where w = detail::Where::current()) {
  return detail::accumulator_row_lanes(tiled.shape(), w);
}

/// The accumulator of `prev` (V, RestM, RestN) as the A operand of `next` (V, RestM, RestK),
/// converted to next's A type, without leaving registers: FlashAttention's P = softmax(Q K^T)
/// fed to P V. next's K runs along prev's N, one K block spanning several N atoms (mma.sync) or
/// a part of one (wgmma's n64...n256 accumulator as k16 blocks); the tilings must agree along M
/// (checked).
template <class Next, class Prev>
Tensor<typename Next::ElementA> accumulator_as_A(const TiledMma<Next>& next, const TiledMma<Prev>& prev,
                                                 const Tensor<typename Prev::ElementC>& acc, detail::Where w = detail::Where::current()) {
  using A = typename Next::ElementA;
  const int64_t columns = rank(acc) == 3 ? size(mode(acc.layout(), 2)).value() * Prev::n : 0;
  if (columns == 0 || columns % Next::k != 0)
    detail::fail("accumulator_as_A takes a (V, RestM, RestN) accumulator whose columns (RestN x " + std::to_string(Prev::n) +
                     ") are a multiple of the next product's K (" + std::to_string(Next::k) + "), not " + to_string(acc.layout()),
                 w);
  const int64_t rest_m = size(mode(acc.layout(), 1)).value(), rest_k = columns / Next::k;
  std::vector<std::pair<int, int>> map = detail::accumulator_to_a(prev.shape(), next.shape(), rest_k, w);
  const int64_t values = int64_t(map.size()) / rest_k;
  Tensor<A> a = make_rmem_tensor<A>(IntTuple{values, rest_m, rest_k}, w);
  for (int64_t k = 0; k < rest_k; ++k)
    for (int64_t m = 0; m < rest_m; ++m)
      for (int64_t v = 0; v < values; ++v) {
        auto [c, n] = map[size_t(k * values + v)];
        a(IntTuple(v), IntTuple(m), IntTuple(k), w) = cast<A>(Value<typename Prev::ElementC>(acc(IntTuple(c), IntTuple(m), IntTuple(n), w)), w);
      }
  return a;
}

}  // namespace cutejit
