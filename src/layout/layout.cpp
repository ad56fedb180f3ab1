// Layout: construction, evaluation, queries, mode manipulation and printing.
#include <cutejit/layout/layout.hpp>

#include <cutejit/core/error.hpp>

#include <algorithm>
#include <cstdlib>
#include <ostream>

namespace cutejit {

namespace {
[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }
/// Only a static 0 is a zero stride: a dynamic stride is never dropped (as in CuTe).
bool is_zero(const IntTuple& d) { return d.leaf().is_static() && d.leaf().value() == 0; }
}  // namespace

Layout::Layout(IntTuple shape, IntTuple stride) : shape_(std::move(shape)), stride_(std::move(stride)) {
  if (!congruent(shape_, stride_))
    fail("Layout: the stride " + to_string(stride_) + " is not congruent with the shape " + to_string(shape_) +
         " (they need the same nesting, e.g. (4,(2,3)):(1,(4,8)))");
}

Integer Layout::evaluate(const IntTuple& coord) const {
  if (coord.is_tuple() && !weakly_congruent(coord, shape_))
    fail("Layout " + to_string(*this) + ": the coordinate " + to_string(coord) +
         " does not match the shape (use an integer or a coordinate with the profile of " + to_string(shape_) + ")");
  return crd2idx(coord, shape_, stride_);
}

std::string to_string(const Layout& l) { return to_string(l.shape()) + ":" + to_string(l.stride()); }
std::ostream& operator<<(std::ostream& os, const Layout& l) { return os << to_string(l); }

// ---- Construction ----

Layout make_layout(const IntTuple& shape, const IntTuple& stride) { return Layout(shape, stride); }
Layout make_layout(const IntTuple& shape) { return Layout(shape, compact_col_major(shape)); }
Layout make_layout(const IntTuple& shape, LayoutLeft) { return make_layout(shape); }
Layout make_layout(const IntTuple& shape, LayoutRight) { return Layout(shape, compact_row_major(shape)); }
Layout make_layout_row_major(const IntTuple& shape) { return make_layout(shape, LayoutRight{}); }

Layout make_layout_from_modes(const std::vector<Layout>& modes) {
  std::vector<IntTuple> sh, st;
  for (const auto& m : modes) {
    sh.push_back(m.shape());
    st.push_back(m.stride());
  }
  return Layout(IntTuple(std::move(sh)), IntTuple(std::move(st)));
}

Layout make_ordered_layout(const IntTuple& shape, const IntTuple& order) {
  return Layout(shape, compact_order(shape, order));
}

namespace {
IntTuple filter_zeros_shape(const IntTuple& stride, const IntTuple& shape) {
  if (stride.is_tuple()) {
    std::vector<IntTuple> out;
    for (int i = 0; i < stride.rank(); ++i) out.push_back(filter_zeros_shape(stride[i], shape[i]));
    return IntTuple(std::move(out));
  }
  return is_zero(stride) ? repeat_like(shape, 1) : shape;
}
}  // namespace

Layout make_layout_like(const Layout& l) {
  return Layout(l.shape(), compact_order(filter_zeros_shape(l.stride(), l.shape()), l.stride()));
}

// ---- Queries ----

Integer size(const Layout& l) { return size(l.shape()); }
bool is_static(const Layout& l) { return is_static(l.shape()) && is_static(l.stride()); }

namespace {
Integer cosize_sum(const IntTuple& shape, const IntTuple& stride) {
  // a dynamic stride is taken as non-negative, as the strides of tensor arguments are
  if (shape.is_leaf()) {
    const Integer& d = stride.leaf();
    return (shape.leaf() - 1) * (d.is_static() ? Integer(std::llabs(d.value())) : d);
  }
  Integer s = 0;
  for (int i = 0; i < shape.rank(); ++i) s = s + cosize_sum(shape[i], stride[i]);
  return s;
}
}  // namespace

Integer cosize(const Layout& l) { return cosize_sum(l.shape(), l.stride()) + 1; }
int rank(const Layout& l) { return l.shape().rank(); }
int depth(const Layout& l) { return depth(l.shape()); }
const IntTuple& shape(const Layout& l) { return l.shape(); }
const IntTuple& stride(const Layout& l) { return l.stride(); }

Layout mode(const Layout& l, int i) {
  if (i < 0 || i >= rank(l))
    fail("mode: index " + std::to_string(i) + " is out of range for " + to_string(l) + " (rank " +
         std::to_string(rank(l)) + ", valid modes 0.." + std::to_string(rank(l) - 1) + ")");
  return Layout(l.shape()[i], l.stride()[i]);
}

Layout mode(const Layout& l, std::initializer_list<int> path) {
  Layout r = l;
  for (int i : path) r = mode(r, i);
  return r;
}

Integer size(const Layout& l, int i) { return size(mode(l, i)); }

// ---- Mode manipulation ----

Layout select(const Layout& l, const std::vector<int>& modes) {
  std::vector<Layout> out;
  for (int i : modes) out.push_back(mode(l, i));
  return make_layout_from_modes(out);
}

Layout take(const Layout& l, int begin, int end) {
  if (!(0 <= begin && begin < end && end <= rank(l)))
    fail("take: the range [" + std::to_string(begin) + "," + std::to_string(end) + ") is not a non-empty range of modes of " +
         to_string(l) + " (rank " + std::to_string(rank(l)) + ")");
  std::vector<Layout> out;
  for (int i = begin; i < end; ++i) out.push_back(mode(l, i));
  return make_layout_from_modes(out);
}

Layout group_modes(const Layout& l, int begin, int end) {
  int r = rank(l);
  if (end == -1) end = r;
  if (!(0 <= begin && begin <= end && end <= r))
    fail("group_modes: the range [" + std::to_string(begin) + "," + std::to_string(end) + ") is out of bounds for " +
         to_string(l) + " (rank " + std::to_string(r) + ")");
  std::vector<IntTuple> sh, st, gsh, gst;
  for (int i = 0; i < begin; ++i) {
    sh.push_back(l.shape()[i]);
    st.push_back(l.stride()[i]);
  }
  for (int i = begin; i < end; ++i) {
    gsh.push_back(l.shape()[i]);
    gst.push_back(l.stride()[i]);
  }
  if (begin < end) {
    sh.emplace_back(std::move(gsh));
    st.emplace_back(std::move(gst));
  }
  for (int i = end; i < r; ++i) {
    sh.push_back(l.shape()[i]);
    st.push_back(l.stride()[i]);
  }
  return Layout(IntTuple(std::move(sh)), IntTuple(std::move(st)));
}

Layout flatten(const Layout& l) { return Layout(flatten(l.shape()), flatten(l.stride())); }

Layout unflatten(const Layout& l, const IntTuple& profile) {
  return Layout(unflatten(l.shape(), profile), unflatten(l.stride(), profile));
}

Layout append(const Layout& l, const Layout& x) {
  return Layout(append(l.shape(), x.shape()), append(l.stride(), x.stride()));
}

Layout prepend(const Layout& l, const Layout& x) {
  return Layout(prepend(l.shape(), x.shape()), prepend(l.stride(), x.stride()));
}

Layout append(const Layout& l, int n) {
  int r = rank(l);
  if (n < r) fail("append: cannot pad " + to_string(l) + " (rank " + std::to_string(r) + ") to rank " + std::to_string(n));
  if (n == r) return l;
  Layout out = l;
  for (int i = r; i < n; ++i) out = append(out, Layout(1, 0));
  return out;
}

namespace {
IntTuple zip_tuples(const IntTuple& a, const IntTuple& b) {
  if (a.is_leaf()) return IntTuple{IntTuple{a, b}};
  if (b.is_leaf() || a.rank() != b.rank())
    fail("zip: mismatched ranks " + to_string(a) + " and " + to_string(b));
  std::vector<IntTuple> out;
  for (int i = 0; i < a.rank(); ++i) out.push_back(IntTuple{a[i], b[i]});
  return IntTuple(std::move(out));
}
}  // namespace

Layout zip(const Layout& a, const Layout& b) {
  return Layout(zip_tuples(a.shape(), b.shape()), zip_tuples(a.stride(), b.stride()));
}

// ---- Coordinates ----

Integer crd2idx(const IntTuple& coord, const Layout& l) { return l(coord); }
IntTuple idx2crd(const IntTuple& idx, const Layout& l) { return idx2crd(idx, l.shape()); }

}  // namespace cutejit
