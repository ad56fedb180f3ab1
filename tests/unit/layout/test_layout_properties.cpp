// Property tests of the layout algebra on random small layouts (fixed seed).
#include <catch2/catch.hpp>

#include <cutejit/layout.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>

using namespace cutejit;

namespace {

struct Gen {
  std::mt19937_64 rng{20240611};
  int64_t uni(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

  /// Randomly nest a flat list of leaves (depth <= 2).
  std::pair<IntTuple, IntTuple> nest(const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
    if (s.size() == 1 && uni(0, 1)) return {s[0], d[0]};
    std::vector<IntTuple> sh, st;
    size_t i = 0;
    while (i < s.size()) {
      size_t n = std::min<size_t>(s.size() - i, static_cast<size_t>(uni(1, 3)));
      if (n == 1 || uni(0, 2) == 0) {
        for (size_t k = 0; k < n; ++k) sh.emplace_back(s[i + k]), st.emplace_back(d[i + k]);
      } else {
        std::vector<IntTuple> a, b;
        for (size_t k = 0; k < n; ++k) a.emplace_back(s[i + k]), b.emplace_back(d[i + k]);
        sh.emplace_back(IntTuple(a)), st.emplace_back(IntTuple(b));
      }
      i += n;
    }
    return {IntTuple(sh), IntTuple(st)};
  }

  /// Arbitrary layout: shapes 1..6, strides 0..24.
  Layout any() {
    int n = static_cast<int>(uni(1, 4));
    std::vector<int64_t> s, d;
    for (int i = 0; i < n; ++i) s.push_back(uni(1, 6)), d.push_back(uni(0, 24));
    auto [sh, st] = nest(s, d);
    return Layout(sh, st);
  }

  /// Injective layout: modes in a random order, optionally with gaps between them.
  Layout injective(bool gaps = true) {
    int n = static_cast<int>(uni(1, 4));
    std::vector<int64_t> s(static_cast<size_t>(n)), d(static_cast<size_t>(n));
    std::vector<int> order(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) s[static_cast<size_t>(i)] = uni(1, 5), order[static_cast<size_t>(i)] = i;
    std::shuffle(order.begin(), order.end(), rng);
    int64_t cur = gaps ? uni(1, 3) : 1;
    for (int k : order) {
      d[static_cast<size_t>(k)] = cur;
      cur *= s[static_cast<size_t>(k)] * (gaps ? uni(1, 2) : 1);
    }
    auto [sh, st] = nest(s, d);
    return Layout(sh, st);
  }
};

std::vector<int64_t> image(const Layout& l) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < size(l); ++i) v.push_back(l(i));
  return v;
}

std::multiset<int64_t> image_set(const Layout& l) {
  auto v = image(l);
  return {v.begin(), v.end()};
}

}  // namespace

TEST_CASE("property: parse(to_string(L)) == L", "[layout][property]") {
  Gen g;
  for (int t = 0; t < 3000; ++t) {
    Layout l = g.any();
    REQUIRE(parse_layout(to_string(l)) == l);
    REQUIRE(parse_int_tuple(to_string(l.shape())) == l.shape());
  }
  CHECK(parse_layout(" ( 4 , ( 2 , 3 ) ) : ( 1 , ( 4 , 8 ) ) ") == Layout(IntTuple{4, IntTuple{2, 3}}, IntTuple{1, IntTuple{4, 8}}));
  CHECK(parse_layout("(_8,):(_1,)") == Layout(IntTuple{8}, IntTuple{1}));
}

TEST_CASE("property: coalesce and filter preserve the function", "[algebra][property]") {
  Gen g;
  for (int t = 0; t < 3000; ++t) {
    Layout l = g.any();
    Layout c = coalesce(l);
    REQUIRE(size(c) == size(l));
    REQUIRE(depth(c) <= 1);
    REQUIRE(image(c) == image(l));
    Layout f = filter(l);
    std::set<int64_t> a, b;
    for (auto x : image(l)) a.insert(x);
    for (auto x : image(f)) b.insert(x);
    REQUIRE(a == b);
    if (rank(l) >= 2) {
      Layout cm = coalesce(l, IntTuple{1, 1});
      REQUIRE(rank(cm) == rank(l));
      REQUIRE(image(cm) == image(l));
    }
  }
}

TEST_CASE("property: composition R(c) == A(B(c))", "[algebra][property]") {
  // CuTe's composition is right-distributive over the modes of B; R(c) == A(B(c)) holds for a
  // single-mode B (any A), and for any B when A is linear (coalesces to one mode). For multi-mode B
  // and general A, each mode of R is the composition of A with that mode of B.
  Gen g;
  int ok = 0;
  for (int t = 0; t < 6000; ++t) {
    Layout a = g.any();
    int kind = t % 3;
    Layout b;
    if (kind == 0) {
      b = Layout(g.uni(1, 8), g.uni(0, 12));
    } else if (kind == 1) {
      a = Layout(a.shape(), compact_col_major(a.shape(), g.uni(1, 3)));  // linear
      b = (t % 2) ? g.injective() : g.any();
    } else {
      b = (t % 2) ? g.injective() : g.any();
    }
    Layout r;
    try {
      r = composition(a, b);
    } catch (const Error&) {
      continue;
    }
    ++ok;
    REQUIRE(size(r) == size(b));
    REQUIRE(compatible(b.shape(), r.shape()));
    bool in_domain = true;  // beyond size(a), "a(b(i))" depends on how a is extended
    for (int64_t i = 0; i < size(b); ++i) in_domain = in_domain && b(i) < size(a);
    if (kind < 2 && in_domain) {
      INFO(to_string(a) << " o " << to_string(b) << " = " << to_string(r));
      for (int64_t i = 0; i < size(b); ++i) REQUIRE(r(i) == a(b(i)));
    } else {
      for (int m = 0; b.shape().is_tuple() && m < rank(b); ++m) {
        INFO(to_string(a) << " o " << to_string(b));
        REQUIRE(mode(r, m) == composition(a, mode(b, m)));
      }
    }
  }
  CHECK(ok > 3000);
}

TEST_CASE("property: complement is disjoint and ordered", "[algebra][property]") {
  Gen g;
  for (int t = 0; t < 3000; ++t) {
    Layout l = g.injective();
    int64_t cotarget = cosize(l) * g.uni(1, 3);
    Layout c = complement(l, cotarget);
    auto ci = image(c);
    for (size_t i = 1; i < ci.size(); ++i) REQUIRE(ci[i - 1] < ci[i]);
    std::set<int64_t> li;
    for (auto x : image(l)) li.insert(x);
    for (int64_t i = 1; i < size(c); ++i) REQUIRE(li.count(c(i)) == 0);
    REQUIRE(size(c) >= cotarget / size(filter(l)));
    // (l, c) is injective: the concatenation hits every offset at most once.
    Layout both = make_layout(l, c);
    auto bi = image(both);
    REQUIRE(std::set<int64_t>(bi.begin(), bi.end()).size() == bi.size());
  }
}

TEST_CASE("property: right_inverse and left_inverse", "[algebra][property]") {
  Gen g;
  for (int t = 0; t < 3000; ++t) {
    Layout l = (t % 3 == 0) ? g.any() : g.injective(t % 3 == 1);
    Layout r = right_inverse(l);
    for (int64_t i = 0; i < size(r); ++i) REQUIRE(l(r(i)) == i);
    if (t % 3 == 2) {  // compact injective layouts are bijections onto [0, size)
      REQUIRE(size(r) == size(l));
      Layout li = left_inverse(l);
      for (int64_t i = 0; i < size(l); ++i) REQUIRE(li(l(i)) == i);
    }
  }
}

TEST_CASE("property: divides agree with their logical forms", "[algebra][property]") {
  Gen g;
  int ok = 0;
  for (int t = 0; t < 3000; ++t) {
    IntTuple sh{g.uni(1, 4) * 2, g.uni(1, 4) * 2};
    Layout a = (t % 2) ? make_layout(sh, LayoutRight{}) : make_layout(sh);
    Tile tile = make_tile(Layout(2, 1), Layout(g.uni(1, 2), g.uni(1, 2)));
    Layout ld;
    try {
      ld = logical_divide(a, tile);
    } catch (const Error&) {
      continue;
    }
    ++ok;
    Layout zd = zipped_divide(a, tile), td = tiled_divide(a, tile), fd = flat_divide(a, tile);
    REQUIRE(get<0>(zd) == composition(a, tile));
    REQUIRE(image_set(zd) == image_set(ld));
    REQUIRE(image_set(td) == image_set(ld));
    REQUIRE(image_set(fd) == image_set(ld));
    // ((t0,r0),(t1,r1)) vs ((t0,t1),(r0,r1)) vs ((t0,t1),r0,r1) vs (t0,t1,r0,r1)
    auto n = [&](const Layout& l, std::initializer_list<int> p) { return size(mode(l, p)); };
    for (int64_t t0 = 0; t0 < n(ld, {0, 0}); ++t0)
      for (int64_t r0 = 0; r0 < n(ld, {0, 1}); ++r0)
        for (int64_t t1 = 0; t1 < n(ld, {1, 0}); ++t1)
          for (int64_t r1 = 0; r1 < n(ld, {1, 1}); ++r1) {
            int64_t v = ld(IntTuple{IntTuple{t0, r0}, IntTuple{t1, r1}});
            REQUIRE(zd(IntTuple{IntTuple{t0, t1}, IntTuple{r0, r1}}) == v);
            REQUIRE(td(IntTuple{IntTuple{t0, t1}, r0, r1}) == v);
            REQUIRE(fd(IntTuple{t0, t1, r0, r1}) == v);
          }
  }
  CHECK(ok > 1000);
  // 1-D: logical_divide(A, B) == composition(A, (B, complement(B, size(A))))
  for (int t = 0; t < 2000; ++t) {
    Layout a = g.injective(false), b = g.injective();
    Layout ld;
    try {
      ld = logical_divide(a, b);
    } catch (const Error&) {
      continue;
    }
    REQUIRE(get<0>(ld) == composition(a, b));
    REQUIRE(image_set(ld) == image_set(composition(a, make_layout(b, complement(b, shape(coalesce(a)))))));
  }
}

TEST_CASE("property: products agree with their logical forms", "[algebra][property]") {
  Gen g;
  int ok = 0;
  for (int t = 0; t < 3000; ++t) {
    Layout a = g.injective(t % 2 == 0);
    Layout b = g.injective(false);
    Layout lp;
    try {
      lp = logical_product(a, b);  // may violate composition's divisibility conditions, as in CuTe
    } catch (const Error&) {
      continue;
    }
    ++ok;
    REQUIRE(get<0>(lp) == a);
    REQUIRE(size(get<1>(lp)) == size(b));
    INFO(to_string(a) << " x " << to_string(b) << " = " << to_string(lp));
    // For a compact block the copies never overlap. (With holes in the block, B may pick offsets of
    // the complement that straddle its modes; CuTe's product does not promise injectivity then.)
    auto im = image(lp);
    if (t % 2 == 1) REQUIRE(std::set<int64_t>(im.begin(), im.end()).size() == im.size());
    Layout bp, rp;
    try {
      bp = blocked_product(a, b);
      rp = raked_product(a, b);
    } catch (const Error&) {
      // zip((A),b) of a rank-1 tuple with an integer has mismatched ranks (CuTe fails to compile too).
      REQUIRE(rank(a) == 1);
      REQUIRE(rank(b) == 1);
      continue;
    }
    REQUIRE(size(bp) == size(lp));
    REQUIRE(image_set(bp) == image_set(lp));
    REQUIRE(image_set(rp) == image_set(lp));
    REQUIRE(rank(bp) == std::max(rank(a), rank(b)));
  }
  CHECK(ok > 1500);
  for (int t = 0; t < 1000; ++t) {
    Layout a = make_layout(IntTuple{g.uni(1, 3), g.uni(1, 3)});
    Tile tile = make_tile(Layout(g.uni(1, 3), 1), Layout(g.uni(1, 3), 1));
    Layout lp;
    try {
      lp = logical_product(a, tile);
    } catch (const Error&) {
      continue;
    }
    Layout zp = zipped_product(a, tile), tp = tiled_product(a, tile), fp = flat_product(a, tile);
    REQUIRE(image_set(zp) == image_set(lp));
    REQUIRE(image_set(tp) == image_set(lp));
    REQUIRE(image_set(fp) == image_set(lp));
    REQUIRE(rank(fp) == 4);
  }
}

TEST_CASE("property: tile_to_shape, max_common_vector, recast", "[algebra][property]") {
  Gen g;
  for (int t = 0; t < 1000; ++t) {
    Layout block = make_layout(IntTuple{g.uni(1, 4), g.uni(1, 4)}, LayoutRight{});
    IntTuple trg{size(block, 0) * g.uni(1, 3), size(block, 1) * g.uni(1, 3)};
    Layout r = tile_to_shape(block, trg);
    REQUIRE(product_each(r.shape()) == trg);
    for (int64_t i = 0; i < size(r); ++i) REQUIRE(r(i) < size(r));
    Layout a = g.injective(false);
    Layout b = make_layout_like(a);
    int64_t v = max_common_vector(a, b);
    Layout ml = max_common_layout(a, b);
    REQUIRE(size(ml) == v);
    for (int64_t i = 0; i < v; ++i) REQUIRE(a(ml(i)) == i);
    for (int64_t i = 0; i < v; ++i) REQUIRE(b(ml(i)) == i);
  }
  for (int t = 0; t < 1000; ++t) {
    // Recasting to a 4x wider type and back is the identity on compact layouts whose stride-1 mode
    // has a size that is a multiple of 8.
    Layout l = make_layout(IntTuple{g.uni(2, 4) * 4, g.uni(1, 4)});
    REQUIRE(recast_layout(recast_layout(l, 8, 32), 32, 8) == l);
    REQUIRE(size(recast_layout(l, 8, 32)) * 4 == size(l));
  }
}
