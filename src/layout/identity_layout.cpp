// The identity layout: its coordinate layouts and its printing with basis strides.
#include <cutejit/layout/identity_layout.hpp>

namespace cutejit {

namespace {

/// Coordinate layout k: mode k keeps its compact strides, every other mode is stride 0.
std::vector<Layout> per_mode_layouts(const IntTuple& shape) {
  if (shape.is_leaf()) return {make_layout(shape)};
  std::vector<Layout> out;
  for (int k = 0; k < shape.rank(); ++k) {
    std::vector<IntTuple> stride;
    for (int i = 0; i < shape.rank(); ++i)
      stride.push_back(i == k ? compact_col_major(shape[i]) : repeat_like(shape[i], 0));
    out.emplace_back(shape, IntTuple(std::move(stride)));
  }
  return out;
}

/// The basis stride of the leaf at `path`: CuTe prints E<i,j> (mode i, sub-mode j) as 1@j@i.
std::string basis_strides(const IntTuple& shape, std::vector<int>& path) {
  if (shape.is_leaf()) {
    std::string s = "1";
    for (auto it = path.rbegin(); it != path.rend(); ++it) s += "@" + std::to_string(*it);
    return s;
  }
  std::string s = "(";
  for (int i = 0; i < shape.rank(); ++i) {
    path.push_back(i);
    s += (i ? "," : "") + basis_strides(shape[i], path);
    path.pop_back();
  }
  return s + ")";
}

}  // namespace

IdentityLayout::IdentityLayout(IntTuple shape)
    : shape_(std::move(shape)), coordinate_layouts_(per_mode_layouts(shape_)) {}

IdentityLayout make_identity_layout(const IntTuple& shape) { return IdentityLayout(shape); }
Integer size(const IdentityLayout& l) { return size(l.shape()); }
int rank(const IdentityLayout& l) { return rank(l.shape()); }

std::string to_string(const IdentityLayout& l) {
  std::vector<int> path;  // a leaf shape has the plain unit stride (CuTe's E<>): "8:1"
  return to_string(l.shape()) + ":" + basis_strides(l.shape(), path);
}

}  // namespace cutejit
