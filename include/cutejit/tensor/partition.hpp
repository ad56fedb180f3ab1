/** \file
 * Partitioning tensors: the layout algebra applied to a tensor's layout, for data tensors
 * (`Tensor<T>`) and coordinate tensors (`CoordTensor`) alike. Each function is a layout map
 * (layout -> {layout, offset}) given to the tensor's `transform`, so a coordinate tensor
 * partitioned the same way as a data tensor keeps giving each element's coordinate.
 *
 *   local_tile(t, tiler, coord)       the tile at `coord` (CuTe inner_partition)
 *   local_partition(t, threads, idx)  thread idx's elements, one per tile (outer_partition)
 *   partition_tv(t, tv, tid)          thread tid's values under a thread-value layout
 *   make_layout_tv(threads, values)   the (tile, thread-value layout) pair of CuTeDSL
 */
#pragma once

#include <utility>

#include "cutejit/tensor/identity.hpp"

namespace cutejit {

template <class T>
concept PartitionableTensor = requires(const T& t) {
  { t.layout() } -> std::convertible_to<const Layout&>;
  t.slice(IntTuple());
};

/// A tiler given as a shape (every mode an integer n, i.e. n:1) as a by-mode Tile.
Tile make_tile_from_shape(const IntTuple& shape);

namespace detail {
/// The layout maps behind the tensor functions below (also useful on plain layouts).
SlicedLayout local_tile_map(const Layout& l, const Tile& tiler, const IntTuple& coord);
SlicedLayout local_partition_map(const Layout& l, const Layout& threads, const Integer& index);
}  // namespace detail

// ---- the algebra on a tensor's layout ----
// Each reports an error in the layout algebra at the caller's line (detail::at_caller).
#define CUTEJIT_TENSOR_LAYOUT_OP(NAME)                                                                     \
  template <PartitionableTensor Tn, class Tiler>                                                           \
    requires(std::same_as<Tiler, Layout> || std::same_as<Tiler, Tile>)                                     \
  Tn NAME(const Tn& t, const Tiler& tiler, detail::Where w = detail::Where::current()) {                   \
    return detail::at_caller(w, [&] {                                                                      \
      return t.transform([&](const Layout& l) { return SlicedLayout{NAME(l, tiler), Integer(0)}; });        \
    });                                                                                                    \
  }
CUTEJIT_TENSOR_LAYOUT_OP(composition)
CUTEJIT_TENSOR_LAYOUT_OP(logical_divide)
CUTEJIT_TENSOR_LAYOUT_OP(zipped_divide)
CUTEJIT_TENSOR_LAYOUT_OP(tiled_divide)
CUTEJIT_TENSOR_LAYOUT_OP(flat_divide)
#undef CUTEJIT_TENSOR_LAYOUT_OP

/// The modes `modes` of `t`, in that order (CuTe's select): `select(t, {1, 0})` is a K x M
/// tile seen as M x K.
template <PartitionableTensor Tn>
Tn select(const Tn& t, const std::vector<int>& modes, detail::Where w = detail::Where::current()) {
  return detail::at_caller(w, [&] { return t.transform([&](const Layout& l) { return SlicedLayout{select(l, modes), Integer(0)}; }); });
}

template <PartitionableTensor Tn>
Tn zipped_divide(const Tn& t, const IntTuple& tile_shape, detail::Where w = detail::Where::current()) {
  return detail::at_caller(w, [&] { return zipped_divide(t, make_tile_from_shape(tile_shape), w); });
}

/// The tile of `t` at `coord` among the tiles `tiler` cuts it into: `local_tile(A, (128,64),
/// (bm, bn))` is CTA (bm, bn)'s 128x64 block of A. Residue tiles keep the full tile shape; use
/// a coordinate tensor to predicate them.
template <PartitionableTensor Tn, std::same_as<Tile> TileT>  // a template, so that {32, 32} means a shape
Tn local_tile(const Tn& t, const TileT& tiler, const IntTuple& coord, detail::Where w = detail::Where::current()) {
  return detail::at_caller(w, [&] { return t.transform([&](const Layout& l) { return detail::local_tile_map(l, tiler, coord); }); });
}
template <PartitionableTensor Tn>
Tn local_tile(const Tn& t, const IntTuple& tile_shape, const IntTuple& coord, detail::Where w = detail::Where::current()) {
  return detail::at_caller(w, [&] { return local_tile(t, make_tile_from_shape(tile_shape), coord, w); });
}

/// Thread `index`'s elements when the threads, laid out as `threads` (e.g. (32,8):(8,1)),
/// tile `t`: one element per tile position, strided by the thread layout's shape.
template <PartitionableTensor Tn>
Tn local_partition(const Tn& t, const Layout& threads, const IntTuple& index, detail::Where w = detail::Where::current()) {
  return detail::at_caller(w, [&] {
    return t.transform([&](const Layout& l) { return detail::local_partition_map(l, threads, index.leaf()); });
  });
}

/// Thread `tid`'s values of a tile under a thread-value layout `tv` ((T,V) -> tile index):
/// composition(t, tv)(tid, _).
template <PartitionableTensor Tn>
Tn partition_tv(const Tn& tile, const Layout& tv, const IntTuple& tid, detail::Where w = detail::Where::current()) {
  return detail::at_caller(w, [&] { return composition(tile, tv, w).slice(IntTuple{tid, _}); });
}

/// CuTe domain_offset: `t` seen from `coord`, so that result(c) is t(c + coord).
template <PartitionableTensor Tn>
Tn domain_offset(const IntTuple& coord, const Tn& t) {
  return t.transform([&](const Layout& l) { return SlicedLayout{l, l.evaluate(coord)}; });
}

/// CuTeDSL make_layout_tv: threads and per-thread values, both laid out over an (M,N) tile,
/// give the tile's shape and the (thread, value) -> tile-index layout. With threads
/// (4,32):(32,1) and values (4,4):(4,1), each thread owns a 4x4 block whose rows are 4
/// consecutive elements: 128-bit accesses of floats on a row-major tile.
struct TVLayout {
  Tile tiler;      ///< the tile's shape, one integer per mode
  IntTuple shape;  ///< the same, as a shape
  Layout tv;       ///< (thread, value) -> index in the tile (column-major over `shape`)
};
TVLayout make_layout_tv(const Layout& threads, const Layout& values);

}  // namespace cutejit
