// The layout maps behind tensor partitioning, coordinate tensors and thread-value layouts.
#include <cutejit/tensor/partition.hpp>

#include <cutejit/core/error.hpp>
#include <cutejit/layout/identity_layout.hpp>

namespace cutejit {

namespace {

IntTuple underscores(int n) { return IntTuple(std::vector<IntTuple>(size_t(n), IntTuple(_))); }

/// A coordinate into the rest modes of a zipped divide: a 1-D index stays as is; a shorter
/// tuple is padded with `_` (CuTe's append<R>(coord, _)), keeping the modes it does not name.
IntTuple rest_coord(const IntTuple& coord, int rest_rank, const Layout& l, const IntTuple& full) {
  if (coord.is_leaf()) return coord;
  if (coord.rank() > rest_rank)
    throw Error("local_tile: the tile coordinate " + to_string(coord) + " has more modes than the grid of tiles " +
                to_string(full) + " of the layout " + to_string(l));
  std::vector<IntTuple> out = coord.elems();
  while (int(out.size()) < rest_rank) out.emplace_back(_);
  return IntTuple(std::move(out));
}

}  // namespace

Tile make_tile_from_shape(const IntTuple& shape) {
  std::vector<TileMode> modes;
  for (int i = 0; i < shape.rank(); ++i) {
    Integer n = size(shape[i]);
    if (n.is_dynamic())
      throw Error("a tile shape must be static, but mode " + std::to_string(i) + " of " + to_string(shape) +
                      " is dynamic; tile with static sizes (the grid of tiles may be dynamic)",
                  n.where());
    if (n.value() < 1)
      throw Error("a tile's sizes must be positive, but mode " + std::to_string(i) + " of the tile shape " + to_string(shape) + " is " +
                  std::to_string(n.value()));
    modes.emplace_back(n.value());
  }
  return Tile(std::move(modes));
}

namespace detail {

SlicedLayout local_tile_map(const Layout& l, const Tile& tiler, const IntTuple& coord) {
  Layout z = zipped_divide(l, tiler);
  Layout rest = mode(z, 1);
  IntTuple c{underscores(rank(mode(z, 0))), rest_coord(coord, rank(rest), l, rest.shape())};
  return slice_and_offset(c, z);
}

SlicedLayout local_partition_map(const Layout& l, const Layout& threads, const Integer& index) {
  Tile tiler = make_tile_from_shape(threads.shape());
  Layout z = zipped_divide(l, tiler);
  // The thread's coordinate in the thread layout (CuTe get_hier_coord), as a 1-D index per mode.
  IntTuple hier = idx2crd(index, threads.shape(), threads.stride());
  std::vector<IntTuple> per_mode;
  for (int i = 0; i < tiler.rank(); ++i) per_mode.emplace_back(crd2idx(hier[i], threads.shape()[i]));
  return slice_and_offset(IntTuple{IntTuple(std::move(per_mode)), underscores(rank(mode(z, 1)))}, z);
}

}  // namespace detail

CoordTensor make_identity_tensor(const IntTuple& shape) {
  IdentityLayout id = make_identity_layout(shape);
  return CoordTensor(id.coordinate_layouts(), std::vector<Integer>(id.coordinate_layouts().size(), Integer(0)));
}

TVLayout make_layout_tv(const Layout& threads, const Layout& values) {
  Layout mn = raked_product(threads, values);
  IntTuple shape = product_each(mn.shape());
  Layout tv = composition(right_inverse(mn), make_layout(IntTuple{size(threads), size(values)}));
  return {make_tile_from_shape(shape), shape, tv};
}

}  // namespace cutejit
