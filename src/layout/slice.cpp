// Slicing layouts with `_` wildcards, and the residue predicate elem_less.
#include <cutejit/layout/slice.hpp>

#include <cutejit/core/error.hpp>

namespace cutejit {

namespace {

[[noreturn]] void mismatch(const IntTuple& coord, const Layout& l) {
  throw Error("slice: the coordinate " + to_string(coord) + " does not match the layout " + to_string(l) +
              " (give one entry per mode, an integer, a tuple of the mode's profile, or _ to keep the mode)");
}

/// Walks coord against shape:stride, keeping `_` modes (keep == true) or the others (dice).
void walk(const IntTuple& coord, const IntTuple& shape, const IntTuple& stride, bool keep_underscore,
          std::vector<IntTuple>& sh, std::vector<IntTuple>& st, Integer& offset, const Layout& whole,
          const IntTuple& whole_coord) {
  if (coord.is_underscore()) {
    if (keep_underscore) sh.push_back(shape), st.push_back(stride);
    return;
  }
  if (coord.is_tuple()) {
    if (shape.is_leaf() || coord.rank() != shape.rank()) mismatch(whole_coord, whole);
    for (int i = 0; i < coord.rank(); ++i)
      walk(coord[i], shape[i], stride[i], keep_underscore, sh, st, offset, whole, whole_coord);
    return;
  }
  if (keep_underscore) {
    offset = offset + crd2idx(coord, shape, stride);
  } else {
    sh.push_back(shape), st.push_back(stride);
  }
}

Layout from_modes(std::vector<IntTuple> sh, std::vector<IntTuple> st) {
  return Layout(IntTuple(std::move(sh)), IntTuple(std::move(st)));
}

}  // namespace

SlicedLayout slice_and_offset(const IntTuple& coord, const Layout& l) {
  if (coord.is_underscore()) return {l, 0};  // as CuTe: slice(_, s) is s itself, not (s)
  std::vector<IntTuple> sh, st;
  Integer offset = 0;
  walk(coord, l.shape(), l.stride(), true, sh, st, offset, l, coord);
  if (sh.empty()) return {Layout(1, 0), offset};
  return {from_modes(std::move(sh), std::move(st)), offset};
}

Layout slice(const IntTuple& coord, const Layout& l) { return slice_and_offset(coord, l).layout; }

Layout dice(const IntTuple& coord, const Layout& l) {
  if (coord.is_leaf() && !coord.is_underscore()) return l;  // as CuTe: dice(i, s) is s itself
  std::vector<IntTuple> sh, st;
  Integer unused = 0;
  walk(coord, l.shape(), l.stride(), false, sh, st, unused, l, coord);
  if (sh.empty()) return Layout(1, 0);
  return from_modes(std::move(sh), std::move(st));
}

namespace {
/// The dynamic comparisons of elem_less; static ones are decided here: a static false makes
/// the whole predicate false (returned as `known`), a static true drops out.
void collect_less(const IntTuple& coord, const IntTuple& bound, std::vector<Bool>& dynamic, bool& known_false,
                  detail::Where w) {
  if (coord.is_tuple()) {
    if (bound.is_leaf() || bound.rank() < coord.rank())
      throw Error("elem_less: the coordinate " + to_string(coord) + " has more modes than the bound " +
                      to_string(bound),
                  w);
    for (int i = 0; i < coord.rank(); ++i) collect_less(coord[i], bound[i], dynamic, known_false, w);
    return;
  }
  Integer c = coord.leaf(), b = size(bound);
  if (c.is_static() && b.is_static()) {
    known_false = known_false || c.value() >= b.value();
    return;
  }
  dynamic.push_back(c.read(w) < b.read(w));
}
}  // namespace

Bool elem_less(const IntTuple& coord, const IntTuple& bound, detail::Where w) {
  std::vector<Bool> dynamic;
  bool known_false = false;
  collect_less(coord, bound, dynamic, known_false, w);
  if (known_false || dynamic.empty()) return Bool(!known_false, w);
  Bool all = dynamic[0];
  for (size_t i = 1; i < dynamic.size(); ++i) all = Operand<bool>(all, w) && Operand<bool>(dynamic[i], w);
  return all;
}

}  // namespace cutejit
