/** \file
 * A traced tensor: a pointer (global, shared or register memory) plus a CuTe `Layout` from
 * coordinates to element offsets, optionally followed by a `Swizzle` of the offset (CuTe's
 * ComposedLayout), which is how bank-conflict-free shared-memory tiles are addressed.
 *
 * Kernel parameters of type `Tensor<T>` receive device buffers: the element type is fixed by
 * the kernel; rank, alignment, unit strides and the divisibility of shapes and strides by
 * powers of two (up to 16) come from the launch's arguments and are part of the
 * specialization; shapes and strides are otherwise dynamic, except a stride of 1, which is
 * static so that contiguous accesses can be vectorised.
 *
 * Indexing `t(i, j)` gives an element (an lvalue); `t(_, j)` gives the tensor of the modes
 * marked `_`. Partitioning (local_tile, local_partition, ...) lives in partition.hpp.
 */
#pragma once

#include <array>
#include <bit>
#include <optional>
#include <string>
#include <utility>

#include "cutejit/core/error.hpp"

#include "cutejit/layout/algebra.hpp"
#include "cutejit/layout/slice.hpp"
#include "cutejit/layout/swizzle.hpp"
#include "cutejit/tensor/pointer.hpp"

namespace cutejit {

namespace detail {
/// `p + offset` in elements, emitting nothing for a static 0.
template <Element T>
Pointer<T> advance(const Pointer<T>& p, const Integer& offset, Where w) {
  if (offset.is_static() && offset.value() == 0) return p;
  return p + Operand<int32_t>(offset.read(w), w);
}
template <class C>
inline constexpr bool is_underscore_v = std::is_same_v<std::decay_t<C>, Underscore>;
/// Swizzles a (static or dynamic) element offset: offset ^ ((offset & yyy) >> shift).
Integer swizzle_offset(const Swizzle& s, const Integer& offset);
[[noreturn]] void tensor_coordinate_error(const Layout& l, const IntTuple& coord, Where w);
/// Throws unless `mode` is one of the tensor's modes, naming `what` ("shape", "stride") and the valid ones.
void check_mode(const Layout& l, int mode, const char* what, Where w);
/// Runs the layout algebra behind a tensor function the user called at `w`: an error in it (a
/// zero tile, a tiler that does not divide) is reported at `w`, not where a dynamic extent
/// entered the layout (for a kernel argument, inside cutejit).
template <class F>
decltype(auto) at_caller(Where w, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const Error& e) {
    if (e.message().starts_with("in kernel '")) throw Error(std::string(e.message()), w);
    fail(e.message(), w);
  }
}
}  // namespace detail

/// The smallest power of two whose multiples a swizzle leaves alone: above every bit it touches.
inline int64_t swizzle_period(const Swizzle& s) { return int64_t(1) << std::bit_width(uint64_t(s.yyy_mask() | s.zzz_mask())); }

template <Element T>
class Tensor {
 public:
  using element_type = T;
  Tensor() = default;
  /// A tensor over `data` with this layout.
  Tensor(Pointer<T> data, Layout layout) : data_(data), layout_(std::move(layout)) {}
  /// A tensor from shape and strides: `Tensor(p, {32, 32}, {33, 1})` (static), or with traced Ints.
  Tensor(Pointer<T> data, const IntTuple& shape, const IntTuple& stride) : data_(data), layout_(shape, stride) {}
  /// A swizzled tensor: element c is at data + swizzle(offset + layout(c)).
  Tensor(Pointer<T> data, Swizzle swizzle, Integer offset, Layout layout)
      : data_(data), layout_(std::move(layout)), swizzle_(swizzle), swizzle_base_(std::move(offset)) {}

  const Layout& layout() const { return layout_; }
  const IntTuple& shape() const { return layout_.shape(); }
  const IntTuple& stride() const { return layout_.stride(); }
  Pointer<T> data() const { return data_; }
  const std::optional<Swizzle>& swizzle() const { return swizzle_; }
  /// The element offset the swizzle is applied to, before the layout's (0 when unswizzled).
  const Integer& swizzle_base() const { return swizzle_base_; }

  int rank() const { return cutejit::rank(layout_); }
  /// The size of mode `mode`, as a traced Int (a static size becomes a constant).
  Int shape(int mode, detail::Where w = detail::Where::current()) const {
    detail::check_mode(layout_, mode, "shape", w);
    return cutejit::size(cutejit::mode(layout_, mode)).read(w);
  }
  Int stride(int mode, detail::Where w = detail::Where::current()) const {
    detail::check_mode(layout_, mode, "stride", w);
    return detail::at_caller(w, [&] { return cutejit::mode(layout_, mode).stride().leaf().read(w); });
  }
  /// The number of elements, as a traced Int.
  Int size(detail::Where w = detail::Where::current()) const { return cutejit::size(layout_).read(w); }

  /// The element offset of a coordinate (after the swizzle), from data().
  Integer offset_of(const IntTuple& coord, detail::Where w = detail::Where::current()) const {
    if (has_underscore(coord)) detail::tensor_coordinate_error(layout_, coord, w);
    Integer o = layout_.evaluate(coord);
    return swizzle_ ? detail::swizzle_offset(*swizzle_, swizzle_base_ + o) : o;
  }
  /// The address of the element at layout offset `o` (the swizzle, if any, applied).
  Pointer<T> address(const Integer& o, detail::Where w = detail::Where::current()) const {
    return detail::advance(data_, swizzle_ ? detail::swizzle_offset(*swizzle_, swizzle_base_ + o) : o, w);
  }
  /// The address of a coordinate (for vector accesses and atomics).
  Pointer<T> pointer_at(const IntTuple& coord, detail::Where w = detail::Where::current()) const {
    return detail::advance(data_, offset_of(coord, w), w);
  }
  Pointer<T> pointer_at(std::initializer_list<Operand<int32_t>> coord, detail::Where w = detail::Where::current()) const {
    std::vector<IntTuple> c;
    for (const auto& x : coord) c.emplace_back(Int(x.id), x.where);
    return pointer_at(c.size() == 1 ? c[0] : IntTuple(std::move(c)), w);
  }

  /// The element at an integer (1-D, colexicographic) or hierarchical coordinate.
  detail::Ref<T> operator()(const IntTuple& c0, detail::Where w = detail::Where::current()) const {
    return *pointer_at(c0, w);
  }
  detail::Ref<T> operator()(const IntTuple& c0, const IntTuple& c1, detail::Where w = detail::Where::current()) const {
    return element({c0, c1}, w);
  }
  detail::Ref<T> operator()(const IntTuple& c0, const IntTuple& c1, const IntTuple& c2,
                            detail::Where w = detail::Where::current()) const {
    return element({c0, c1, c2}, w);
  }
  detail::Ref<T> operator()(const IntTuple& c0, const IntTuple& c1, const IntTuple& c2, const IntTuple& c3,
                            detail::Where w = detail::Where::current()) const {
    return element({c0, c1, c2, c3}, w);
  }
  /// `t(_, j)`: the tensor of the modes marked `_`.
  template <class... Cs>
    requires(sizeof...(Cs) >= 1 && (detail::is_underscore_v<Cs> || ...))
  Tensor operator()(const Cs&... cs) const {
    return slice(IntTuple{IntTuple(cs)...});
  }

  /// The sub-tensor of the modes that `coord` marks with `_` (nested wildcards allowed).
  Tensor slice(const IntTuple& coord) const {
    return transform([&](const Layout& l) { return slice_and_offset(coord, l); });
  }
  /// The same memory seen through another layout whose offsets start `offset` elements later
  /// (the building block of every partitioning function).
  Tensor rebase(const Integer& offset, Layout layout, detail::Where w = detail::Where::current()) const {
    // A swizzle reads and writes only the offset's bits below its period, so a multiple of the
    // period (a ring stage, a whole tile) moves the pointer instead: the swizzle of what is left
    // stays the same from stage to stage, and the compiler can keep it out of a loop.
    if (swizzle_ && !divides(swizzle_period(*swizzle_), offset))
      return Tensor(data_, *swizzle_, swizzle_base_ + offset, std::move(layout));
    if (swizzle_) return Tensor(detail::advance(data_, offset, w), *swizzle_, swizzle_base_, std::move(layout));
    return Tensor(detail::advance(data_, offset, w), std::move(layout));
  }
  Tensor with_layout(Layout layout) const { return rebase(0, std::move(layout)); }
  /// Applies a layout map (layout -> {layout, offset}); every partitioning function is one.
  template <class F>
  Tensor transform(F&& f) const {
    SlicedLayout s = f(layout_);
    return rebase(s.offset, std::move(s.layout));
  }

 private:
  detail::Ref<T> element(std::vector<IntTuple> c, detail::Where w) const {
    IntTuple coord(std::move(c));
    if (coord.rank() != rank()) detail::tensor_coordinate_error(layout_, coord, w);
    return *pointer_at(coord, w);
  }

  Pointer<T> data_;
  Layout layout_;
  std::optional<Swizzle> swizzle_;
  Integer swizzle_base_ = 0;
};

template <Element T>
Int size(const Tensor<T>& t, detail::Where w = detail::Where::current()) { return t.size(w); }
template <Element T>
int rank(const Tensor<T>& t) { return t.rank(); }
template <Element T>
const Layout& layout(const Tensor<T>& t) { return t.layout(); }

/// CuTe make_tensor: a pointer and a layout (or a shape and strides).
template <Element T>
Tensor<T> make_tensor(Pointer<T> p, const Layout& l) { return Tensor<T>(p, l); }
template <Element T>
Tensor<T> make_tensor(Pointer<T> p, const IntTuple& shape, const IntTuple& stride) { return Tensor<T>(p, Layout(shape, stride)); }
/// A tensor whose layout is a swizzle composed with a layout (e.g. a shared-memory tile).
template <Element T>
Tensor<T> make_tensor(Pointer<T> p, const ComposedLayout& l) {
  return Tensor<T>(p, l.layout_a(), l.offset(), l.layout_b());
}

}  // namespace cutejit
