/** \file
 * IntTuple: CuTe's hierarchical integer tuple (an integer, or a tuple of IntTuples).
 *
 * Leaves are static int64_t values for now. Every read of a leaf goes through
 * IntTuple::value() / is_leaf() so that a leaf can later also hold a traced value.
 * Shape, Stride, Coord and Step are all IntTuples.
 */
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cutejit {

class IntTuple {
 public:
  /// The empty tuple "()".
  IntTuple() : leaf_(false) {}
  /// A leaf integer.
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IntTuple(T v) : leaf_(true), value_(static_cast<int64_t>(v)) {}  // NOLINT (implicit on purpose)
  /// A tuple: IntTuple{4, IntTuple{2, 3}} is (4,(2,3)); IntTuple{8} is the rank-1 tuple (8).
  IntTuple(std::initializer_list<IntTuple> elems) : leaf_(false), elems_(elems) {}
  explicit IntTuple(std::vector<IntTuple> elems) : leaf_(false), elems_(std::move(elems)) {}

  static IntTuple tuple(std::vector<IntTuple> elems) { return IntTuple(std::move(elems)); }

  bool is_leaf() const { return leaf_; }
  bool is_tuple() const { return !leaf_; }
  /// Leaf value; throws cutejit::Error on a tuple.
  int64_t value() const;
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
  int64_t value_ = 0;
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
int rank(const IntTuple& t);
int depth(const IntTuple& t);                ///< 0 for a leaf
int64_t size(const IntTuple& t);             ///< product of the leaves
int64_t product(const IntTuple& t);          ///< same as size
int64_t sum(const IntTuple& t);
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
int64_t inner_product(const IntTuple& a, const IntTuple& b);
bool evenly_divides(const IntTuple& shape, const IntTuple& tiler);

// ---- Compact strides and coordinate maps ----
IntTuple compact_col_major(const IntTuple& shape, int64_t current = 1);
IntTuple compact_row_major(const IntTuple& shape, int64_t current = 1);
/// Strides ordered by `order` (same profile as shape or a leaf per mode): CuTe's compact_order.
IntTuple compact_order(const IntTuple& shape, const IntTuple& order);
/// Index of a coordinate in a compact column-major (colexicographic) shape.
int64_t crd2idx(const IntTuple& coord, const IntTuple& shape);
/// Index of a coordinate under shape:stride (integer coords are split colexicographically).
int64_t crd2idx(const IntTuple& coord, const IntTuple& shape, const IntTuple& stride);
/// Natural coordinate of a 1-D index in shape (the last mode is not wrapped, as CuTe).
IntTuple idx2crd(int64_t idx, const IntTuple& shape);
/// Natural coordinate of any (1-D, h-D or natural) coordinate in shape.
IntTuple idx2crd(const IntTuple& coord, const IntTuple& shape);
IntTuple idx2crd(int64_t idx, const IntTuple& shape, const IntTuple& stride);

}  // namespace cutejit
