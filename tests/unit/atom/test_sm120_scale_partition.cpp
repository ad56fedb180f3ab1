// TiledMma's scale-factor partitions of the block-scaled sm_120 atoms (partition_SFA and
// partition_SFB), against what the PTX ISA says each thread's scale register holds: for the
// selectors (0, 0) every kernel uses, lane 4 g + {0, 2} gives the scales of row g of its A
// atom and lane 4 g + {1, 3} those of row g + 8, and every lane of quad g those of column g of
// its B atom, one K block per byte, the lowest first. The atom rows and columns a thread's
// registers belong to are taken from the A and B partitions (themselves checked against the
// ISA's fragments in test_sm120.cpp), so the check does not repeat the code under test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "cutejit/atom/sm120/mma_block_scaled.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
const detail::Where here = detail::Where::current();

/// (row, column) of index i in a column-major (rows, columns) tile.
std::pair<int64_t, int64_t> at(const SlicedLayout& s, int64_t rows, const IntTuple& coord) {
  const int64_t i = s.offset.value() + s.layout(coord).value();
  return {i % rows, i / rows};
}

/// Checks every thread's scale factors of a (tile_m, k_steps blocks) and a (tile_n, ...) tile.
template <class Op>
void check_scale_partitions(const Layout& warps, int64_t tile_m, int64_t tile_n, int64_t k_steps) {
  auto tiled = make_tiled_mma(Op{}, warps);
  const detail::TiledMmaShape& s = tiled.shape();
  const detail::TiledMmaShape sa = detail::scale_factor_source(s, MmaOperand::a, Op::layout_sfa(), Op::scales, here);
  const detail::TiledMmaShape sb = detail::scale_factor_source(s, MmaOperand::b, Op::layout_sfb(), Op::scales, here);
  const int64_t blocks = k_steps * Op::scales;
  for (int t = 0; t < tiled.size(); ++t) {
    const int lane = t % 32;
    SlicedLayout a = detail::mma_partition(s, MmaOperand::a, make_layout({tile_m, k_steps * Op::k}), Integer(t), here);
    SlicedLayout b = detail::mma_partition(s, MmaOperand::b, make_layout({tile_n, k_steps * Op::k}), Integer(t), here);
    SlicedLayout sfa = detail::mma_partition(sa, MmaOperand::a, make_layout({tile_m, blocks}), Integer(t), here);
    SlicedLayout sfb = detail::mma_partition(sb, MmaOperand::b, make_layout({tile_n, blocks}), Integer(t), here);
    const int64_t rest_m = size(mode(a.layout, 1)).value(), rest_n = size(mode(b.layout, 1)).value();
    REQUIRE(size(mode(sfa.layout, 0)).value() == Op::scales);
    REQUIRE(size(mode(sfa.layout, 1)).value() == rest_m);
    REQUIRE(size(mode(sfa.layout, 2)).value() == k_steps);
    REQUIRE(size(mode(sfb.layout, 1)).value() == rest_n);
    REQUIRE(size(mode(sfb.layout, 2)).value() == k_steps);
    for (int64_t kk = 0; kk < k_steps; ++kk) {
      for (int64_t m = 0; m < rest_m; ++m) {
        // The two rows this thread's A registers of atom (m, kk) hold: g and g + 8 of the atom.
        std::set<int64_t> rows;
        for (int64_t v = 0; v < size(mode(a.layout, 0)).value(); ++v) rows.insert(at(a, tile_m, IntTuple{v, m, kk}).first);
        REQUIRE(rows.size() == 2);
        const int64_t row = lane % 2 == 0 ? *rows.begin() : *rows.rbegin();
        for (int64_t j = 0; j < Op::scales; ++j) {
          INFO("thread " << t << " A atom " << m << " step " << kk << " byte " << j);
          CHECK(at(sfa, tile_m, IntTuple{j, m, kk}) == std::pair{row, kk * Op::scales + j});
        }
      }
      for (int64_t n = 0; n < rest_n; ++n) {
        std::set<int64_t> columns;
        for (int64_t v = 0; v < size(mode(b.layout, 0)).value(); ++v) columns.insert(at(b, tile_n, IntTuple{v, n, kk}).first);
        REQUIRE(columns.size() == 1);
        for (int64_t j = 0; j < Op::scales; ++j) {
          INFO("thread " << t << " B atom " << n << " step " << kk << " byte " << j);
          CHECK(at(sfb, tile_n, IntTuple{j, n, kk}) == std::pair{*columns.begin(), kk * Op::scales + j});
        }
      }
    }
  }
}
}  // namespace

TEST_CASE("a TiledMma gives each thread the scale factors its scale register holds, per the PTX ISA", "[unit]") {
  // The TMA GEMM's tiling: 2 x 2 warps over a 128 x 128 tile, and the plain one's 4 x 1.
  check_scale_partitions<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(make_layout({2, 2, 1}), 128, 128, 4);
  check_scale_partitions<SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN>(make_layout({2, 2, 1}), 128, 128, 2);
  check_scale_partitions<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>(make_layout({2, 2, 1}), 128, 128, 4);
  check_scale_partitions<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(make_layout({4, 1, 1}), 64, 64, 1);
  // A row-major atom layout moves warps between atoms; the scales follow their rows.
  check_scale_partitions<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(Layout(IntTuple{2, 2, 1}, IntTuple{2, 1, 0}), 64, 32, 1);
}

TEST_CASE("scale-factor partitions and the block-scaled gemm refuse what does not fit", "[unit]") {
  using Op = SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN;
  auto tiled = make_tiled_mma(Op{}, make_layout({2, 2, 1}));
  // K counts scale blocks: 4 an atom for NVFP4, so 6 blocks are not whole atoms.
  CHECK_THROWS_WITH(detail::mma_partition(detail::scale_factor_source(tiled.shape(), MmaOperand::a, Op::layout_sfa(), Op::scales, here),
                                          MmaOperand::a, make_layout({128, 6}), Integer(0), here),
                    Contains("6 K elements, not a multiple of the 4"));
  CHECK_THROWS_WITH(detail::scale_factor_source(tiled.shape(), MmaOperand::c, Op::layout_sfa(), Op::scales, here),
                    Contains("scale factors belong to A and B, not C"));
  CHECK_THROWS_WITH(detail::scale_factor_source(tiled.shape(), MmaOperand::a, make_layout({16, 4}), Op::scales, here),
                    Contains("must be a (thread, value) layout of 32 threads"));
  // In a kernel: SFB fragments of the wrong tile are an error at the line of the gemm.
  Kernel k{"scale_fragments", [](Tensor<u8> out) {
             auto tiled = make_tiled_mma(Op{}, make_layout({2, 2, 1}));
             auto thr = tiled.get_slice(thread_idx().x);
             auto acc = thr.partition_fragment_C({64, 32});
             auto fa = thr.partition_fragment_A({64, 32});
             auto fb = thr.partition_fragment_B({32, 32});
             auto sfa = thr.partition_fragment_SFA({64, 4});
             auto sfb = thr.partition_fragment_SFB({16, 4});
             fill(fa, uint8_t(0));
             fill(fb, uint8_t(0));
             fill(sfa, uint8_t(0));
             fill(sfb, uint8_t(0));
             gemm(tiled, acc, fa, fb, sfa, sfb);
             out(0) = uint8_t(0);
           }};
  CHECK_THROWS_WITH(k.compile(Target::parse("sm_120a"), DeviceTensor<uint8_t>::for_compile({1})),
                    Contains("test_sm120_scale_partition.cpp") && Contains("the SFB fragment must be (4, 2, 1)"));
}
