// make_identity_layout, make_fragment_like and complement's negative-stride error.
// Expected values are worked by hand from CuTe's definitions (layout.hpp):
//   make_identity_layout(s)  = make_layout(s, make_basis_like(s)), E<i,j> printed 1@j@i
//   make_fragment_like(l)    = tiled_product(mode 0 compact column-major (stride-0 kept),
//                                            make_ordered_layout(modes 1.., their strides))
#include <catch2/catch.hpp>

#include <cutejit/layout.hpp>

using namespace cutejit;
using Catch::Matchers::Contains;

namespace {
std::string S(const Layout& l) { return to_string(l); }
Layout L(const char* s) { return parse_layout(s); }
}  // namespace

TEST_CASE("identity layout: prints CuTe's basis strides and maps a coordinate to itself", "[layout][identity]") {
  CHECK(to_string(make_identity_layout(IntTuple{4, 6})) == "(4,6):(1@0,1@1)");
  CHECK(to_string(make_identity_layout(IntTuple{4, IntTuple{2, 3}})) == "(4,(2,3)):(1@0,(1@0@1,1@1@1))");
  CHECK(to_string(make_identity_layout(8)) == "8:1");

  IdentityLayout id = make_identity_layout(IntTuple{4, IntTuple{2, 3}});
  CHECK(size(id).value() == 24);
  CHECK(rank(id) == 2);
  CHECK(to_string(id(13)) == "(1,(1,1))");  // 13 = 1 + 4*(1 + 2*1)
  CHECK(to_string(id(IntTuple{3, 5})) == "(3,(1,2))");

  IdentityLayout flat = make_identity_layout(IntTuple{4, 6});
  REQUIRE(flat.coordinate_layouts().size() == 2);
  CHECK(S(flat.coordinate_layouts()[0]) == "(4,6):(1,0)");
  CHECK(S(flat.coordinate_layouts()[1]) == "(4,6):(0,1)");
}

TEST_CASE("make_fragment_like: mode 0 column-major, the rest in stride order", "[layout][fragment]") {
  // rest (8):(1) is placed after the 4 elements of mode 0, and stays a rank-1 mode
  CHECK(S(make_fragment_like(L("(4,8):(8,1)"))) == "(4,(8)):(1,(4))");
  CHECK(S(make_fragment_like(L("(4,8):(1,4)"))) == "(4,(8)):(1,(4))");
  // rest (3,4):(1,3) ordered, scaled past mode 0's 2 elements
  CHECK(S(make_fragment_like(L("(2,3,4):(12,1,3)"))) == "(2,3,4):(1,2,6)");
  // the stride-0 sub-mode of mode 0 stays 0 (a broadcast); the rest starts after the 2 others
  CHECK(S(make_fragment_like(L("((2,2),4):((0,1),2)"))) == "((2,2),(4)):((0,1),(2))");
  // rank 1: column-major
  CHECK(S(make_fragment_like(L("8:2"))) == "8:1");
  CHECK(S(make_fragment_like(L("(2,4):(4,1)"))) == "(2,(4)):(1,(2))");
}

TEST_CASE("complement: negative strides are refused with both layouts", "[layout][errors]") {
  CHECK_THROWS_WITH(complement(L("(4,2):(-1,4)"), 16),
                    "error: complement((4,2):(-1,4), 16): the filtered layout (4,2):(-1,4) has the negative stride -1; "
                    "complement is defined for non-negative strides only");
  CHECK_THROWS_WITH(logical_divide(L("16:1"), L("4:-2")), Contains("negative stride -2"));
}
