/** \file
 * Layout: a pair of congruent IntTuples shape:stride, a function from coordinates to offsets.
 * (The by-mode tiler, Tile, is in tile.hpp, included at the end.)
 */
#pragma once

#include <cutejit/layout/int_tuple.hpp>

#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cutejit {

class Layout {
 public:
  /// CuTe's default Layout<_1,_0>: "1:0".
  Layout() : shape_(1), stride_(0) {}
  /// shape:stride; throws cutejit::Error unless congruent.
  Layout(IntTuple shape, IntTuple stride);

  const IntTuple& shape() const { return shape_; }
  const IntTuple& stride() const { return stride_; }

  /// Evaluate at a 1-D index (colexicographic) or a (hierarchical) coordinate; static or
  /// dynamic (an Int, or an IntTuple with traced leaves), giving a static or dynamic offset.
  template <class C>
  Integer operator()(const C& coord) const { return evaluate(IntTuple(coord)); }
  template <class... Ts, std::enable_if_t<(sizeof...(Ts) >= 2), int> = 0>
  Integer operator()(const Ts&... cs) const { return evaluate(IntTuple{IntTuple(cs)...}); }
  Integer evaluate(const IntTuple& coord) const;

  friend bool operator==(const Layout& a, const Layout& b) {
    return a.shape_ == b.shape_ && a.stride_ == b.stride_;
  }
  friend bool operator!=(const Layout& a, const Layout& b) { return !(a == b); }

 private:
  IntTuple shape_, stride_;
};

/// Tags for make_layout(shape, LayoutLeft{}) / make_layout(shape, LayoutRight{}).
struct LayoutLeft {};
struct LayoutRight {};
using GenColMajor = LayoutLeft;
using GenRowMajor = LayoutRight;

// ---- Printing and parsing ("(4,(2,3)):(1,(4,8))") ----
std::string to_string(const Layout& l);
std::ostream& operator<<(std::ostream& os, const Layout& l);
/// Parses "shape:stride" (spaces allowed). Throws cutejit::Error with a caret line.
Layout parse_layout(std::string_view text);

// ---- Construction ----
Layout make_layout(const IntTuple& shape, const IntTuple& stride);
Layout make_layout(const IntTuple& shape);  ///< column-major (LayoutLeft); size-1 modes get stride 0
Layout make_layout(const IntTuple& shape, LayoutLeft);
Layout make_layout(const IntTuple& shape, LayoutRight);
Layout make_layout_row_major(const IntTuple& shape);
/// Concatenate layouts as modes: make_layout(a, b) is (shape(a),shape(b)):(stride(a),stride(b)).
Layout make_layout_from_modes(const std::vector<Layout>& modes);
template <class... Ls, std::enable_if_t<(sizeof...(Ls) >= 1 && (std::is_same_v<Ls, Layout> && ...)), int> = 0>
Layout make_layout(const Ls&... ls) { return make_layout_from_modes(std::vector<Layout>{ls...}); }
/// Compact layout whose modes are ordered by `order` (CuTe make_ordered_layout).
Layout make_ordered_layout(const IntTuple& shape, const IntTuple& order);
/// Compact layout with the stride order of `l` (stride-0 modes are kept 0).
Layout make_layout_like(const Layout& l);

// ---- Queries ----
Integer size(const Layout& l);
Integer cosize(const Layout& l);
bool is_static(const Layout& l);  ///< no dynamic leaf in shape or stride
int rank(const Layout& l);
int depth(const Layout& l);
const IntTuple& shape(const Layout& l);
const IntTuple& stride(const Layout& l);
/// The i-th mode as a Layout (mode 0 of a non-tuple layout is itself).
Layout mode(const Layout& l, int i);
/// Nested mode: mode(l, {i, j}) == mode(mode(l, i), j).
Layout mode(const Layout& l, std::initializer_list<int> path);
template <int... Is>
Layout get(const Layout& l) { return mode(l, {Is...}); }
Integer size(const Layout& l, int i);  ///< size of mode i

// ---- Mode manipulation ----
Layout select(const Layout& l, const std::vector<int>& modes);
Layout take(const Layout& l, int begin, int end);
/// Group modes [begin, end) into one mode (CuTe group<B,E>).
Layout group_modes(const Layout& l, int begin, int end);
Layout flatten(const Layout& l);
Layout unflatten(const Layout& l, const IntTuple& profile);
Layout append(const Layout& l, const Layout& x);
Layout prepend(const Layout& l, const Layout& x);
/// Pad l with 1:0 modes to rank n (CuTe append<N>).
Layout append(const Layout& l, int n);
Layout zip(const Layout& a, const Layout& b);

// ---- Coordinates ----
Integer crd2idx(const IntTuple& coord, const Layout& l);
IntTuple idx2crd(const IntTuple& idx, const Layout& l);  ///< natural coordinate in shape(l)

}  // namespace cutejit

#include <cutejit/layout/tile.hpp>  // NOLINT: Tile is part of the layout vocabulary
