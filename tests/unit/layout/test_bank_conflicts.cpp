// The shared-memory bank model, and the swizzled tiles of the warp-level kernels under it: each
// lane's address taken from the kernels' own layouts and the atom layer's partitions (the rows
// ldmatrix reads, the chunks cp.async writes), every access served in one wavefront per phase;
// the same tiles unswizzled conflict, which shows the check can fail.
#include <catch2/catch.hpp>

#include <vector>

#include <cutejit/layout/bank_conflicts.hpp>

#include "fmha_sm80.hpp"
#include "gemm_sm80.hpp"

using namespace cutejit;

namespace {

const detail::Where here = detail::Where::current();

/// The byte address of element `offset` of a tile (before the swizzle), through it when given.
int64_t byte_address(const std::optional<Swizzle>& swizzle, int64_t offset, int element_bytes) {
  return (swizzle ? (*swizzle)(offset) : offset) * element_bytes;
}

/// A (rows x 16) block of a tile: its layout and the offset of its first element.
SlicedLayout k_block(const Layout& tile, int64_t rows, int kk) {
  return detail::local_tile_map(tile, make_tile_from_shape(IntTuple{rows, 16}), IntTuple{0, kk});
}

/// The row addresses the first 8 * count lanes of `warp` give one ldmatrix of operand x's first
/// atom block of `block` (an (M or N, K) block of a swizzled tile), as the kernels' copies take them.
template <class Op>
std::vector<int64_t> ldmatrix_rows(const TiledMma<Op>& tiled, MmaOperand x, int count, bool transpose, const SlicedLayout& block,
                                   const std::optional<Swizzle>& swizzle, int element_bytes, int warp) {
  detail::TiledMmaShape source = detail::ldmatrix_source(tiled.shape(), x, count, transpose, element_bytes, here);
  std::vector<int64_t> rows;
  for (int lane = 0; lane < 8 * count; ++lane) {
    SlicedLayout mine = detail::mma_partition(source, x, block.layout, Integer(32 * warp + lane), here);
    rows.push_back(byte_address(swizzle, block.offset.value() + mine.offset.value() + mine.layout(0, 0, 0).value(), element_bytes));
  }
  return rows;
}

/// The 16-byte chunks lanes 32 warp .. 32 warp + 31 of a tiled copy write into `tile`.
std::vector<int64_t> copy_chunks(const Layout& threads, const Layout& values, const Layout& tile, const std::optional<Swizzle>& swizzle,
                                 int element_bytes, int warp) {
  TVLayout tv = make_layout_tv(threads, values);
  const int64_t rows = tv.shape[0].value();
  std::vector<int64_t> chunks;
  for (int lane = 0; lane < 32; ++lane) {
    int64_t index = tv.tv(32 * warp + lane, 0).value();
    chunks.push_back(byte_address(swizzle, tile(index % rows, index / rows).value(), element_bytes));
  }
  return chunks;
}

}  // namespace

TEST_CASE("the bank model counts phases and wavefronts as the hardware serves them", "[unit]") {
  std::vector<int64_t> consecutive, same_bank, one_word, chunks, strided_chunks;
  for (int lane = 0; lane < 32; ++lane) {
    consecutive.push_back(4 * lane);     // 32 banks once
    same_bank.push_back(128 * lane);     // bank 0, 32 words
    one_word.push_back(64);              // a broadcast
    chunks.push_back(16 * lane);         // four phases of eight 16-byte chunks
    strided_chunks.push_back(256 * lane);  // eight lanes per phase on banks 0-3
  }
  CHECK(shared_memory_access(consecutive, 4).wavefronts == 1);
  CHECK(shared_memory_access(same_bank, 4).conflicts() == 31);
  CHECK(shared_memory_access(one_word, 4).conflicts() == 0);
  CHECK(shared_memory_access(chunks, 16).phases == 4);
  CHECK(shared_memory_access(chunks, 16).conflicts() == 0);
  CHECK(shared_memory_access(strided_chunks, 16).conflicts() == 4 * 7);
  CHECK_THROWS_WITH(shared_memory_access(std::vector<int64_t>{8}, 16), Catch::Contains("is not 16-byte aligned"));
}

TEST_CASE("the multistage GEMM's swizzled rings are conflict-free for ldmatrix and cp.async", "[unit]") {
  using fixtures::gemm_sm80::Major;
  using fixtures::gemm_sm80::ring_layout;
  auto tiled = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout({2, 2, 1}));
  for (Major major : {Major::k, Major::mn})
    for (int64_t rows : {128, 256}) {
      INFO((major == Major::k ? "K-major" : "MN-major") << " ring of " << rows << " rows");
      ComposedLayout ring = ring_layout<bf16>(rows, 3, major);
      Layout stage = slice_and_offset(IntTuple{_, _, 1}, ring.layout_b()).layout;  // every stage is alike
      const bool transpose = major == Major::mn;
      for (int warp = 0; warp < 4; ++warp)
        for (int kk = 0; kk < 4; ++kk) {
          SlicedLayout block = k_block(stage, rows, kk);
          CHECK(shared_memory_access(ldmatrix_rows(tiled, MmaOperand::a, 4, transpose, block, ring.layout_a(), 2, warp), 16).conflicts() == 0);
          CHECK(shared_memory_access(ldmatrix_rows(tiled, MmaOperand::b, 2, transpose, block, ring.layout_a(), 2, warp), 16).conflicts() == 0);
        }
      // cp.async: K-major, eight threads along a 64-element line; MN-major, rows / 8 along M.
      Layout threads = major == Major::k ? make_ordered_layout({16, 8}, {1, 0}) : make_ordered_layout({int(rows / 8), int(128 / (rows / 8))}, {0, 1});
      Layout values = major == Major::k ? make_layout({1, 8}) : make_layout({8, 1});
      for (int warp = 0; warp < 4; ++warp)
        CHECK(shared_memory_access(copy_chunks(threads, values, stage, ring.layout_a(), 2, warp), 16).conflicts() == 0);
    }
  // Without the swizzle, the eight rows of a K-major ldmatrix all start in banks 0-3.
  SlicedLayout plain = k_block(make_layout({128, 64}, LayoutRight{}), 128, 0);
  CHECK(shared_memory_access(ldmatrix_rows(tiled, MmaOperand::a, 4, false, plain, std::nullopt, 2, 0), 16).conflicts() == 4 * 7);
}

TEST_CASE("the FA2 tiles are conflict-free for Q and K ldmatrix, V ldmatrix.trans and cp.async", "[unit]") {
  auto tiled = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout({4, 1, 1}));
  for (int head_dim : {64, 128}) {
    INFO("head dim " << head_dim);
    ComposedLayout q = fixtures::fmha80::tile_layout<bf16>(128, head_dim), kv = fixtures::fmha80::tile_layout<bf16>(64, head_dim);
    Layout vt = make_layout(mode(kv.layout_b(), 1), mode(kv.layout_b(), 0));  // V^T, (head_dim, keys)
    for (int warp = 0; warp < 4; ++warp)
      for (int kk = 0; kk < 4; ++kk) {
        CHECK(shared_memory_access(ldmatrix_rows(tiled, MmaOperand::a, 4, false, k_block(q.layout_b(), 128, kk), q.layout_a(), 2, warp), 16)
                  .conflicts() == 0);
        CHECK(shared_memory_access(ldmatrix_rows(tiled, MmaOperand::b, 2, false, k_block(kv.layout_b(), 64, kk), kv.layout_a(), 2, warp), 16)
                  .conflicts() == 0);
        CHECK(shared_memory_access(ldmatrix_rows(tiled, MmaOperand::b, 2, true, k_block(vt, head_dim, kk), kv.layout_a(), 2, warp), 16)
                  .conflicts() == 0);
      }
    Layout threads = make_ordered_layout({128 / (head_dim / 8), head_dim / 8}, {1, 0});
    for (int warp = 0; warp < 4; ++warp)
      CHECK(shared_memory_access(copy_chunks(threads, make_layout({1, 8}), kv.layout_b(), kv.layout_a(), 2, warp), 16).conflicts() == 0);
  }
}
