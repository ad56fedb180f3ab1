// stmatrix as a copy atom: which row of a TiledMma's C tile each lane addresses, derived from
// the atom's C layout and checked lane by lane against what the instruction stores.
#include "cutejit/atom/sm90/stmatrix.hpp"

#include <string>
#include <vector>

#include "cutejit/layout/algebra.hpp"
#include "layout/index_table.hpp"

namespace cutejit::detail {

TiledMmaShape stmatrix_destination(const TiledMmaShape& s, int count, Where w) {
  const Layout& dst = s.layout_c;
  const int64_t values = size(mode(dst, 1)).value(), registers = values / 2;
  const std::string fragment = "the C fragment of " + s.atom_name;
  if (s.atom_threads % 32 != 0 || values % 2 != 0)
    fail(fragment + " is not in warps' registers of packed 16-bit pairs, which stmatrix stores", w);
  if (registers % count != 0)
    fail("stmatrix.x" + std::to_string(count) + " stores " + std::to_string(count) + " registers per instruction, but " + fragment +
             " has " + std::to_string(registers) + " (packed pairs); use StMatrix<1> or StMatrix<2>",
         w);
  auto at = [&](int64_t thread, int64_t v) { return dst(thread, v).value(); };
  // Lane 8 j + r addresses row r of matrix j (register j of the group): the row lane 4 r holds
  // in that register. The row's 8 values are its pair, then the next lanes' pairs.
  const int64_t row_step = at(4, 0) - at(0, 0), pair_step = at(0, 1) - at(0, 0), quad_step = at(1, 0) - at(0, 0);
  const int64_t warps = s.atom_threads / 32, warp_step = warps > 1 ? at(32, 0) - at(0, 0) : 0;
  const int64_t groups = registers / count;
  Layout matrices = composition(mode(dst, 1), Layout(count, 2)), broadcast(32 / (8 * count), 0);
  Layout threads = make_layout(Layout(8, row_step), matrices, broadcast, Layout(warps, warp_step));
  Layout row = Layout(IntTuple{2, 4}, IntTuple{pair_step, quad_step});
  Layout group = groups > 1 ? composition(mode(dst, 1), Layout(groups, 2 * count)) : Layout(1, 0);
  Layout out = make_layout(threads, make_layout(row, group));
  // (thread, value) is index thread + threads * value of both layouts (value e + 8 g of out).
  const std::vector<int64_t> want = index_table(dst), got = index_table(out);
  const int64_t threads_n = s.atom_threads;
  for (int64_t t = 0; t < threads_n; ++t) {
    const int64_t lane = t % 32, warp = t / 32, r = lane % 8, j = (lane / 8) % count;
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t e = 0; e < 8; ++e) {
        int64_t owner = 32 * warp + 4 * r + e / 2, value = 2 * (g * count + j) + e % 2;
        if (got[size_t(t + threads_n * (e + 8 * g))] != want[size_t(owner + threads_n * value)])
          fail(fragment + " is not made of the 8 x 8 matrices stmatrix stores (register p of lane l: row l / 4 of a matrix, values 2p "
                          "and 2p + 1 its columns 2 (l % 4) and + 1)",
               w);
      }
  }
  TiledMmaShape shape = s;
  shape.layout_c = out;
  return shape;
}

void check_stmatrix_rows(const Layout& row, const std::optional<Swizzle>& swizzle, Where w) {
  // A swizzle that moves bits below the 16-byte chunk (8 values) would split a row.
  bool contiguous = coalesce(row) == Layout(8, 1) && (!swizzle || (int64_t(1) << swizzle->base()) >= 8);
  if (!contiguous)
    fail("stmatrix writes 16 contiguous bytes per row address, but this tile's values along a row of C are at " + to_string(row) +
             (swizzle ? " under the swizzle " + to_string(*swizzle) : std::string()) +
             "; store C row-major (N contiguous), swizzled in 16-byte chunks or coarser",
         w);
}

}  // namespace cutejit::detail
