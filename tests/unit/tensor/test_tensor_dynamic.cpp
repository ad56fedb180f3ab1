// The layout algebra with dynamic leaves, inside a traced kernel. Each dynamic leaf is a traced
// Int holding a known constant, so the layout code takes its dynamic path (it cannot see the
// value) while LLVM can: every comparison of a dynamic result with the static result at each
// index is emitted as `if (dynamic != static) trap()`, and must fold away. A PTX without
// `trap` proves the emitted IR computes exactly the static layout.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cutejit;
using test::contains;
using Catch::Matchers::Contains;

namespace {

const Target sm90a = Target::parse("sm_90a");

/// The same layout with every leaf a traced constant (dynamic to the layout code).
IntTuple dynamic_copy(const IntTuple& t) {
  if (t.is_leaf()) return Int(int32_t(t.value()));
  std::vector<IntTuple> out;
  for (const auto& e : t.elems()) out.push_back(dynamic_copy(e));
  return IntTuple(std::move(out));
}
Layout dynamic_copy(const Layout& l) { return Layout(dynamic_copy(l.shape()), dynamic_copy(l.stride())); }

int checks = 0;   // how many values were checked in the kernel (dynamic) or on the host (folded)
Int differences;  // the OR of (dynamic ^ static) over the kernel's checks: folds to 0 when all agree

void expect_same(const Integer& got, int64_t want) {
  ++checks;
  if (got.is_static()) {
    CHECK(got.value() == want);
  } else {
    differences = differences | (got.read(detail::Where::current()) ^ int32_t(want));
  }
}

/// `dynamic` must be the function `expected` on its whole domain.
void expect_same(const Layout& dynamic, const Layout& expected) {
  expect_same(size(dynamic), size(expected).value());
  for (int64_t i = 0; i < size(expected).value(); ++i) expect_same(dynamic(i), expected(i).value());
}

/// Traces `body` into a kernel and requires that every dynamic check folded away (one trap
/// guarded by the OR of all differences).
template <class F>
void require_folded(F body) {
  checks = 0;
  Kernel k{"dynamic_layout", [&](Tensor<i32> out) {
    differences = Int(0);
    body();
    if_(differences != 0, [] { trap(); });
    out(0) = 1;  // something to keep the kernel non-empty
  }};
  std::string ptx = k.compile(sm90a, test::vector_arg<int32_t>()).ptx;
  CHECK(checks > 0);
  CHECK_FALSE(contains(ptx, "trap"));
}

}  // namespace

TEST_CASE("dynamic leaves: size, cosize, evaluation, crd2idx, idx2crd", "[tensor]") {
  Layout s = parse_layout("(4,(2,3)):(1,(4,8))");
  require_folded([&] {
    Layout d = dynamic_copy(s);
    CHECK(to_string(d) == "(?,(?,?)):(?,(?,?))");
    expect_same(d, s);
    expect_same(cosize(d), cosize(s).value());
    expect_same(crd2idx(IntTuple{Int(3), IntTuple{Int(1), Int(2)}}, d), s(3, IntTuple{1, 2}).value());
    IntTuple c = idx2crd(IntTuple(Int(17)), d.shape());
    CHECK(to_string(c) == "(?,(?,?))");
    expect_same(c[0].leaf(), 1);
    expect_same(c[1][0].leaf(), 0);
    expect_same(c[1][1].leaf(), 2);
  });
}

TEST_CASE("dynamic leaves: static x static stays on the host, identities fold at trace time", "[tensor]") {
  require_folded([&] {
    Int m(12);
    Integer x = Integer(m) * 1 + 0;
    CHECK(x.is_dynamic());
    CHECK(same(x, Integer(m)));                    // no op was emitted for *1 and +0
    CHECK((Integer(m) * 0).is_static());           // x*0 is a static 0
    Layout l = make_layout(IntTuple{4, 8});        // all static: host values
    CHECK(size(l).is_static());
    Layout d = make_layout(IntTuple{m, 8});        // compact strides over a dynamic shape
    CHECK(to_string(d) == "(?,8):(1,?)");
    expect_same(d, make_layout(IntTuple{12, 8}));
  });
}

TEST_CASE("dynamic leaves: divides, complement and logical_divide with a dynamic extent", "[tensor]") {
  for (int n : {96, 100, 7}) {
    INFO("n = " << n);
    require_folded([&] {
      Int dn(n);
      // complement of a static tiler in a dynamic cotarget: the rest is ceil_div(n, 16)
      expect_same(complement(Layout(16, 1), IntTuple(dn)), complement(Layout(16, 1), IntTuple(n)));
      // 1-D tiling of a dynamic vector n:1 by 16
      expect_same(logical_divide(Layout(dn, 1), Layout(16, 1)), logical_divide(Layout(n, 1), Layout(16, 1)));
      expect_same(zipped_divide(Layout(dn, 1), Layout(8, 2)), zipped_divide(Layout(n, 1), Layout(8, 2)));
    });
  }
}

TEST_CASE("dynamic leaves: by-mode divides and local tiles of a row-major (M,N) matrix", "[tensor]") {
  for (auto [m, n] : {std::pair{32, 64}, std::pair{20, 36}, std::pair{33, 17}}) {
    INFO("M = " << m << ", N = " << n);
    Layout s = make_layout(IntTuple{m, n}, LayoutRight{});
    require_folded([&] {
      Int dm(m), dn(n);
      Layout d(IntTuple{dm, dn}, IntTuple{dn, 1});
      Tile tiler = make_tile(16, 32);
      expect_same(zipped_divide(d, tiler), zipped_divide(s, tiler));
      expect_same(tiled_divide(d, tiler), tiled_divide(s, tiler));
      expect_same(flat_divide(d, tiler), flat_divide(s, tiler));
      // tile (1, 0): inside the grid of tiles for every size here (a coordinate outside the
      // domain may differ: a static grid of one tile has stride 0, a dynamic one does not)
      SlicedLayout tile = slice_and_offset(IntTuple{IntTuple{_, _}, IntTuple{Int(1), Int(0)}}, zipped_divide(d, tiler));
      SlicedLayout want = slice_and_offset(IntTuple{IntTuple{_, _}, IntTuple{1, 0}}, zipped_divide(s, tiler));
      expect_same(tile.layout, want.layout);
      expect_same(tile.offset, want.offset.value());
    });
  }
}

TEST_CASE("dynamic leaves: composition and right_inverse beyond CuTeDSL (stated divisibility)", "[tensor]") {
  require_folded([&] {
    // (M,N):(1,M) with M known to be a multiple of 64: composing within mode 0 is defined.
    Int m = assume_divisible(Int(64), 64), n(8);
    Layout d(IntTuple{m, n}, IntTuple{1, m});
    Layout s(IntTuple{64, 8}, IntTuple{1, 64});
    // (M,N):(1,2M) does not coalesce: the composition runs mode by mode, on divisibility facts
    Layout d2(IntTuple{m, n}, IntTuple{1, Integer(m) * 2}), s2(IntTuple{64, 8}, IntTuple{1, 128});
    for (const char* rhs : {"32:1", "(4,8):(2,8)", "(16,2):(2,32)", "(2,2,4):(1,32,4)"}) {
      INFO("rhs = " << rhs);
      expect_same(composition(d2, parse_layout(rhs)), composition(s2, parse_layout(rhs)));
    }
    // the stride M*1 of mode 1 is provably mode 0's extent: coalesce merges, right_inverse inverts
    CHECK(to_string(coalesce(d)) == "?:1");
    expect_same(right_inverse(d), right_inverse(s));
    expect_same(upcast(Layout(IntTuple{4, n}, IntTuple{1, m}), 4), upcast(Layout(IntTuple{4, 8}, IntTuple{1, 64}), 4));
  });
}

TEST_CASE("dynamic leaves: what cannot be proven is an error naming the layouts and the fix", "[tensor]") {
  Kernel k{"unprovable", [](Tensor<i32> out, Int m) {
    Layout d(IntTuple{m, 8}, IntTuple{1, 100});  // nothing is known about m
    Layout r = composition(d, Layout(32, 1));
    out(0) = size(r).read(detail::Where::current());
  }};
  CHECK_THROWS_WITH(k.compile(sm90a, test::vector_arg<int32_t>(), 5),
                    Contains("composition((?,8):(1,100), 32:1)") && Contains("cannot prove the divisibility condition") &&
                        Contains("assume_divisible") && Contains("test_tensor_dynamic.cpp"));
  Kernel tile{"dynamic_tile", [](Tensor<i32> out, Int m) { local_tile(out, IntTuple{m}, IntTuple{0}); }};
  CHECK_THROWS_WITH(tile.compile(sm90a, test::vector_arg<int32_t>(), 5),
                    Contains("a tile shape must be static") && Contains("test_tensor_dynamic.cpp"));
  Kernel regs{"dynamic_registers", [](Tensor<i32> out) { make_fragment_like(out); }};
  CHECK_THROWS_WITH(regs.compile(sm90a, test::vector_arg<int32_t>()), Contains("a register tensor needs a static shape"));
}

TEST_CASE("dynamic leaves: the folding check does catch a wrong value", "[tensor]") {
  Kernel k{"wrong_on_purpose", [](Tensor<i32> out) {
    Layout d = dynamic_copy(parse_layout("(4,2):(2,1)"));
    if_(d(5).read(detail::Where::current()) != 4, [] { trap(); });  // d(5) is 3: the trap stays
    out(0) = 1;
  }};
  CHECK(contains(k.compile(sm90a, test::vector_arg<int32_t>()).ptx, "trap"));
}
