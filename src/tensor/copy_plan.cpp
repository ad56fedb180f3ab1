// Trace-time analysis behind copy(src, dst): the widest vector that every access of the copy
// can provably use, from the layouts (contiguity), the pointers (alignment) and, for a
// predicated copy, the coordinate tensor (a predicate uniform over each vector).
#include <cutejit/tensor/copy.hpp>

#include <algorithm>

#include <cutejit/core/error.hpp>

namespace cutejit::detail {

namespace {

bool is_memory(const CopySide& s) { return s.space != Space::local; }

/// Every leaf stride of `l` whose mode has more than one element is a multiple of v.
bool strides_divisible(const IntTuple& shape, const IntTuple& stride, int64_t v) {
  if (shape.is_tuple()) {
    for (int i = 0; i < shape.rank(); ++i)
      if (!strides_divisible(shape[i], stride[i], v)) return false;
    return true;
  }
  const Integer& n = shape.leaf();
  return (n.is_static() && n.value() == 1) || divides(Integer(v), stride.leaf());
}

bool is_contiguous_run(const Layout& in_group, int64_t v) {
  Layout c = coalesce(in_group);
  return c.shape().is_leaf() && same(c.shape().leaf(), v) && same(c.stride().leaf(), 1);
}

/// The run of domain indices where the memory sides are contiguous: a layout over [0, n).
Layout common_run(const CopySide& src, const CopySide& dst) {
  if (is_memory(src) && is_memory(dst)) return max_common_layout(src.layout, dst.layout);
  if (is_memory(src)) return max_common_layout(src.layout, src.layout);
  if (is_memory(dst)) return max_common_layout(dst.layout, dst.layout);
  return Layout(1, 0);
}

/// Splits `l` into (vector, groups) by `tiler`, a layout of the 1-D domain (vector, rest)
/// shared by every side so that group r is the same elements everywhere; nullopt when the
/// algebra cannot (e.g. dynamic strides it cannot reason about): then no vector.
std::optional<std::pair<Layout, Layout>> split(const Layout& l, const Layout& tiler) {
  try {
    Layout z = composition(l, tiler);
    return std::make_pair(mode(z, 0), mode(z, 1));
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool side_ok(const CopySide& s, const std::pair<Layout, Layout>& parts, int64_t v, int element_bytes) {
  if (!is_memory(s)) return true;  // registers are accessed one element at a time
  if (!is_contiguous_run(parts.first, v)) return false;
  if (s.alignment < v * element_bytes) return false;
  if (!strides_divisible(parts.second.shape(), parts.second.stride(), v)) return false;
  if (s.swizzle) {
    // a swizzle keeps a run of v contiguous and aligned when it leaves the low log2(v) bits alone
    if ((int64_t(1) << s.swizzle->base()) < v || !divides(Integer(v), s.swizzle_base)) return false;
  }
  return true;
}

/// The predicate elem_less(coords, bound) is the same for all v elements of every group.
bool predicate_uniform(const CoordTensor& coords, const IntTuple& bound, const std::vector<Layout>& in_group,
                       const std::vector<Layout>& groups, int64_t v) {
  for (size_t k = 0; k < in_group.size(); ++k) {
    Layout c = coalesce(in_group[k]);
    if (c.stride().is_leaf() && c.stride().leaf().is_static() && c.stride().leaf().value() == 0) continue;
    // coordinate k runs over v consecutive values: it must start at a multiple of v, and the
    // bound must be a multiple of v, so that no group straddles the bound.
    Integer b = size(coords.modes() == 1 ? bound : bound[int(k)]);
    if (!is_contiguous_run(in_group[k], v) || !divides(Integer(v), b) || !divides(Integer(v), coords.origin()[k]) ||
        !strides_divisible(groups[k].shape(), groups[k].stride(), v))
      return false;
  }
  return true;
}

}  // namespace

CopyPlan plan_copy(const CopySide& src, const CopySide& dst, int element_bytes, const CoordTensor* coords,
                   const IntTuple* bound, Where w, int max_bytes) {
  Integer ns = size(src.layout), nd = size(dst.layout);
  if (ns.is_static() && nd.is_static() && ns.value() != nd.value())
    throw Error("copy: the source " + to_string(src.layout) + " has " + std::to_string(ns.value()) +
                    " elements but the destination " + to_string(dst.layout) + " has " + std::to_string(nd.value()) +
                    " (copy moves element i to element i: give tensors of the same size)",
                w);
  if (coords && !compatible(coords->shape(), src.layout.shape()) && !compatible(src.layout.shape(), coords->shape()))
    throw Error("copy_if: the coordinate tensor's shape " + to_string(coords->shape()) + " does not match the source " +
                    to_string(src.layout) + " (partition the identity tensor exactly like the source)",
                w);

  int64_t v = std::max<int64_t>(1, max_bytes / element_bytes);
  std::optional<Layout> run;
  try {
    run = common_run(src, dst);
  } catch (const Error&) {
    v = 1;
  }
  if (run) {
    Integer n = size(*run);
    int64_t longest = n.is_static() ? n.value() : 1;
    while (v > 1 && longest % v != 0) v /= 2;
  }
  for (; v > 1; v /= 2) {
    std::optional<Layout> tiler;
    try {
      Layout vec = composition(*run, Layout(v, 1));
      tiler = make_layout(vec, complement(vec, IntTuple(ns)));
    } catch (const Error&) {
      continue;
    }
    auto s = split(src.layout, *tiler), d = split(dst.layout, *tiler);
    if (!s || !d || !side_ok(src, *s, v, element_bytes) || !side_ok(dst, *d, v, element_bytes)) continue;
    CopyPlan p{int(v), s->first, s->second, d->first, d->second, {}, {}};
    if (coords) {
      bool ok = true;
      for (const Layout& c : coords->components()) {
        auto parts = split(c, *tiler);
        if (!parts) {
          ok = false;
          break;
        }
        p.coord_in_group.push_back(parts->first);
        p.coord_groups.push_back(parts->second);
      }
      if (!ok || !predicate_uniform(*coords, *bound, p.coord_in_group, p.coord_groups, v)) continue;
    }
    return p;
  }
  // One element at a time: group r is element r.
  CopyPlan p{1, Layout(1, 0), src.layout, Layout(1, 0), dst.layout, {}, {}};
  if (coords)
    for (const Layout& c : coords->components()) {
      p.coord_in_group.emplace_back(1, 0);
      p.coord_groups.push_back(c);
    }
  return p;
}

}  // namespace cutejit::detail
