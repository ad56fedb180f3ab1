/** \file
 * CuTe's tma_partition for one CTA: the TMA boxes that move a tile between a tensor in global
 * memory and a shared-memory tensor, derived from the two tensors' layouts.
 *
 *   CoordTensor gA = local_tile(make_identity_tensor({m, k}), {128, 64}, {tm, kt});
 *   TmaPartition<bf16> boxes = tma_partition(map_a, sA, gA);
 *   pipe.load(map_a, boxes, state);   // one TMA load per box
 *
 * `smem` is the tile in shared memory in the layout the boxes leave there (its swizzle the
 * map's); `gmem` is the same tile's coordinates in the tensor the map describes, a slice of
 * `make_identity_tensor` of its shape whose modes are the map's (outermost first), shaped
 * like `smem` (`select` reorders modes: an MN-major operand stored K x M is the coordinate
 * tensor of (K, M) seen as (M, K)). A box fills box-size consecutive offsets of `smem` (before
 * the swizzle) in row-major order of the map's modes; the partition finds, for each box, its
 * offset in `smem` and its origin in `gmem`, and checks every element of the tile: it lies in
 * exactly one box, where the box puts it. A tile that boxes cannot fill (an element that would
 * land elsewhere, a tile not a whole number of boxes, another swizzle) is a trace-time error
 * at the caller's line, not a scrambled tile.
 */
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cutejit/atom/sm90/tma.hpp"
#include "cutejit/tensor/identity.hpp"

namespace cutejit {

namespace detail {
/// Where one box sits: elements into the shared tile (before its swizzle) and its origin's
/// offset from the coordinate tensor's, in the map's mode order.
struct TmaBoxPlacement {
  int64_t smem_offset = 0;
  std::vector<int64_t> origin;
};
/// The boxes of extents `box` (outermost first) that cover a tile whose element i is at
/// `smem(i)` in shared memory and at `coords[d](i)` along the map's mode d (static layouts of
/// one shape), in order of their shared-memory offsets; checked element by element.
std::vector<TmaBoxPlacement> place_tma_boxes(const Layout& smem, const std::vector<Layout>& coords, const std::vector<int64_t>& box,
                                             Where w);
/// The swizzle a TMA box with `swizzle` leaves on a tile of `element_bytes` elements, as a
/// swizzle of element offsets (none: no swizzle).
std::optional<Swizzle> tma_swizzle_of(TmaSwizzle swizzle, int element_bytes);
}  // namespace detail

/// One TMA box of a partition: where it lands in shared memory and its coordinates in the
/// tensor, outermost mode first.
template <Element T>
struct TmaBox {
  Pointer<T> smem;
  std::vector<Int> coords;
};

/// The boxes that move one tile (see above), in order of their places in shared memory.
template <Element T>
class TmaPartition {
 public:
  /// `spacing`: the step from one box to the next, in elements of shared memory and along each
  /// mode, when the boxes are evenly spaced (nullopt when they are not).
  TmaPartition(std::vector<TmaBox<T>> boxes, std::optional<std::pair<int64_t, std::vector<int64_t>>> spacing)
      : boxes_(std::move(boxes)), spacing_(std::move(spacing)) {}

  int size() const { return int(boxes_.size()); }
  const std::vector<TmaBox<T>>& boxes() const& { return boxes_; }
  /// Of a temporary (`for (auto& box : tma_partition(...).boxes())`): a copy that outlives it.
  std::vector<TmaBox<T>> boxes() && { return std::move(boxes_); }
  const TmaBox<T>& operator[](int i) const { return boxes_.at(size_t(i)); }
  /// Box `i` (0 ... size() - 1) for a traced `i` (a CTA of a cluster picking its share of a
  /// multicast tile): there must be several boxes, evenly spaced in shared memory and in the
  /// tensor.
  TmaBox<T> at(const Int& i, detail::Where w = detail::Where::current()) const {
    if (!spacing_)
      detail::fail("a partition's box picked by a traced index needs several boxes, evenly spaced; this one has " +
                       std::to_string(boxes_.size()) + (boxes_.size() > 1 ? ", not evenly spaced" : ""),
                   w);
    TmaBox<T> box{boxes_[0].smem + i * Int(int32_t(spacing_->first)), {}};
    for (size_t d = 0; d < boxes_[0].coords.size(); ++d)
      box.coords.push_back(boxes_[0].coords[d] + i * Int(int32_t(spacing_->second[d])));
    return box;
  }

 private:
  std::vector<TmaBox<T>> boxes_;
  std::optional<std::pair<int64_t, std::vector<int64_t>>> spacing_;
};

/// The boxes of `map` that move the tile `gmem` (coordinates) to or from `smem`.
template <Element T>
TmaPartition<T> tma_partition(const TmaDescriptor<T>& map, const Tensor<T>& smem, const CoordTensor& gmem,
                              detail::Where w = detail::Where::current()) {
  if (smem.data().space() != Space::shared) detail::fail("tma_partition's tile must be in shared memory", w);
  if (gmem.modes() != map.rank())
    detail::fail("tma_partition's coordinate tensor has " + std::to_string(gmem.modes()) + " modes, but the tensor map has rank " +
                     std::to_string(map.rank()) + "; make it from make_identity_tensor of the tensor's shape",
                 w);
  if (!is_static(smem.layout()) || !smem.swizzle_base().is_static() || smem.swizzle_base().value() != 0)
    detail::fail("tma_partition's tile needs a static layout that starts on its swizzle pattern, not " + to_string(smem.layout()), w);
  const std::optional<Swizzle> want = detail::tma_swizzle_of(map.swizzle(), int(sizeof(T)));
  const std::optional<Swizzle>& have = smem.swizzle();
  if (want.has_value() != have.has_value() || (want && !(*want == *have)))
    detail::fail("tma_partition's tile is " + (have ? "swizzled by " + to_string(*have) : std::string("unswizzled")) +
                     ", but the tensor map's boxes land " + (want ? "swizzled by " + to_string(*want) : std::string("unswizzled")),
                 w);
  if (want && smem.data().alignment() < 8 * int64_t(map.swizzle()))
    detail::fail("tma_partition's tile must start on its " + std::to_string(8 * int(map.swizzle())) +
                     "-byte swizzle pattern; its address is known to be only " + std::to_string(smem.data().alignment()) +
                     "-byte aligned",
                 w);
  std::vector<int64_t> box;
  for (int d = 0; d < map.rank(); ++d) box.push_back(map.box(d));
  const std::vector<detail::TmaBoxPlacement> placed = detail::place_tma_boxes(smem.layout(), gmem.components(), box, w);
  std::vector<TmaBox<T>> boxes;
  for (const detail::TmaBoxPlacement& p : placed) {
    TmaBox<T> b{smem.data() + int32_t(p.smem_offset), {}};
    for (int d = 0; d < map.rank(); ++d) b.coords.push_back((gmem.origin()[size_t(d)] + p.origin[size_t(d)]).read(w));
    boxes.push_back(std::move(b));
  }
  std::optional<std::pair<int64_t, std::vector<int64_t>>> spacing;
  if (placed.size() >= 2) {
    spacing.emplace(placed[1].smem_offset - placed[0].smem_offset, std::vector<int64_t>());
    for (size_t d = 0; d < box.size(); ++d) spacing->second.push_back(placed[1].origin[d] - placed[0].origin[d]);
    for (size_t i = 2; spacing && i < placed.size(); ++i) {
      bool even = placed[i].smem_offset - placed[i - 1].smem_offset == spacing->first;
      for (size_t d = 0; d < box.size(); ++d) even = even && placed[i].origin[d] - placed[i - 1].origin[d] == spacing->second[d];
      if (!even) spacing.reset();
    }
  }
  TmaPartition<T> partition(std::move(boxes), std::move(spacing));
  return partition;
}

}  // namespace cutejit
