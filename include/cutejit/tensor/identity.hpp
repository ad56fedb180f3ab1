/** \file
 * Coordinate tensors (CuTe's make_identity_tensor): a tensor whose element at c is the
 * coordinate c itself in the original shape. Partitioned exactly like the data tensor it
 * mirrors (local_tile, composition with a thread-value layout, slicing), it tells each thread
 * which global coordinates its elements have, which is how residue tiles are predicated:
 * `elem_less(coords(i), shape)`.
 *
 * Represented as one layout per coordinate mode, all with the same shape: mode k's layout has
 * the compact strides of mode k and stride 0 elsewhere, so its value is the k-th coordinate.
 * Every partitioning step is applied to each of them (see transform).
 */
#pragma once

#include <vector>

#include "cutejit/tensor/tensor.hpp"

namespace cutejit {

class CoordTensor {
 public:
  CoordTensor(std::vector<Layout> components, std::vector<Integer> origin)
      : components_(std::move(components)), origin_(std::move(origin)) {}

  /// The layout of the first coordinate mode; every mode has this shape.
  const Layout& layout() const { return components_.front(); }
  const IntTuple& shape() const { return layout().shape(); }
  int rank() const { return cutejit::rank(layout()); }
  /// Number of coordinate modes (the rank of the shape it was made from).
  int modes() const { return int(components_.size()); }
  const std::vector<Layout>& components() const { return components_; }
  /// The coordinate that each mode's layout offset is added to.
  const std::vector<Integer>& origin() const { return origin_; }

  /// The coordinate at c: a leaf for a rank-1 origin shape, else one entry per mode.
  IntTuple operator()(const IntTuple& c) const {
    std::vector<IntTuple> out;
    for (size_t k = 0; k < components_.size(); ++k) out.emplace_back(origin_[k] + components_[k].evaluate(c));
    return out.size() == 1 ? out[0] : IntTuple(std::move(out));
  }
  template <class... Cs>
    requires(sizeof...(Cs) >= 2 && !(detail::is_underscore_v<Cs> || ...))
  IntTuple operator()(const Cs&... cs) const { return (*this)(IntTuple{IntTuple(cs)...}); }
  template <class... Cs>
    requires(sizeof...(Cs) >= 1 && (detail::is_underscore_v<Cs> || ...))
  CoordTensor operator()(const Cs&... cs) const { return slice(IntTuple{IntTuple(cs)...}); }

  CoordTensor slice(const IntTuple& coord) const {
    return transform([&](const Layout& l) { return slice_and_offset(coord, l); });
  }
  /// Applies a layout map (layout -> {layout, offset}) to every coordinate mode.
  template <class F>
  CoordTensor transform(F&& f) const {
    std::vector<Layout> c;
    std::vector<Integer> o;
    for (size_t k = 0; k < components_.size(); ++k) {
      SlicedLayout s = f(components_[k]);
      c.push_back(std::move(s.layout));
      o.push_back(origin_[k] + s.offset);
    }
    return CoordTensor(std::move(c), std::move(o));
  }

 private:
  std::vector<Layout> components_;
  std::vector<Integer> origin_;
};

/// The coordinate tensor of `shape`: element c is c (a 1-D index per top-level mode).
CoordTensor make_identity_tensor(const IntTuple& shape);

/// The coordinate tensor with `offset` added to every element (CuTe's domain_offset): a tile
/// that starts where no whole number of tiles would, such as a packed sequence's first token.
/// `offset` has one entry per coordinate mode.
inline CoordTensor domain_offset(const IntTuple& offset, const CoordTensor& t, detail::Where w = detail::Where::current()) {
  if (offset.rank() != t.modes() || (t.modes() == 1) != offset.is_leaf())
    detail::fail("domain_offset's offset " + to_string(offset) + " has " + std::to_string(offset.rank()) +
                     " entries; the coordinate tensor has " + std::to_string(t.modes()) + " modes",
                 w);
  std::vector<Integer> origin = t.origin();
  for (int k = 0; k < t.modes(); ++k) origin[size_t(k)] = origin[size_t(k)] + (t.modes() == 1 ? offset : offset[k]).leaf();
  return CoordTensor(t.components(), std::move(origin));
}

/// Component I of a coordinate tensor's element as a traced Int (CuTe get<I>(cS(i)) in a
/// comparison): `Int row = coordinate<0>(cS(i))`.
template <int I>
Int coordinate(const IntTuple& element, detail::Where w = detail::Where::current()) {
  return get<I>(element).leaf().read(w);
}

}  // namespace cutejit
