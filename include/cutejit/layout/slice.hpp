/** \file
 * Slicing a layout with a coordinate that holds `_` wildcards (CuTe's slice, dice and
 * slice_and_offset), and make_coord / make_shape / make_stride for building the tuples.
 * This is what `tensor(_, j)` and the partitioning functions are built on.
 */
#pragma once

#include <cutejit/layout/layout.hpp>

namespace cutejit {

/// The modes of `l` that `coord` marks with `_` (flattened into one tuple, in order, as CuTe),
/// and the offset that the other, fixed, coordinates contribute.
struct SlicedLayout {
  Layout layout;
  Integer offset;
};
SlicedLayout slice_and_offset(const IntTuple& coord, const Layout& l);
/// The layout of the `_` modes of coord (CuTe slice).
Layout slice(const IntTuple& coord, const Layout& l);
/// The layout of the modes of coord that are *not* `_` (CuTe dice).
Layout dice(const IntTuple& coord, const Layout& l);

template <class... Ts>
IntTuple make_coord(const Ts&... ts) { return IntTuple{IntTuple(ts)...}; }
template <class... Ts>
IntTuple make_shape(const Ts&... ts) { return IntTuple{IntTuple(ts)...}; }
template <class... Ts>
IntTuple make_stride(const Ts&... ts) { return IntTuple{IntTuple(ts)...}; }

/// True on the device when every coordinate is below its bound (CuTe elem_less): the
/// predicate of a residue tile. Static comparisons fold to constants.
Bool elem_less(const IntTuple& coord, const IntTuple& bound, detail::Where w = detail::Where::current());

}  // namespace cutejit
