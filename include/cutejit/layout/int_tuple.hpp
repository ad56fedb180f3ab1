/** \file
 * IntTuple: CuTe's hierarchical integer tuple (an integer, or a tuple of IntTuples).
 *
 * A leaf is an Integer: static (an int64_t) or dynamic (a traced Int, inside a kernel trace).
 * `value()` reads a static leaf; `leaf()` reads either kind. A coordinate may also hold the
 * slicing wildcard `_` as a leaf. Shape, Stride, Coord and Step are all IntTuples.
 */
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cutejit/layout/integer.hpp"

namespace cutejit {

/// CuTe's `_`: in a coordinate, "all of this mode" (slicing keeps the modes it marks).
struct Underscore {};
inline constexpr Underscore _{};

class IntTuple {
 public:
  /// The empty tuple "()".
  IntTuple() : leaf_(false) {}
  /// A leaf integer.
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IntTuple(T v) : leaf_(true), value_(static_cast<int64_t>(v)) {}  // NOLINT (implicit on purpose)
  /// A leaf that may be dynamic.
  IntTuple(const Integer& v) : leaf_(true), value_(v) {}  // NOLINT
  /// A dynamic leaf from a traced int (or anything that reads as one).
  IntTuple(const Int& v, detail::Where w = detail::Where::current()) : leaf_(true), value_(v, w) {}  // NOLINT
  template <class R>
    requires(!std::same_as<R, Int> && !std::same_as<R, Integer> &&
             requires(const R& r) { { r.read(detail::Where::current()) } -> std::same_as<Int>; })
  IntTuple(const R& r, detail::Where w = detail::Where::current()) : IntTuple(r.read(w), w) {}  // NOLINT
  /// The wildcard leaf `_` (only meaningful in a coordinate given to slice).
  IntTuple(Underscore) : leaf_(true), underscore_(true) {}  // NOLINT
  /// A tuple: IntTuple{4, IntTuple{2, 3}} is (4,(2,3)); IntTuple{8} is the rank-1 tuple (8).
  IntTuple(std::initializer_list<IntTuple> elems) : leaf_(false), elems_(elems) {}
  explicit IntTuple(std::vector<IntTuple> elems) : leaf_(false), elems_(std::move(elems)) {}

  static IntTuple tuple(std::vector<IntTuple> elems) { return IntTuple(std::move(elems)); }

  bool is_leaf() const { return leaf_; }
  bool is_tuple() const { return !leaf_; }
  bool is_underscore() const { return underscore_; }
  /// Static leaf value; throws cutejit::Error on a tuple, `_` or a dynamic leaf.
  int64_t value() const;
  /// The leaf, static or dynamic; throws cutejit::Error on a tuple or `_`.
  const Integer& leaf() const;
  /// Number of elements of a tuple (1 for a leaf, as CuTe's rank).
  int rank() const { return leaf_ ? 1 : static_cast<int>(elems_.size()); }
  /// i-th element; on a leaf, element 0 is the leaf itself (CuTe's get<0>(int)).
  const IntTuple& operator[](int i) const;
  const std::vector<IntTuple>& elems() const { return elems_; }
  std::vector<IntTuple>& elems() { return elems_; }

  friend bool operator==(const IntTuple& a, const IntTuple& b);
  friend bool operator!=(const IntTuple& a, const IntTuple& b) { return !(a == b); }

 private:
  bool leaf_;
  bool underscore_ = false;
  Integer value_;
  std::vector<IntTuple> elems_;
};

using Shape = IntTuple;
using Stride = IntTuple;
using Coord = IntTuple;
using Step = IntTuple;

template <int I>
const IntTuple& get(const IntTuple& t) { return t[I]; }
template <int I0, int I1, int... Is>
const IntTuple& get(const IntTuple& t) { return get<I1, Is...>(t[I0]); }

// ---- Printing and parsing (CuTe notation: "(4,(2,3))", "8") ----
std::string to_string(const IntTuple& t);
std::ostream& operator<<(std::ostream& os, const IntTuple& t);
/// Parses "(4,(2,3))", "8", "()"; spaces allowed. Throws cutejit::Error with a caret line.
IntTuple parse_int_tuple(std::string_view text);

// ---- Structure ----
bool is_tuple(const IntTuple& t);
bool is_static(const IntTuple& t);           ///< no dynamic leaf
bool has_underscore(const IntTuple& t);
int rank(const IntTuple& t);
int depth(const IntTuple& t);                ///< 0 for a leaf
Integer size(const IntTuple& t);             ///< product of the leaves
Integer product(const IntTuple& t);          ///< same as size
Integer sum(const IntTuple& t);
IntTuple flatten(const IntTuple& t);         ///< depth <= 1; a leaf stays a leaf
IntTuple flatten_to_tuple(const IntTuple& t);  ///< always a (flat) tuple
IntTuple wrap(const IntTuple& t);            ///< leaf -> (leaf)
IntTuple unwrap(const IntTuple& t);          ///< rank-1 tuples -> their element (recursively)
IntTuple product_each(const IntTuple& t);    ///< (product(t_0), product(t_1), ...)
IntTuple repeat_like(const IntTuple& t, int64_t x);
IntTuple append(const IntTuple& t, const IntTuple& x);
IntTuple prepend(const IntTuple& t, const IntTuple& x);
IntTuple take(const IntTuple& t, int begin, int end);
IntTuple select(const IntTuple& t, const std::vector<int>& modes);
IntTuple unflatten(const IntTuple& flat, const IntTuple& profile);
bool congruent(const IntTuple& a, const IntTuple& b);
bool weakly_congruent(const IntTuple& a, const IntTuple& b);
bool compatible(const IntTuple& a, const IntTuple& b);  ///< shape a fits as a sub-profile of b

// ---- Arithmetic ----
int64_t ceil_div(int64_t a, int64_t b);
IntTuple ceil_div(const IntTuple& a, const IntTuple& b);  ///< CuTe ceil_div on IntTuples
IntTuple shape_div(const IntTuple& a, const IntTuple& b); ///< CuTe shape_div (checks divisibility)
IntTuple elem_scale(const IntTuple& a, const IntTuple& b);
IntTuple inner_product_tuple(const IntTuple& a, const IntTuple& b);
Integer inner_product(const IntTuple& a, const IntTuple& b);
bool evenly_divides(const IntTuple& shape, const IntTuple& tiler);

// ---- Compact strides and coordinate maps ----
IntTuple compact_col_major(const IntTuple& shape, const Integer& current = 1);
IntTuple compact_row_major(const IntTuple& shape, const Integer& current = 1);
/// Strides ordered by `order` (same profile as shape or a leaf per mode): CuTe's compact_order.
IntTuple compact_order(const IntTuple& shape, const IntTuple& order);
/// Index of a coordinate in a compact column-major (colexicographic) shape.
Integer crd2idx(const IntTuple& coord, const IntTuple& shape);
/// Index of a coordinate under shape:stride (integer coords are split colexicographically).
Integer crd2idx(const IntTuple& coord, const IntTuple& shape, const IntTuple& stride);
/// Natural coordinate of any (1-D, h-D or natural) coordinate in shape; a 1-D index is split
/// colexicographically and the last mode is not wrapped, as CuTe.
IntTuple idx2crd(const IntTuple& coord, const IntTuple& shape);
IntTuple idx2crd(const Integer& idx, const IntTuple& shape, const IntTuple& stride);

}  // namespace cutejit
