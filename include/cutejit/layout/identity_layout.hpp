/** \file
 * The identity layout (CuTe make_identity_layout): shape:(1@0,1@1,...), a layout whose value at
 * a coordinate is that coordinate. CuTe writes its strides as basis elements (`1@k` is a unit
 * step in coordinate k; `1@0@1` a unit step in sub-coordinate 0 of mode 1); cutejit's strides
 * are integers, so the identity layout is its own type, and each top-level coordinate is also
 * available as an ordinary layout (what coordinate tensors are partitioned with).
 */
#pragma once

#include <cutejit/layout/layout.hpp>

#include <string>
#include <vector>

namespace cutejit {

class IdentityLayout {
 public:
  explicit IdentityLayout(IntTuple shape);

  const IntTuple& shape() const { return shape_; }
  /// The natural coordinate of `coord` in the shape (a 1-D index is split colexicographically):
  /// for shape (4,(2,3)), index 13 is (1,(1,1)).
  IntTuple operator()(const IntTuple& coord) const { return idx2crd(coord, shape_); }
  /// Coordinate k (of a top-level mode, as a 1-D index within that mode) as an ordinary layout
  /// of the same shape: the compact strides of mode k, 0 in every other mode. A leaf shape has
  /// one, the layout itself.
  const std::vector<Layout>& coordinate_layouts() const { return coordinate_layouts_; }

 private:
  IntTuple shape_;
  std::vector<Layout> coordinate_layouts_;
};

IdentityLayout make_identity_layout(const IntTuple& shape);
Integer size(const IdentityLayout& l);
int rank(const IdentityLayout& l);
/// CuTe notation: "(4,6):(1@0,1@1)", "(4,(2,3)):(1@0,(1@0@1,1@1@1))", "8:1".
std::string to_string(const IdentityLayout& l);

}  // namespace cutejit
