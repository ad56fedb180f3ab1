// Out-of-line helpers of Tensor<T>: swizzled offsets and coordinate errors.
#include <cutejit/tensor/tensor.hpp>

#include <cutejit/core/error.hpp>

namespace cutejit::detail {

Integer swizzle_offset(const Swizzle& s, const Integer& offset) {
  if (s.bits() == 0) return offset;
  return bit_xor(offset, shift_right(bit_and(offset, s.yyy_mask()), s.shift()));
}

void tensor_coordinate_error(const Layout& l, const IntTuple& coord, Where w) {
  if (has_underscore(coord))
    throw Error("the coordinate " + to_string(coord) + " holds _ : an element access needs every coordinate; to slice, "
                "call t(_, j) with _ at the top level or t.slice(" + to_string(coord) + ")", w);
  throw Error("a rank-" + std::to_string(rank(l)) + " tensor is indexed with " + std::to_string(coord.rank()) +
                  " coordinate(s); give one per mode, a single 1-D index, or one hierarchical coordinate (the layout is " +
                  to_string(l) + ")",
              w);
}

void check_mode(const Layout& l, int mode, const char* what, Where w) {
  const int modes = rank(l);
  if (mode < 0 || mode >= modes)
    fail(std::string(what) + "(" + std::to_string(mode) + "): a rank-" + std::to_string(modes) + " tensor has no mode " +
             std::to_string(mode) + " (valid modes: 0.." + std::to_string(modes - 1) + "; the layout is " + to_string(l) + ")",
         w);
}

}  // namespace cutejit::detail

namespace cutejit::detail {

namespace {
/// Stride keys for ordering: static strides as they are, dynamic ones after every static one
/// (in mode order), as CuTe orders dynamic values in make_ordered_layout.
IntTuple order_keys(const IntTuple& stride, int64_t& next_dynamic) {
  if (stride.is_tuple()) {
    std::vector<IntTuple> out;
    for (const auto& e : stride.elems()) out.push_back(order_keys(e, next_dynamic));
    return IntTuple(std::move(out));
  }
  if (stride.leaf().is_static()) return stride;
  return next_dynamic++;
}
}  // namespace

Layout fragment_layout(const Layout& l, Where w) {
  if (!is_static(l.shape()))
    throw Error("a register tensor needs a static shape, but " + to_string(l) +
                    " has a dynamic one; registers are allocated at compile time (partition a static tile)",
                w);
  int64_t next_dynamic = int64_t(1) << 40;
  return make_fragment_like(Layout(l.shape(), order_keys(l.stride(), next_dynamic)));
}

int64_t register_count(const Layout& l, Where w) {
  Integer n = cosize(l);
  if (n.is_dynamic())
    throw Error("a register tensor needs a static size, but the layout " + to_string(l) +
                    " has a dynamic extent; registers are allocated at compile time (partition a static tile)",
                w);
  return n.value();
}

}  // namespace cutejit::detail

namespace cutejit::detail {

void tile_shape_error(const IntTuple& a, const IntTuple& b, const char* op, Where w) {
  throw Error(std::string(op) + ": the register tiles have shapes " + to_string(a) + " and " + to_string(b) +
                  " with different numbers of elements (elementwise operations need tiles of one size)",
              w);
}

}  // namespace cutejit::detail
