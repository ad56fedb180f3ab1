// By-mode tilers with `_` (keep the mode whole) and nested tiles (by-mode again inside a mode).
// Expected values are worked by hand from CuTe's definitions:
//   logical_divide(A, B) = composition(A, (B, complement(B, shape(coalesce(A)))))
//   zipped_divide gathers ((tiles...),(rests..., untouched modes...)) by the tiler's nesting.
#include <catch2/catch.hpp>

#include <cutejit/layout.hpp>

using namespace cutejit;
using Catch::Matchers::Contains;

namespace {
std::string S(const Layout& l) { return to_string(l); }
Layout L(const char* s) { return parse_layout(s); }
}  // namespace

TEST_CASE("tilers: printing nested tiles and _", "[layout][tiler]") {
  CHECK(to_string(make_tile(make_tile(2, 3), _, Layout(4, 2))) == "((2,3),_,4:2)");
  Tile t = make_tile(_, 8);
  CHECK(t[0].is_underscore());
  CHECK(t[1].is_int());
  CHECK_THROWS_WITH(t[0].layout(), Contains("has no layout of its own"));
}

TEST_CASE("tilers: _ keeps a mode whole", "[layout][tiler]") {
  Layout a = L("(12,(4,8)):(59,(13,1))");
  // mode 0: 12:59 o 3:1 = 3:59; mode 1 untouched
  CHECK(S(composition(a, make_tile(3, _))) == "(3,(4,8)):(59,(13,1))");
  CHECK(S(composition(a, make_tile(_, _))) == S(a));
  // mode 1: 8:1 / 2:1 -> complement(2:1, 8) = 4:2 -> (2,4):(1,2)
  CHECK(S(logical_divide(L("(6,8):(8,1)"), make_tile(_, 2))) == "(6,(2,4)):(8,(1,2))");
  // mode 1: 3:2 x 2:1 -> complement(3:2, 6) = 2:1 -> (3,2):(2,1)
  CHECK(S(logical_product(L("(2,3):(1,2)"), make_tile(_, Layout(2, 1)))) == "(2,(3,2)):(1,(2,1))");
}

TEST_CASE("tilers: nested tiles apply by-mode inside a mode", "[layout][tiler]") {
  Layout a = L("(8,(4,6)):(1,(8,32))");
  Tile t = make_tile(Layout(2, 1), make_tile(2, 3));
  // 8:1 / 2:1 = (2,4):(1,2); 4:8 / 2 = (2,2):(8,16); 6:32 / 3 = (3,2):(32,96)
  CHECK(S(logical_divide(a, t)) == "((2,4),((2,2),(3,2))):((1,2),((8,16),(32,96)))");
  CHECK(S(zipped_divide(a, t)) == "((2,(2,3)),(4,(2,2))):((1,(8,32)),(2,(16,96)))");
  CHECK(S(tiled_divide(a, t)) == "((2,(2,3)),4,(2,2)):((1,(8,32)),2,(16,96))");
  CHECK(S(flat_divide(a, t)) == "(2,(2,3),4,(2,2)):(1,(8,32),2,(16,96))");
  // composition drops the sub-modes a nested tile does not cover, as CuTe does at the top
  CHECK(S(composition(a, make_tile(4, make_tile(2)))) == "(4,(2)):(1,(8))");
}

TEST_CASE("tilers: _ in zipped forms splits a rank-2 mode, as CuTe's zip2_by", "[layout][tiler]") {
  // the kept mode (4,6) is read as (tile, rest) = (4, 6)
  CHECK(S(zipped_divide(L("(8,(4,6)):(1,(8,32))"), make_tile(Layout(2, 1), _))) == "((2,4),(4,6)):((1,8),(2,32))");
  CHECK_THROWS_WITH(zipped_divide(L("(8,6):(1,8)"), make_tile(Layout(2, 1), _)),
                    Contains("zipped_divide((8,6):(1,8), (2:1,_))") && Contains("6:8") &&
                        Contains("a `_` tile mode keeps the layout's mode whole"));
}

TEST_CASE("tilers: a nested tile needs a mode with enough sub-modes", "[layout][tiler]") {
  CHECK_THROWS_WITH(logical_divide(L("(8,6):(1,8)"), make_tile(2, make_tile(2, 3))),
                    Contains("logical_divide(6:8, (2,3))") && Contains("the tiler has 2 modes but the layout only 1"));
}
