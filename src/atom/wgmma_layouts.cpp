// The PTX ISA's wgmma fragment layouts as CuTe thread-value layouts. A warpgroup's thread t is
// (t % 4, (t / 4) % 8, t / 32): its thread in group picks a pair of columns, its group a row,
// and its warp a block of 16 rows. Register values step to the next column of the pair, then
// to row + 8, then to the next block of 8 columns.
#include "cutejit/atom/sm90/wgmma.hpp"

#include <string>

#include "cutejit/core/error.hpp"

namespace cutejit::detail {

Layout wgmma_layout_c(int n) {
  if (n < 8 || n > 256 || n % 8 != 0) throw Error("error: wgmma's N is a multiple of 8 from 8 to 256, not " + std::to_string(n));
  // Index m + 64 n: the thread's columns 2 (t % 4) are 128 apart, its row (t / 4) % 8 and
  // warp 16 (t / 32); value 1 is the next column, value 2 the row 8 below, value 4 the columns
  // 8 to the right.
  if (n == 8) return Layout(IntTuple{IntTuple{4, 8, 4}, IntTuple{2, 2}}, IntTuple{IntTuple{128, 1, 16}, IntTuple{64, 8}});
  return Layout(IntTuple{IntTuple{4, 8, 4}, IntTuple{2, 2, n / 8}}, IntTuple{IntTuple{128, 1, 16}, IntTuple{64, 8, 512}});
}

Layout wgmma_layout_shared(int mn, int k) {
  // Every thread of the warpgroup reads the whole tile through the descriptor (CuTe's
  // ABLayout): thread stride 0, the values the (MN, K) tile in index order mn + MN k.
  return Layout(IntTuple{128, IntTuple{mn, k}}, IntTuple{0, IntTuple{1, mn}});
}

Layout wgmma_layout_register_a() {
  // A 64 x 16 slice of A in registers is laid out as a 64 x 16 slice of C: index m + 64 k.
  return wgmma_layout_c(16);
}

WgmmaAccumulators wgmma_accumulators(const Layout& acc, const Pointer<float>& data, const char* what, Where w) {
  // The instruction names N / 2 registers in order: value i of the fragment is register i.
  const int64_t values = is_static(acc) ? size(acc).value() : 0;
  if (data.space() != Space::local || !is_static(acc) || coalesce(acc) != Layout(values, 1))
    fail(std::string(what) + "'s accumulators are a register tensor of N / 2 f32 values in register order (partition_fragment_C " +
             "of a wgmma TiledMma, or one (_, m, n) block of it), not " + (data.space() == Space::local ? "" : "a tensor outside registers ") +
             to_string(acc),
         w);
  if (values < 4 || values > 128 || values % 4 != 0)
    fail(std::string(what) + " takes N / 2 accumulators for an N from 8 to 256 in steps of 8, not " + std::to_string(values), w);
  return {data.id(), int(2 * values)};
}

}  // namespace cutejit::detail
