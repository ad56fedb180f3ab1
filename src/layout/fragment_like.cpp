// make_fragment_like: the compact layout CuTe gives a private (register) copy of a layout.
#include <cutejit/layout/algebra.hpp>

namespace cutejit {

namespace {
/// The shape with 1 wherever the stride is a static 0 (CuTe filter_zeros(stride, shape)).
IntTuple ones_where_zero_stride(const IntTuple& stride, const IntTuple& shape) {
  if (stride.is_tuple()) {
    std::vector<IntTuple> out;
    for (int i = 0; i < stride.rank(); ++i) out.push_back(ones_where_zero_stride(stride[i], shape[i]));
    return IntTuple(std::move(out));
  }
  bool zero = stride.leaf().is_static() && stride.leaf().value() == 0;
  return zero ? repeat_like(shape, 1) : shape;
}
}  // namespace

Layout make_fragment_like(const Layout& l) {
  const int R = rank(l);
  if (R <= 1 || !is_static(l.shape())) return make_layout(l.shape());
  // Mode 0 is what MMA and copy atoms index by value: always column-major from stride 1, so
  // that the atom's values are contiguous whatever the source order was.
  const IntTuple& shape0 = l.shape()[0];
  Layout first(shape0, compact_col_major(ones_where_zero_stride(l.stride()[0], shape0)));
  Layout rest = make_ordered_layout(take(l.shape(), 1, R), take(l.stride(), 1, R));
  return tiled_product(first, rest);
}

}  // namespace cutejit
