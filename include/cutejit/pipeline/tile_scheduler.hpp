/** \file
 * A static persistent tile scheduler (CuTeDSL's StaticPersistentTileScheduler): a grid of at
 * most one CTA per multiprocessor walks the output tiles, CTA b taking tiles b, b + grid,
 * b + 2 * grid, ... Tiles are numbered in a grouped raster order: `group` tile rows at a time
 * (along M), or `group` tile columns (along N), so that the CTAs running at once work on a few
 * rows of A and columns of B and find them in L2 instead of streaming all of B per tile row.
 */
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "cutejit/dsl/intrinsics.hpp"

namespace cutejit {

enum class Raster { along_m, along_n };

class StaticTileScheduler {
 public:
  StaticTileScheduler(const Int& tiles_m, const Int& tiles_n, int group = 8, Raster raster = Raster::along_m,
                      detail::Where w = detail::Where::current())
      : StaticTileScheduler(tiles_m, tiles_n, block_idx().x, grid_dim().x, group, raster, w) {}
  /// The same walk shared by `workers` workers, this one being `worker`: e.g. the clusters of
  /// a cluster launch (worker = block_idx().x / 2 of grid_dim().x / 2), each taking one tile.
  StaticTileScheduler(const Int& tiles_m, const Int& tiles_n, const Int& worker, const Int& workers, int group = 8,
                      Raster raster = Raster::along_m, detail::Where w = detail::Where::current())
      : tiles_m_(tiles_m), tiles_n_(tiles_n), worker_(worker), workers_(workers), group_(group), raster_(raster) {
    if (group < 1) detail::fail("a tile scheduler's group is at least 1 tile, not " + std::to_string(group), w);
  }

  /// The grid a launch needs: one CTA per multiprocessor, or one per tile when there are fewer.
  static uint32_t grid_size(int64_t tiles, int multiprocessors) { return uint32_t(std::max<int64_t>(1, std::min<int64_t>(tiles, multiprocessors))); }

  Int tile_count() const { return tiles_m_ * tiles_n_; }
  /// How many tiles this worker computes.
  Int my_tile_count() const { return (tile_count() - worker_ + workers_ - 1) / workers_; }

  /// (tile row, tile column) of this worker's `j`-th tile.
  std::pair<Int, Int> tile(const Int& j) const { return tile_at(worker_ + j * workers_); }
  /// (tile row, tile column) of tile `t` of the grouped raster order (0 to tile_count() - 1):
  /// also the order a dynamic scheduler hands tiles out in (ClcTileScheduler's block indices).
  std::pair<Int, Int> tile_at(const Int& t) const {
    const bool m = raster_ == Raster::along_m;
    const Int& major = m ? tiles_m_ : tiles_n_;  // the dimension grouped
    const Int& minor = m ? tiles_n_ : tiles_m_;
    Int per_group = minor * group_;
    Int first = (t / per_group) * group_, in_group = t % per_group;
    Int width = min(major - first, Int(group_));  // the last group may be narrower
    Int a = first + in_group % width, b = in_group / width;
    return m ? std::pair{a, b} : std::pair{b, a};
  }

 private:
  Int tiles_m_, tiles_n_, worker_, workers_;
  int group_;
  Raster raster_;
};

}  // namespace cutejit
