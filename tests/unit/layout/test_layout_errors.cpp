// Negative cases: exact error messages for malformed text and violated preconditions.
#include <catch2/catch.hpp>

#include <cutejit/layout.hpp>

using namespace cutejit;

namespace {
Layout L(const char* s) { return parse_layout(s); }
}  // namespace

TEST_CASE("errors: malformed layout text points at the column", "[layout][errors]") {
  CHECK_THROWS_WITH(parse_layout("(4,2:(1,4)"),
                    "error: parse_layout: expected ',' or ')' at column 5 of \"(4,2:(1,4)\"\n"
                    "  (4,2:(1,4)\n"
                    "      ^");
  CHECK_THROWS_WITH(parse_layout("(4,2)(1,4)"),
                    "error: parse_layout: expected ':' between shape and stride at column 6 of \"(4,2)(1,4)\"\n"
                    "  (4,2)(1,4)\n"
                    "       ^");
  CHECK_THROWS_WITH(parse_layout("(4,2):(1,(4,8))"),
                    "error: parse_layout: expected a stride congruent with the shape (4,2) (got the stride (1,(4,8))) at "
                    "column 1 of \"(4,2):(1,(4,8))\"\n"
                    "  (4,2):(1,(4,8))\n"
                    "  ^");
  CHECK_THROWS_WITH(parse_layout("8:1 x"),
                    "error: parse_layout: expected end of text at column 5 of \"8:1 x\"\n"
                    "  8:1 x\n"
                    "      ^");
  CHECK_THROWS_WITH(parse_int_tuple("(4,,2)"),
                    "error: parse_int_tuple: expected an integer or '(' at column 4 of \"(4,,2)\"\n"
                    "  (4,,2)\n"
                    "     ^");
  CHECK_THROWS_AS(parse_layout(""), Error);
  CHECK_THROWS_AS(parse_layout("(4,2):(1,4"), Error);
  CHECK_THROWS_AS(parse_layout("99999999999999999999:1"), Error);
}

TEST_CASE("errors: numbers past 64 bits, swizzle fields past int and deep nesting are refused", "[layout][errors]") {
  // 2 * 10^19 is past 2^64: it must not wrap around to 1553255926290448384.
  CHECK_THROWS_WITH(parse_layout("20000000000000000000:1"), Catch::Contains("expected an integer that fits in 64 bits at column 1"));
  CHECK(parse_layout("9223372036854775807:1").shape().value() == 9223372036854775807);
  CHECK_THROWS_WITH(parse_layout("9223372036854775808:1"), Catch::Contains("an integer that fits in 64 bits"));
  // 4294967299 would be 3 as an int.
  CHECK_THROWS_WITH(parse_composed_layout("Sw<4294967299,4,3> o (8,64):(64,1)"),
                    Catch::Contains("expected a swizzle field from -62 to 62 at column 4"));
  CHECK(to_string(parse_composed_layout("Sw<3,4,3> o (8,64):(64,1)").layout_a()) == "Sw<3,4,3>");
  // 40,000 levels of parentheses: an error, not a stack overflow.
  std::string deep = std::string(40000, '(') + "1" + std::string(40000, ')') + ":1";
  CHECK_THROWS_WITH(parse_layout(deep), Catch::Contains("expected at most 64 levels of nesting"));
  std::string fine = std::string(64, '(') + "1" + std::string(64, ')');
  CHECK(parse_int_tuple(fine).rank() == 1);
}

TEST_CASE("errors: composition preconditions", "[algebra][errors]") {
  CHECK_THROWS_WITH(composition(L("(4,6):(1,5)"), L("3:6")),
                    "error: composition((4,6):(1,5), 3:6): stride divisibility condition failed: the remaining stride 6 of "
                    "the right layout reaches mode 0 (shape 4) of the coalesced left layout (4,6):(1,5), and is "
                    "neither a multiple of 4 nor less than it (valid: a multiple of 4, or a divisor of it)");
  CHECK_THROWS_WITH(composition(L("(4,6):(1,5)"), L("4:3")),
                    "error: composition((4,6):(1,5), 4:3): stride divisibility condition failed: the remaining stride 3 of "
                    "the right layout does not divide mode 0 (shape 4) of the coalesced left layout (4,6):(1,5), and "
                    "the remaining shape 4 runs past that mode (valid: a stride dividing 4, or at most 2 elements at "
                    "that stride)");
  CHECK_THROWS_WITH(composition(L("(4,6):(1,5)"), L("6:1")),
                    "error: composition((4,6):(1,5), 6:1): shape divisibility condition failed: the remaining shape 6 of the "
                    "right layout is not a multiple of 4, the extent that mode 0 (shape 4) of the coalesced left "
                    "layout (4,6):(1,5) provides at that stride");
  CHECK_THROWS_WITH(composition(L("(4,6):(1,5)"), make_tile(2, 2, 2)),
                    "error: composition((4,6):(1,5), (2,2,2)): the tiler has 3 modes but the layout only 2 (a by-mode tiler "
                    "needs at most rank(layout) modes)");
  // Admissible neighbours of the failing cases.
  CHECK(to_string(composition(L("(4,6):(1,5)"), L("8:2"))) == "(2,4):(2,5)");
  CHECK(to_string(composition(L("(4,6):(1,5)"), L("3:1"))) == "3:1");
  CHECK(to_string(composition(L("(4,6):(1,5)"), L("2:3"))) == "2:3");
}

TEST_CASE("errors: other preconditions", "[algebra][errors]") {
  CHECK_THROWS_WITH(complement(L("(2,2):(1,1)"), 8),
                    "error: complement((2,2):(1,1), 8): non-injective layout detected: the filtered layout (2,2):(1,1) has "
                    "overlapping modes (complement needs an injective layout)");
  CHECK_THROWS_WITH(Layout(IntTuple{4, 2}, 1),
                    "error: Layout: the stride 1 is not congruent with the shape (4,2) (they need the same nesting, e.g. "
                    "(4,(2,3)):(1,(4,8)))");
  CHECK_THROWS_WITH(mode(L("(4,2):(1,4)"), 2),
                    "error: mode: index 2 is out of range for (4,2):(1,4) (rank 2, valid modes 0..1)");
  CHECK_THROWS_WITH(tile_to_shape(L("(3,2):(1,3)"), IntTuple{8, 4}),
                    "error: tile_to_shape((3,2):(1,3), (8,4)): the block shape (3,2) does not divide the target shape (8,4) "
                    "mode by mode");
  CHECK_THROWS_WITH(downcast(L("(4,2):(2,8)"), 2),
                    "error: downcast<2>((4,2):(2,8)): downcast requires adjacent elements (a mode of stride 1)");
  CHECK_THROWS_WITH(upcast(L("(4,2):(3,8)"), 2),
                    "error: upcast<2>((4,2):(3,8)): divisibility condition failed: the stride 3 and 2 must divide one another");
  CHECK_THROWS_WITH(Swizzle(3, 4, 2), "error: Swizzle Sw<3,4,2>: |SShift| must be >= BBits (3)");
  CHECK_THROWS_AS(logical_divide(L("(4,6):(1,5)"), L("4:3")), Error);
}
