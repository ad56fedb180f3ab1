// Which TMA boxes fill a shared-memory tile (tma_partition): found from the tile's layout and
// its coordinate tensor, and checked at every element.
#include <bit>
#include <map>
#include <string>

#include "cutejit/atom/sm90/tma_partition.hpp"
#include "layout/index_table.hpp"

namespace cutejit::detail {

namespace {
std::string coordinate_string(const std::vector<int64_t>& c) {
  std::string s = "(";
  for (size_t i = 0; i < c.size(); ++i) s += (i ? ", " : "") + std::to_string(c[i]);
  return s + ")";
}
}  // namespace

std::optional<Swizzle> tma_swizzle_of(TmaSwizzle swizzle, int element_bytes) {
  // TMA XORs byte-address bits [4, 4 + b) with [7, 7 + b); in elements, from bit 4 - log2(e).
  const int base = 4 - std::countr_zero(unsigned(element_bytes));
  switch (swizzle) {
    case TmaSwizzle::bytes128: return Swizzle(3, base, 3);
    case TmaSwizzle::bytes64: return Swizzle(2, base, 3);
    case TmaSwizzle::bytes32: return Swizzle(1, base, 3);
    default: return std::nullopt;
  }
}

std::vector<TmaBoxPlacement> place_tma_boxes(const Layout& smem, const std::vector<Layout>& coords, const std::vector<int64_t>& box,
                                             Where w) {
  const std::string name = "tma_partition";
  // Modes of equal sizes enumerate their elements in the same (colexicographic) order, however
  // each is nested.
  auto same_shape = [&](const Layout& c) {
    if (rank(c) != rank(smem)) return false;
    for (int m = 0; m < rank(c); ++m)
      if (!(size(mode(c, m)) == size(mode(smem, m)))) return false;
    return true;
  };
  for (const Layout& c : coords)
    if (!is_static(c) || !same_shape(c))
      fail(name + ": the coordinate tensor's tile " + to_string(c) + " must have the shared tile's static shape " +
               to_string(smem.shape()),
           w);
  const int rank = int(box.size());
  int64_t box_elements = 1;
  for (int64_t b : box) box_elements *= b;
  const std::vector<int64_t> offset = index_table(smem);
  std::vector<std::vector<int64_t>> along;
  for (const Layout& c : coords) along.push_back(index_table(c));
  const int64_t elements = int64_t(offset.size());
  if (elements % box_elements != 0)
    fail(name + ": the tile's " + std::to_string(elements) + " elements are not a whole number of the map's boxes of " +
             std::to_string(box_elements),
         w);

  // Each box is placed by its first element (offset a multiple of the box's size); every other
  // element must then sit where the box, filled row-major in the map's modes, puts it.
  std::map<int64_t, TmaBoxPlacement> boxes;
  // Boxes fill consecutive offsets: the tile must hold its elements at 0 ... size - 1.
  std::vector<bool> seen(size_t(elements), false);
  for (int64_t i = 0; i < elements; ++i) {
    const int64_t o = offset[size_t(i)];
    if (o < 0 || o >= elements || seen[size_t(o)])
      fail(name + ": the shared tile " + to_string(smem) + " is not a compact arrangement of its " + std::to_string(elements) +
               " elements (element " + std::to_string(i) + " at offset " + std::to_string(o) + "), so boxes cannot fill it",
           w);
    seen[size_t(o)] = true;
  }
  std::vector<int64_t> within(static_cast<size_t>(rank));
  for (int64_t i = 0; i < elements; ++i) {
    const int64_t o = offset[size_t(i)];
    int64_t rest = o % box_elements;
    for (int d = rank - 1; d >= 0; --d) {
      within[size_t(d)] = rest % box[size_t(d)];
      rest /= box[size_t(d)];
    }
    std::vector<int64_t> origin(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) origin[size_t(d)] = along[size_t(d)][size_t(i)] - within[size_t(d)];
    auto [it, first] = boxes.try_emplace(o - o % box_elements, TmaBoxPlacement{o - o % box_elements, origin});
    if (!first && it->second.origin != origin) {
      std::vector<int64_t> at(static_cast<size_t>(rank));
      for (int d = 0; d < rank; ++d) at[size_t(d)] = along[size_t(d)][size_t(i)];
      fail(name + ": the shared tile " + to_string(smem) + " does not hold the tensor's boxes of " + coordinate_string(box) +
               " as TMA writes them: the element at coordinate " + coordinate_string(at) + " (from the tile's origin) is at offset " +
               std::to_string(o) + ", but the box there starts at " + coordinate_string(it->second.origin) +
               " and would put it elsewhere",
           w);
    }
  }
  std::vector<TmaBoxPlacement> out;
  for (auto& [_, p] : boxes) out.push_back(std::move(p));
  return out;
}

}  // namespace cutejit::detail
