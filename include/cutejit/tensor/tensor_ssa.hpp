/** \file
 * Register tiles as values (CuTeDSL's TensorSSA): a static shape and one traced value per
 * element. `load(t)` reads a tensor (through a register fragment and a vectorised copy),
 * arithmetic is elementwise, `map`/`zip_map`/`where` build new tiles, `reduce` folds them,
 * `to<U>()` converts, and `store(tile, t)` writes back. Every element is an SSA value, so a
 * tile costs registers only, and a chain of elementwise operations is one fused sequence of
 * instructions with no intermediate memory (what lazy expression templates would buy).
 *
 * Like any Value, a tile made inside an if_/for_ region is not visible after it.
 */
#pragma once

#include <functional>
#include <vector>

#include "cutejit/tensor/copy.hpp"
#include "cutejit/tensor/fragment.hpp"
#include "cutejit/tensor/reduce.hpp"

namespace cutejit {

template <Element T>
class TensorSSA {
 public:
  using element_type = T;
  TensorSSA(IntTuple shape, std::vector<Value<T>> values) : shape_(std::move(shape)), values_(std::move(values)) {}
  /// A tile of `shape` filled with one value.
  TensorSSA(IntTuple shape, const Operand<T>& fill) : shape_(std::move(shape)) {
    values_.assign(size_t(cutejit::size(shape_).value()), Value<T>(fill.id));
  }

  const IntTuple& shape() const { return shape_; }
  int size() const { return int(values_.size()); }
  /// Element i, colexicographic over the shape.
  const Value<T>& operator[](int i) const { return values_.at(size_t(i)); }
  const std::vector<Value<T>>& values() const { return values_; }

  /// f(element) for every element; the result's element type is f's.
  template <class F>
  auto map(F&& f) const {
    using U = typename decltype(f(values_[0]))::element_type;
    std::vector<Value<U>> out;
    for (const auto& v : values_) out.push_back(f(v));
    return TensorSSA<U>(shape_, std::move(out));
  }
  /// Converts every element (CuTeDSL .to(dtype)).
  template <Element U>
  TensorSSA<U> to(detail::Where w = detail::Where::current()) const {
    return map([&](const Value<T>& v) { return cast<U>(v, w); });
  }

 private:
  IntTuple shape_;
  std::vector<Value<T>> values_;
};

namespace detail {
[[noreturn]] void tile_shape_error(const IntTuple& a, const IntTuple& b, const char* op, Where w);
template <class A, class B>
void check_same_shape(const TensorSSA<A>& a, const TensorSSA<B>& b, const char* op, Where w) {
  if (a.size() != b.size()) tile_shape_error(a.shape(), b.shape(), op, w);
}
}  // namespace detail

/// f(a_i, b_i) for every element of two tiles of one shape.
template <Element A, Element B, class F>
auto zip_map(const TensorSSA<A>& a, const TensorSSA<B>& b, F&& f, detail::Where w = detail::Where::current()) {
  detail::check_same_shape(a, b, "zip_map", w);
  using U = typename decltype(f(a[0], b[0]))::element_type;
  std::vector<Value<U>> out;
  for (int i = 0; i < a.size(); ++i) out.push_back(f(a[i], b[i]));
  return TensorSSA<U>(a.shape(), std::move(out));
}

/// cond_i ? a_i : b_i.
template <Element T>
TensorSSA<T> where(const TensorSSA<bool>& cond, const TensorSSA<T>& a, const TensorSSA<T>& b,
                   detail::Where w = detail::Where::current()) {
  detail::check_same_shape(cond, a, "where", w);
  detail::check_same_shape(a, b, "where", w);
  std::vector<Value<T>> out;
  for (int i = 0; i < a.size(); ++i) out.push_back(select(cond[i], a[i], b[i]));
  return TensorSSA<T>(a.shape(), std::move(out));
}

#define CUTEJIT_TILE_BINARY(OP, R)                                                                  \
  template <Element T>                                                                              \
  TensorSSA<R> operator OP(const TensorSSA<T>& a, const TensorSSA<T>& b) {                          \
    return zip_map(a, b, [](const Value<T>& x, const Value<T>& y) { return x OP y; });              \
  }                                                                                                 \
  template <Element T>                                                                              \
  TensorSSA<R> operator OP(const TensorSSA<T>& a, const std::type_identity_t<Operand<T>>& s) {      \
    return a.map([&](const Value<T>& x) { return x OP s; });                                        \
  }                                                                                                 \
  template <Element T>                                                                              \
  TensorSSA<R> operator OP(const std::type_identity_t<Operand<T>>& s, const TensorSSA<T>& a) {      \
    return a.map([&](const Value<T>& x) { return s OP x; });                                        \
  }
CUTEJIT_TILE_BINARY(+, T)
CUTEJIT_TILE_BINARY(-, T)
CUTEJIT_TILE_BINARY(*, T)
CUTEJIT_TILE_BINARY(/, T)
CUTEJIT_TILE_BINARY(<, bool)
CUTEJIT_TILE_BINARY(<=, bool)
CUTEJIT_TILE_BINARY(>, bool)
CUTEJIT_TILE_BINARY(>=, bool)
#undef CUTEJIT_TILE_BINARY
template <Element T>
TensorSSA<T> operator-(const TensorSSA<T>& a) {
  return a.map([](const Value<T>& x) { return -x; });
}

/// Folds every element into `init` (a balanced tree, so independent operations overlap).
template <Element T>
Value<T> reduce(const TensorSSA<T>& a, Reduce op, const std::type_identity_t<Operand<T>>& init) {
  std::vector<Value<T>> level = a.values();
  while (level.size() > 1) {
    std::vector<Value<T>> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(detail::combine(op, level[i], level[i + 1]));
    if (level.size() % 2) next.push_back(level.back());
    level = std::move(next);
  }
  Value<T> acc(init.id);
  return level.empty() ? acc : detail::combine(op, acc, level[0]);
}

/// Folds the modes that `profile` does not mark with `_` (CuTeDSL reduce with a reduction
/// profile, weakly congruent to the shape): over a (4,(5,6)) tile, (_,1) folds mode 1 into a
/// (4) tile, (_,(_,1)) folds the 6 into a (4,5) tile, (1,(_,1)) gives a (5) tile. The result
/// has the kept modes in order, flattened as CuTe's slice; folding everything gives shape 1.
template <Element T>
TensorSSA<T> reduce(const TensorSSA<T>& a, Reduce op, const std::type_identity_t<Operand<T>>& init,
                    const IntTuple& profile, detail::Where w = detail::Where::current()) {
  const IntTuple& shape = a.shape();
  if (!weakly_congruent(profile, shape))
    detail::fail("reduce: the reduction profile " + to_string(profile) + " does not match the tile shape " +
                     to_string(shape) + " (give one entry per mode: `_` keeps it, 1 folds it)",
                 w);
  Layout full = make_layout(shape);  // element i of a tile is at column-major index i
  Layout kept = slice(profile, full), folded = dice(profile, full);
  bool all_folded = !has_underscore(profile);
  int64_t n_kept = all_folded ? 1 : size(kept).value();
  std::vector<Value<T>> out;
  for (int64_t r = 0; r < n_kept; ++r) {
    int64_t base = all_folded ? 0 : kept(IntTuple(r)).value();
    std::vector<Value<T>> run;
    for (int64_t j = 0; j < size(folded).value(); ++j) run.push_back(a[int(base + folded(IntTuple(j)).value())]);
    out.push_back(reduce(TensorSSA<T>(IntTuple(int64_t(run.size())), std::move(run)), op, init));
  }
  return TensorSSA<T>(all_folded ? IntTuple(1) : kept.shape(), std::move(out));
}

/// Folds mode `m` of a tile (rank >= 2): the result has the other modes, a single one unwrapped
/// ((4,8) reduced over mode 1 is a 4 tile). The same as the profile with 1 at m and `_` elsewhere.
template <Element T>
TensorSSA<T> reduce(const TensorSSA<T>& a, Reduce op, const std::type_identity_t<Operand<T>>& init, int m,
                    detail::Where w = detail::Where::current()) {
  const IntTuple& shape = a.shape();
  if (shape.is_leaf() || m < 0 || m >= shape.rank())
    detail::fail("reduce: mode " + std::to_string(m) + " does not exist in a tile of shape " + to_string(shape), w);
  std::vector<IntTuple> profile(size_t(shape.rank()), IntTuple(_));
  profile[size_t(m)] = 1;
  TensorSSA<T> r = reduce(a, op, init, IntTuple(std::move(profile)), w);
  if (r.shape().is_tuple() && r.shape().rank() == 1) return TensorSSA<T>(r.shape()[0], r.values());
  return r;
}

/// Reads every element of `t` (static size) into a tile, through a register fragment so that
/// memory is read with the widest provable vector accesses.
template <Element T>
TensorSSA<T> load(const Tensor<T>& t, detail::Where w = detail::Where::current()) {
  Tensor<T> regs = t.data().space() == Space::local ? t : make_fragment_like(t, w);
  if (t.data().space() != Space::local) copy(t, regs, w);
  std::vector<Value<T>> v;
  Integer n = size(regs.layout());
  for (int64_t i = 0; i < n.value(); ++i) v.push_back(regs(IntTuple(i), w).read(w));
  return TensorSSA<T>(t.shape(), std::move(v));
}

/// The predicated load of a residue tile: elements with elem_less(coords(i), bound) are read,
/// the others are `fill` (by default 0 of the element type, whichever it is).
template <Element T>
TensorSSA<T> load_if(const Tensor<T>& t, const CoordTensor& coords, const IntTuple& bound, const std::type_identity_t<Operand<T>>& fill,
                     detail::Where w = detail::Where::current()) {
  Tensor<T> regs = make_fragment_like(t, w);
  Integer n = size(regs.layout());
  for (int64_t i = 0; i < n.value(); ++i) regs(IntTuple(i), w) = fill;
  copy_if(coords, bound, t, regs, w);
  std::vector<Value<T>> v;
  for (int64_t i = 0; i < n.value(); ++i) v.push_back(regs(IntTuple(i), w).read(w));
  return TensorSSA<T>(t.shape(), std::move(v));
}
template <Element T>
TensorSSA<T> load_if(const Tensor<T>& t, const CoordTensor& coords, const IntTuple& bound, detail::Where w = detail::Where::current()) {
  return load_if(t, coords, bound, Operand<T>(0, w), w);
}

/// Writes a tile into `t` (same size), through a register fragment and a vectorised copy.
template <Element T>
void store(const TensorSSA<T>& a, const Tensor<T>& t, detail::Where w = detail::Where::current()) {
  Tensor<T> regs = t.data().space() == Space::local ? t : make_fragment_like(t, w);
  if (int64_t(a.size()) != size(regs.layout()).value())
    detail::tile_shape_error(a.shape(), t.shape(), "store", w);
  for (int i = 0; i < a.size(); ++i) regs(IntTuple(i), w) = Operand<T>(a[i], w);
  if (t.data().space() != Space::local) copy(regs, t, w);
}

/// The predicated store of a residue tile: only elements with elem_less(coords(i), bound).
template <Element T>
void store_if(const TensorSSA<T>& a, const Tensor<T>& t, const CoordTensor& coords, const IntTuple& bound,
              detail::Where w = detail::Where::current()) {
  Tensor<T> regs = make_fragment_like(t, w);
  for (int i = 0; i < a.size(); ++i) regs(IntTuple(i), w) = Operand<T>(a[i], w);
  copy_if(coords, bound, regs, t, w);
}

}  // namespace cutejit
