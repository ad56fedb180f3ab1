// Worked examples from CuTe's documentation (01_layout.md, 02_layout_algebra.md).
// Every expected string below is copied from the documentation, not from cutejit's output.
#include <catch2/catch.hpp>

#include <cutejit/layout.hpp>

using namespace cutejit;

namespace {
std::string S(const Layout& l) { return to_string(l); }
std::string S(const IntTuple& t) { return to_string(t); }
Layout L(const char* s) { return parse_layout(s); }
}  // namespace

TEST_CASE("docs 01_layout: coordinates", "[layout][docs]") {
  IntTuple shape{3, IntTuple{2, 3}};
  CHECK(S(idx2crd(16, shape)) == "(1,(1,2))");
  CHECK(S(idx2crd(IntTuple{1, 5}, shape)) == "(1,(1,2))");
  CHECK(S(idx2crd(IntTuple{1, IntTuple{1, 2}}, shape)) == "(1,(1,2))");
  IntTuple stride{3, IntTuple{12, 1}};
  CHECK(crd2idx(16, shape, stride) == 17);
  CHECK(crd2idx(IntTuple{1, 5}, shape, stride) == 17);
  CHECK(crd2idx(IntTuple{1, IntTuple{1, 2}}, shape, stride) == 17);
  Layout l(shape, stride);
  CHECK(l(16) == 17);
  CHECK(l(1, 5) == 17);
  CHECK(l(IntTuple{1, IntTuple{1, 2}}) == 17);
}

TEST_CASE("docs 01_layout: sublayouts, select, take", "[layout][docs]") {
  Layout a = make_layout(IntTuple{4, IntTuple{3, 6}});
  CHECK(S(a) == "(4,(3,6)):(1,(4,12))");
  CHECK(S(get<0>(a)) == "4:1");
  CHECK(S(get<1>(a)) == "(3,6):(4,12)");
  CHECK(S(get<1, 0>(a)) == "3:4");
  CHECK(S(get<1, 1>(a)) == "6:12");
  CHECK(S(mode(a, {1, 1})) == "6:12");
  Layout b = make_layout(IntTuple{2, 3, 5, 7});
  CHECK(S(b) == "(2,3,5,7):(1,2,6,30)");
  CHECK(S(select(b, {1, 3})) == "(3,7):(2,30)");
  CHECK(S(select(b, {0, 1, 3})) == "(2,3,7):(1,2,30)");
  CHECK(S(select(b, {2})) == "(5):(6)");
  CHECK(S(take(b, 1, 3)) == "(3,5):(2,6)");
  CHECK(S(take(b, 1, 4)) == "(3,5,7):(2,6,30)");
  CHECK_THROWS_AS(take(b, 1, 1), Error);
}

TEST_CASE("docs 01_layout: concatenation, append, group, flatten", "[layout][docs]") {
  Layout a(3, 1), b(4, 3);
  Layout row = make_layout(a, b), col = make_layout(b, a);
  CHECK(S(row) == "(3,4):(1,3)");
  CHECK(S(col) == "(4,3):(3,1)");
  CHECK(S(make_layout(row, col)) == "((3,4),(4,3)):((1,3),(3,1))");
  Layout aa = make_layout(a);
  CHECK(S(aa) == "(3):(1)");
  CHECK(S(make_layout(aa)) == "((3)):((1))");
  Layout ab = append(a, b);
  CHECK(S(ab) == "(3,4):(1,3)");
  CHECK(S(prepend(a, b)) == "(4,3):(3,1)");
  CHECK(S(append(ab, ab)) == "(3,4,(3,4)):(1,3,(1,3))");
  Layout x = make_layout(IntTuple{2, 3, 5, 7});
  Layout g = group_modes(x, 0, 2);
  CHECK(S(g) == "((2,3),5,7):((1,2),6,30)");
  Layout c = group_modes(g, 1, 3);
  CHECK(S(c) == "((2,3),(5,7)):((1,2),(6,30))");
  CHECK(S(flatten(g)) == "(2,3,5,7):(1,2,6,30)");
  CHECK(S(flatten(c)) == "(2,3,5,7):(1,2,6,30)");
}

TEST_CASE("docs: make_layout, LayoutRight, ordered layouts", "[layout][docs]") {
  CHECK(S(make_layout(IntTuple{2, 4})) == "(2,4):(1,2)");
  CHECK(S(make_layout(IntTuple{2, 4}, LayoutRight{})) == "(2,4):(4,1)");
  // 01_layout.md: s2xh4 (2,(2,2)):(4,(2,1)) "could be generated with LayoutRight".
  CHECK(S(make_layout_row_major(IntTuple{2, IntTuple{2, 2}})) == "(2,(2,2)):(4,(2,1))");
  // layout.hpp documentation of make_ordered_layout / make_layout_like.
  CHECK(S(make_ordered_layout(IntTuple{2, 2, 2, 2}, IntTuple{0, 2, 3, 1})) == "(2,2,2,2):(1,4,8,2)");
  // (The documented (2,3,4,5) example uses dynamic orders 67 and 42, which CuTe ranks after all static
  // ones; every cutejit leaf is static, so that example does not apply.)
  CHECK(S(make_layout_like(L("(2,2,2,2):(0,2,4,1)"))) == "(2,2,2,2):(0,2,4,1)");
  CHECK(S(make_layout_like(L("(2,3,4,5):(0,42,1,0)"))) == "(2,3,4,5):(0,4,1,0)");
}

TEST_CASE("docs 02: coalesce", "[algebra][docs]") {
  Layout a = L("(2,(1,6)):(1,(6,2))");
  CHECK(S(coalesce(a)) == "12:1");
  CHECK(S(coalesce(a, IntTuple{1, 1})) == "(2,6):(1,2)");
  CHECK(coalesce(a, IntTuple{1, 1}) == make_layout(coalesce(get<0>(a)), coalesce(get<1>(a))));
  CHECK(S(coalesce(L("(2,4):(1,2)"))) == "8:1");
  // coalesce.hpp comment: (_4,_1):(_1,_0) coalesces to _4:_1.
  CHECK(S(coalesce(L("(4,1):(1,0)"))) == "4:1");
}

TEST_CASE("docs 02: composition", "[algebra][docs]") {
  CHECK(S(composition(L("(6,2):(8,2)"), L("(4,3):(3,1)"))) == "((2,2),3):((24,2),8)");
  CHECK(S(composition(L("20:2"), L("(5,4):(4,1)"))) == "(5,4):(8,2)");
  CHECK(S(composition(L("(10,2):(16,4)"), L("(5,4):(1,5)"))) == "(5,(2,2)):(16,(80,4))");
  Layout a = L("(12,(4,8)):(59,(13,1))");
  CHECK(S(composition(a, make_tile(Layout(3, 4), Layout(8, 2)))) == "(3,(2,4)):(236,(26,1))");
  CHECK(S(composition(a, make_tile(3, 8))) == "(3,(4,2)):(59,(13,1))");
  // "(3,6,2,8):(w,x,y,z) o 16:9 = (1,2,2,4):(9*w,3*x,y,z)", here with (w,x,y,z) = (1,100,1000,5000)
  // (strides that do not coalesce). CuTe's implementation drops the size-1 mode of that form.
  Layout r = composition(L("(3,6,2,8):(1,100,1000,5000)"), L("16:9"));
  Layout doc = L("(1,2,2,4):(9,300,1000,5000)");
  CHECK(size(r) == 16);
  for (int i = 0; i < 16; ++i) CHECK(r(i) == doc(i));
}

TEST_CASE("docs 02: complement", "[algebra][docs]") {
  CHECK(S(complement(L("4:1"), 24)) == "6:4");
  CHECK(S(complement(L("6:4"), 24)) == "4:1");
  CHECK(S(complement(L("(4,6):(1,4)"), 24)) == "1:0");
  CHECK(S(complement(L("4:2"), 24)) == "(2,3):(1,8)");
  CHECK(S(complement(L("(2,4):(1,6)"), 24)) == "3:2");
  CHECK(S(complement(L("(2,2):(1,6)"), 24)) == "(3,2):(2,12)");
}

TEST_CASE("docs 02: logical_divide and friends", "[algebra][docs]") {
  CHECK(S(logical_divide(L("(4,2,3):(2,1,8)"), L("4:2"))) == "((2,2),(2,3)):((4,1),(2,8))");
  Layout a = L("(9,(4,8)):(59,(13,1))");
  Tile t = make_tile(Layout(3, 3), L("(2,4):(1,8)"));
  Layout ld = logical_divide(a, t);
  CHECK(S(get<0, 0>(ld)) == "3:177");
  CHECK(S(make_layout(get<0, 0>(ld), get<1, 0>(ld))) == "(3,(2,4)):(177,(13,2))");
  // "((TileM,RestM), (TileN,RestN)) with shape ((3,3), (8,4))"
  CHECK(S(product_each(shape(get<0>(ld)))) == "(3,3)");
  CHECK(S(product_each(shape(get<1>(ld)))) == "(8,4)");
  Layout zd = zipped_divide(a, t);
  CHECK(S(product_each(shape(zd))) == "(24,12)");
  CHECK(S(product_each(shape(get<0>(zd)))) == "(3,8)");
  CHECK(S(product_each(shape(get<1>(zd)))) == "(3,4)");
  CHECK(get<0>(zd) == composition(a, t));
  CHECK(S(get<0>(zd)) == "(3,(2,4)):(177,(13,2))");
  CHECK(rank(tiled_divide(a, t)) == 3);
  CHECK(rank(flat_divide(a, t)) == 4);
}

TEST_CASE("docs 02: logical_product", "[algebra][docs]") {
  CHECK(S(complement(L("(2,2):(4,1)"), 24)) == "(2,3):(2,8)");
  CHECK(S(logical_product(L("(2,2):(4,1)"), L("6:1"))) == "((2,2),(2,3)):((4,1),(2,8))");
  Layout p = logical_product(L("(2,2):(4,1)"), L("(4,2):(2,1)"));
  CHECK(size(get<1>(p)) == 8);
}

TEST_CASE("docs 02: blocked and raked products are rank-sensitive", "[algebra][docs]") {
  // "A 2x5 row-major layout is arranged as a tile in a 3x4 column-major arrangement."
  Layout a = make_layout(IntTuple{2, 5}, LayoutRight{});
  Layout b = make_layout(IntTuple{3, 4});
  Layout bp = blocked_product(a, b);
  CHECK(rank(bp) == 2);
  CHECK(S(product_each(shape(bp))) == "(6,20)");
  // Element (r,c) of the blocked result: block (r/2,c/5), inside it (r%2,c%5).
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 20; ++c) CHECK(bp(IntTuple{IntTuple{r % 2, r / 2}, IntTuple{c % 5, c / 5}}) ==
                                       a(r % 2, c % 5) + size(a) * b(r / 2, c / 5));
  Layout rp = raked_product(a, b);
  CHECK(S(product_each(shape(rp))) == "(6,20)");
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 20; ++c) CHECK(rp(IntTuple{IntTuple{r % 3, r / 3}, IntTuple{c % 4, c / 4}}) ==
                                       a(r / 3, c / 4) + size(a) * b(r % 3, c % 4));
}

TEST_CASE("docs: swizzle printing and semantics", "[swizzle][docs]") {
  Swizzle sw(3, 4, 3);
  CHECK(to_string(sw) == "Sw<3,4,3>");
  CHECK(sw.yyy_mask() == 0b1110000000);  // yyy bits [7,10) ...
  CHECK(sw.zzz_mask() == 0b0001110000);  // ... xor-ed into zzz bits [4,7)
  CHECK(sw(0b1010000000) == (0b1010000000 ^ 0b0001010000));
  ComposedLayout c = composition(sw, L("(8,64):(64,1)"));
  CHECK(to_string(c) == "Sw<3,4,3> o 0 o (8,64):(64,1)");
  CHECK(parse_composed_layout("Sw<3,4,3> o 0 o (8,64):(64,1)") == c);
  CHECK(c(1, 0) == sw(64));
}
