// slice, dice and slice_and_offset on CuTe's own forms, worked by hand: `_` keeps a mode,
// an integer fixes it (and moves the offset), nested coordinates flatten into one tuple, and a
// lone `_` (slice) or a lone integer (dice) returns the layout itself.
#include <catch2/catch.hpp>

#include <cutejit/layout.hpp>
#include <cutejit/layout/slice.hpp>

using namespace cutejit;

TEST_CASE("slice and dice keep CuTe's result forms", "[layout]") {
  Layout l = parse_layout("(4,8):(1,4)");
  CHECK(to_string(slice(IntTuple{_, 2}, l)) == "(4):(1)");
  CHECK(slice_and_offset(IntTuple{_, 2}, l).offset.value() == 8);
  CHECK(to_string(slice(IntTuple{2, _}, l)) == "(8):(4)");
  CHECK(slice_and_offset(IntTuple{2, _}, l).offset.value() == 2);
  CHECK(to_string(dice(IntTuple{_, 2}, l)) == "(8):(4)");

  Layout nested = parse_layout("((2,3),4):((1,2),6)");
  // ((_,1),_): mode (2,3) keeps its 2 at offset 1*2, mode 4 is kept whole; CuTe flattens the
  // kept modes into one tuple.
  CHECK(to_string(slice(IntTuple{IntTuple{_, 1}, _}, nested)) == "(2,4):(1,6)");
  CHECK(slice_and_offset(IntTuple{IntTuple{_, 1}, _}, nested).offset.value() == 2);

  Layout v = parse_layout("8:1");
  CHECK(to_string(slice(_, v)) == "8:1");
  CHECK(to_string(slice(_, l)) == "(4,8):(1,4)");
  CHECK(to_string(dice(3, v)) == "8:1");
  CHECK(slice_and_offset(3, v).offset.value() == 3);
}
