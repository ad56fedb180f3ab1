// The mma.sync atoms' thread-value layouts against the PTX ISA's fragment tables ("Matrix
// fragments for mma.m16n8k16" and the others), transcribed here as row/column formulas of
// groupID = lane / 4 and threadID_in_group = lane % 4; and the TiledMma partitions built on them.
#include <catch2/catch.hpp>

#include <functional>

#include <cutejit/cutejit.hpp>

using namespace cutejit;

namespace {

struct RowCol {
  int row, col;
};
using Fragment = std::function<RowCol(int lane, int i)>;

/// Checks value i of every lane of `tv` against the ISA's (row, col), as index row + rows * col.
void check_layout(const Layout& tv, int rows, int values, const Fragment& isa) {
  REQUIRE(size(tv).value() == 32 * values);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < values; ++i) {
      RowCol rc = isa(lane, i);
      INFO("lane " << lane << " value " << i << " of " << to_string(tv));
      CHECK(tv(lane, i).value() == rc.row + rows * rc.col);
    }
}

int g(int lane) { return lane >> 2; }
int tig(int lane) { return lane % 4; }

// C and D of every m16n8 kind: c0, c1 in row groupID, c2, c3 in groupID + 8; col 2 tig + (i & 1).
RowCol c_m16n8(int lane, int i) { return {g(lane) + 8 * (i >= 2), tig(lane) * 2 + (i & 1)}; }

template <class Op>
void check_atom(int a_values, const Fragment& a, int b_values, const Fragment& b) {
  INFO(Op::name());
  // A is M x K (index m + M k); B is N x K (n + N k), given by the ISA as K x N (row k, col n).
  check_layout(Op::layout_a(), Op::m, a_values, a);
  check_layout(Op::layout_b(), Op::n, b_values, [&](int lane, int i) {
    RowCol kn = b(lane, i);
    return RowCol{kn.col, kn.row};
  });
  check_layout(Op::layout_c(), Op::m, Op::m * Op::n / 32, Op::m == 8 ? Fragment([](int lane, int i) {
    return RowCol{g(lane), tig(lane) * 2 + i};
  })
                                                                      : Fragment(c_m16n8));
}

// m16n8k16 .f16/.bf16: a0..a7, rows groupID (+8 for a2, a3, a6, a7), cols 2 tig + (i & 1) (+8 from a4).
RowCol a_k16_half(int lane, int i) { return {g(lane) + 8 * ((i / 2) % 2), tig(lane) * 2 + (i & 1) + 8 * (i >= 4)}; }
// b0..b3: rows (K) 2 tig + (i & 1) (+8 from b2), col (N) groupID.
RowCol b_k16_half(int lane, int i) { return {tig(lane) * 2 + (i & 1) + 8 * (i >= 2), g(lane)}; }
// m16n8k8 .f16/.bf16: a0..a3, rows groupID (+8 for a2, a3); b0, b1.
RowCol a_k8_half(int lane, int i) { return {g(lane) + 8 * (i >= 2), tig(lane) * 2 + (i & 1)}; }
RowCol b_k8_half(int lane, int i) { return {tig(lane) * 2 + i, g(lane)}; }
// m16n8k8 .tf32: a0 (g, tig), a1 (g + 8, tig), a2 (g, tig + 4), a3 (g + 8, tig + 4); b0 (tig, g), b1 (tig + 4, g).
RowCol a_k8_tf32(int lane, int i) { return {g(lane) + 8 * (i % 2), tig(lane) + 4 * (i / 2)}; }
RowCol b_k8_tf32(int lane, int i) { return {tig(lane) + 4 * i, g(lane)}; }
// m16n8k4 .tf32: a0 (g, tig), a1 (g + 8, tig); b0 (tig, g).
RowCol a_k4_tf32(int lane, int i) { return {g(lane) + 8 * i, tig(lane)}; }
RowCol b_k4_tf32(int lane, int) { return {tig(lane), g(lane)}; }
// m16n8k32 8-bit (s8/u8/e4m3/e5m2): a0..a15, row groupID for i < 4 and 8 <= i < 12, else +8;
// col 4 tig + (i & 3), +16 from a8. b0..b7: row (K) 4 tig + (i & 3), +16 from b4; col groupID.
RowCol a_k32_byte(int lane, int i) { return {g(lane) + 8 * ((i / 4) % 2), tig(lane) * 4 + (i & 3) + 16 * (i >= 8)}; }
RowCol b_k32_byte(int lane, int i) { return {tig(lane) * 4 + (i & 3) + 16 * (i >= 4), g(lane)}; }
// m16n8k16 8-bit integers: a0..a7, row groupID (+8 from a4), col 4 tig + (i & 3); b0..b3 (4 tig + i, groupID).
RowCol a_k16_byte(int lane, int i) { return {g(lane) + 8 * (i >= 4), tig(lane) * 4 + (i & 3)}; }
RowCol b_k16_byte(int lane, int i) { return {tig(lane) * 4 + i, g(lane)}; }
// m8n8k4 .f64: a0 (groupID, tig); b0 (tig, groupID); c0, c1 (groupID, 2 tig + i).
RowCol a_f64(int lane, int) { return {g(lane), tig(lane)}; }
RowCol b_f64(int lane, int) { return {tig(lane), g(lane)}; }

}  // namespace

TEST_CASE("every mma.sync atom's thread-value layouts are the PTX ISA's fragments", "[unit]") {
  check_atom<SM80_16x8x16_F32BF16BF16F32_TN>(8, a_k16_half, 4, b_k16_half);
  check_atom<SM80_16x8x16_F32F16F16F32_TN>(8, a_k16_half, 4, b_k16_half);
  check_atom<SM80_16x8x16_F16F16F16F16_TN>(8, a_k16_half, 4, b_k16_half);
  check_atom<SM80_16x8x8_F32BF16BF16F32_TN>(4, a_k8_half, 2, b_k8_half);
  check_atom<SM80_16x8x8_F32F16F16F32_TN>(4, a_k8_half, 2, b_k8_half);
  check_atom<SM80_16x8x8_F16F16F16F16_TN>(4, a_k8_half, 2, b_k8_half);
  check_atom<SM80_16x8x8_F32TF32TF32F32_TN>(4, a_k8_tf32, 2, b_k8_tf32);
  check_atom<SM80_16x8x4_F32TF32TF32F32_TN>(2, a_k4_tf32, 1, b_k4_tf32);
  check_atom<SM80_16x8x32_S32S8S8S32_TN>(16, a_k32_byte, 8, b_k32_byte);
  check_atom<SM80_16x8x32_S32U8S8S32_TN>(16, a_k32_byte, 8, b_k32_byte);
  check_atom<SM80_16x8x16_S32S8S8S32_TN>(8, a_k16_byte, 4, b_k16_byte);
  check_atom<SM80_16x8x16_S32U8U8S32_TN>(8, a_k16_byte, 4, b_k16_byte);
  check_atom<SM89_16x8x32_F32E4M3E4M3F32_TN>(16, a_k32_byte, 8, b_k32_byte);
  check_atom<SM89_16x8x32_F32E5M2E4M3F32_TN>(16, a_k32_byte, 8, b_k32_byte);
  check_atom<SM80_8x8x4_F64F64F64F64_TN>(1, a_f64, 1, b_f64);
}

TEST_CASE("mma.sync layouts print in CuTe's notation", "[unit]") {
  // As cute/atom/mma_traits_sm80.hpp spells them (SM80_16x8x16: ALayout, SM80_16x8_Row, SM80_8x4).
  CHECK(to_string(SM80_16x8x16_F32BF16BF16F32_TN::layout_a()) == "((4,8),(2,2,2)):((32,1),(16,8,128))");
  CHECK(to_string(SM80_16x8x16_F32BF16BF16F32_TN::layout_b()) == "((4,8),(2,2)):((16,1),(8,64))");
  CHECK(to_string(SM80_16x8x16_F32BF16BF16F32_TN::layout_c()) == "((4,8),(2,2)):((32,1),(16,8))");
  CHECK(to_string(SM80_16x8x4_F32TF32TF32F32_TN::layout_b()) == "((4,8),1):((8,1),0)");
  CHECK(to_string(SM80_16x8x32_S32S8S8S32_TN::layout_a()) == "((4,8),(4,2,2)):((64,1),(16,8,256))");
}

TEST_CASE("a TiledMma of 2 x 2 warps gives each thread the values of its atoms", "[unit]") {
  // Four warps tile a 64 x 32 C with 16 x 8 atoms: warp (wm, wn) = (w % 2, w / 2) owns the atoms
  // at rows 16 wm + 32 rm and columns 8 wn + 16 rn, rm and rn in {0, 1}.
  auto tiled = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout({2, 2, 1}));
  CHECK(tiled.size() == 128);
  CHECK(tiled.tile_m() == 32);
  CHECK(tiled.tile_n() == 16);
  CHECK(tiled.tile_k() == 16);
  Layout c = make_layout({64, 32});
  for (int t = 0; t < 128; ++t) {
    SlicedLayout mine = detail::mma_partition(tiled.shape(), MmaOperand::c, c, Integer(t), detail::Where::current());
    REQUIRE(to_string(mine.layout.shape()) == "((2,2),2,2)");
    int w = t / 32, lane = t % 32;
    for (int v = 0; v < 4; ++v)
      for (int rm = 0; rm < 2; ++rm)
        for (int rn = 0; rn < 2; ++rn) {
          int row = 16 * (w % 2) + 32 * rm + g(lane) + 8 * (v / 2), col = 8 * (w / 2) + 16 * rn + 2 * tig(lane) + v % 2;
          INFO("thread " << t << " value " << v << " rest " << rm << "," << rn);
          CHECK(mine.offset.value() + mine.layout(v, rm, rn).value() == row + 64 * col);
        }
  }
  // A is shared by the warps of one row: (M, K) = (64, 32) gives each thread (8, 2, 2).
  SlicedLayout a = detail::mma_partition(tiled.shape(), MmaOperand::a, make_layout({64, 32}), Integer(33), detail::Where::current());
  CHECK(to_string(a.layout.shape()) == "((2,2,2),2,2)");
  // Warp 1 is (wm, wn) = (1, 0): its A rows start at 16; lane 1 starts at K column 2.
  CHECK(a.offset.value() == 16 + 64 * 2 * tig(33 % 32));
  SlicedLayout b = detail::mma_partition(tiled.shape(), MmaOperand::b, make_layout({32, 32}), Integer(64 + 5), detail::Where::current());
  // Warp 2 is (wm, wn) = (0, 1): B rows (N) start at 8; lane 5 is n = 1, k = 2.
  CHECK(b.offset.value() == 8 + 1 + 32 * 2);
}

TEST_CASE("a row-major atom layout and a permutation change which atoms a warp owns", "[unit]") {
  // (2,2,1):(2,1,0): warp w is (wm, wn) = (w / 2, w % 2).
  auto tiled = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout(IntTuple{2, 2, 1}, IntTuple{2, 1, 0}));
  SlicedLayout c = detail::mma_partition(tiled.shape(), MmaOperand::c, make_layout({32, 16}), Integer(32), detail::Where::current());
  CHECK(c.offset.value() == 32 * 8);  // warp 1: wm = 0, wn = 1
  // Permuting N with (8,2,2):(1,16,8), as CuTe's Tile<_32, Layout<Shape<_8,_2,_2>, Stride<_1,_16,_8>>,
  // _16>: warp column wn owns the atoms at columns 16 wn and 16 wn + 8 (without it: 8 wn and 8 wn + 16).
  auto permuted = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout({2, 2, 1}),
                                 Tile{TileMode(32), TileMode(parse_layout("(8,2,2):(1,16,8)")), TileMode(16)});
  CHECK(permuted.tile_n() == 32);
  SlicedLayout p = detail::mma_partition(permuted.shape(), MmaOperand::c, make_layout({32, 32}), Integer(64), detail::Where::current());
  CHECK(to_string(p.layout.shape()) == "((2,2),1,2)");
  // Warp 2 = (0, 1): its first atom's columns start at 16, its second 8 further.
  CHECK(p.offset.value() == 32 * 16);
  CHECK(p.layout(0, 0, 1).value() == 32 * 8);
}

TEST_CASE("ldmatrix sources: each lane's row address, plain and transposed, per the PTX ISA", "[unit]") {
  // ldmatrix: lane 8 j + r gives the address of row r of matrix j (16 bytes). Plain, lane l then
  // holds row l / 4, columns 2 (l % 4) + {0, 1} of each matrix; transposed, column l / 4 and rows
  // 2 (l % 4) + {0, 1}. The m16n8k16 B fragment (N x K) is matrices j = 0, 1 at K = 8 j.
  auto tiled = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{});
  const auto w = detail::Where::current();
  // Plain, B stored K-major (n, k): row r of matrix j is n = r, k = 8 j on; its 16 bytes along K.
  Layout plain = detail::ldmatrix_source(tiled.shape(), MmaOperand::b, 2, false, 2, w).layout_b;
  // Transposed, B stored N-major: row r of matrix j is k = 8 j + r, n = 0 on; its 16 bytes along N.
  Layout trans = detail::ldmatrix_source(tiled.shape(), MmaOperand::b, 2, true, 2, w).layout_b;
  for (int lane = 0; lane < 32; ++lane) {
    int j = (lane / 8) % 2, r = lane % 8;
    INFO("lane " << lane);
    CHECK(plain(lane, 0).value() == r + 8 * (8 * j));
    CHECK(trans(lane, 0).value() == 0 + 8 * (8 * j + r));
    for (int e = 0; e < 8; ++e) {
      CHECK(plain(lane, e).value() - plain(lane, 0).value() == 8 * e);  // along K: index n + 8 k
      CHECK(trans(lane, e).value() - trans(lane, 0).value() == e);      // along N
    }
  }
  // And the A operand of x4, plain: matrix j is rows 8 (j % 2), K columns 8 (j / 2) on.
  Layout a = detail::ldmatrix_source(tiled.shape(), MmaOperand::a, 4, false, 2, w).layout_a;
  for (int lane = 0; lane < 32; ++lane) {
    int j = lane / 8, r = lane % 8;
    CHECK(a(lane, 0).value() == (8 * (j % 2) + r) + 16 * (8 * (j / 2)));
  }
  // m8n8.trans moves 16-bit values; 8-bit ones take the m16n16 form (test_ldmatrix_transposed.cpp),
  // 32-bit ones none.
  auto tf32 = make_tiled_mma(SM80_16x8x8_F32TF32TF32F32_TN{});
  CHECK_THROWS_WITH(detail::ldmatrix_source(tf32.shape(), MmaOperand::b, 2, true, 4, w),
                    Catch::Contains("ldmatrix.trans moves 16-bit values; the B fragment of mma.sync.m16n8k8.f32.tf32.tf32.f32 has 32-bit ones"));
}

TEST_CASE("an accumulator seen as rows and columns, and fed back as an A operand", "[unit]") {
  // Four warps along M over a 128 x 64 tile: each thread has 2 x 8 atoms of c0..c3, i.e. rows
  // g, g + 8 of each of its two 16-row blocks (64 apart) and columns 2 tig + {0, 1} of each
  // 8-wide atom.
  auto tiled = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout({4, 1, 1}));
  const auto w = detail::Where::current();
  CHECK(detail::accumulator_row_lanes(tiled.shape(), w) == 4);
  for (int t : {0, 37, 127}) {
    SlicedLayout c = detail::mma_partition(tiled.shape(), MmaOperand::c, make_layout({128, 64}), Integer(t), w);
    Layout rc = detail::accumulator_rowcol(tiled.shape(), c.layout, w);
    REQUIRE(to_string(rc.shape()) == "((2,2),(2,8))");
    int warp = t / 32, lane = t % 32;
    for (int r = 0; r < 4; ++r)
      for (int col = 0; col < 16; ++col) {
        int row = 16 * warp + g(lane) + 8 * (r % 2) + 64 * (r / 2), column = 2 * tig(lane) + col % 2 + 8 * (col / 2);
        INFO("thread " << t << " row " << r << " column " << col);
        CHECK(c.offset.value() + rc(r, col).value() == row + 128 * column);
      }
  }
  // C of m16n8k16 as A of m16n8k16: A value i (row g + 8 ((i / 2) % 2), K column 2 tig + (i & 1)
  // + 8 (i >= 4)) is C value (i & 1) + 2 ((i / 2) % 2) of N atom (i >= 4).
  // K block 1 is the same values two N atoms further on.
  auto map = detail::accumulator_to_a(tiled.shape(), tiled.shape(), 2, w);
  REQUIRE(map.size() == 16);
  for (int kk = 0; kk < 2; ++kk)
    for (int i = 0; i < 8; ++i) {
      INFO("K block " << kk << ", A value " << i);
      CHECK(map[size_t(8 * kk + i)] == std::pair<int, int>{(i & 1) + 2 * ((i / 2) % 2), 2 * kk + (i >= 4)});
    }
  // Tilings that disagree along M, or a second product whose K is not along the first's N.
  auto two_by_two = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout({2, 2, 1}));
  CHECK_THROWS_WITH(detail::accumulator_to_a(tiled.shape(), two_by_two.shape(), 1, w), Catch::Contains("needs the same atoms along M"));
}
