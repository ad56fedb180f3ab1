// Divides, products, tile_to_shape and recasts (CuTe result forms).
#include <cutejit/layout/algebra.hpp>

#include <cutejit/core/error.hpp>

#include <cstdlib>
#include <numeric>

namespace cutejit {

namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }

/// An integer tile mode n means make_layout(n) in divides and products (n:1, or 1:0 for n == 1).
Layout tiler_layout(const TileMode& m) {
  return m.is_int() ? make_layout(m.layout().shape()) : m.layout();
}

void check_tile_rank(const char* op, const Layout& l, const Tile& t) {
  if (t.rank() > rank(l))
    fail(std::string(op) + "(" + to_string(l) + ", " + to_string(t) + "): the tiler has " + std::to_string(t.rank()) +
         " modes but the layout only " + std::to_string(rank(l)) + " (a by-mode tiler needs at most rank(layout) modes)");
}

/// One mode of a split produced by a by-mode divide/product: its (tile, rest) shape and stride.
struct Split {
  IntTuple in_shape, in_stride, out_shape, out_stride;
};

Split zip2_by(const IntTuple& s, const IntTuple& d, const Tile& guide, const Layout& whole, const std::string& op);

/// CuTe zip2_by for one guide mode: a nested tile recurses, anything else (a layout, an integer
/// or `_`) splits a rank-2 mode (A,a) into A and a.
Split zip2_by_mode(const IntTuple& s, const IntTuple& d, const TileMode& guide, const Layout& whole, const std::string& op) {
  if (guide.is_tile()) return zip2_by(s, d, guide.tile(), whole, op);
  if (s.is_leaf() || s.rank() != 2)
    fail(op + ": the mode " + to_string(Layout(s, d)) + " of the by-mode result " + to_string(whole) + " is not rank-2 (" +
         (guide.is_underscore() ? "a `_` tile mode keeps the layout's mode whole, and CuTe splits it into (tile, rest) "
                                  "only when it already has two modes"
                                : "expected (tile, rest)") +
         ")");
  return {s[0], d[0], s[1], d[1]};
}

/// CuTe zip2_by on a layout produced by a by-mode divide/product: ((A,a),(B,b),c) -> ((A,B),(a,b,c)).
Split zip2_by(const IntTuple& s, const IntTuple& d, const Tile& guide, const Layout& whole, const std::string& op) {
  if (s.is_leaf() || s.rank() < guide.rank())
    fail(op + ": the tiler " + to_string(guide) + " has more modes than " + to_string(Layout(s, d)) +
         " (in " + to_string(whole) + ")");
  std::vector<IntTuple> in_sh, in_st, out_sh, out_st;
  for (int i = 0; i < guide.rank(); ++i) {
    Split m = zip2_by_mode(s[i], d[i], guide[i], whole, op);
    in_sh.push_back(m.in_shape);
    in_st.push_back(m.in_stride);
    out_sh.push_back(m.out_shape);
    out_st.push_back(m.out_stride);
  }
  for (int i = guide.rank(); i < s.rank(); ++i) {
    out_sh.push_back(s[i]);
    out_st.push_back(d[i]);
  }
  return {IntTuple(std::move(in_sh)), IntTuple(std::move(in_st)), IntTuple(std::move(out_sh)),
          IntTuple(std::move(out_st))};
}

/// `op` names the call, e.g. "zipped_divide((8,6):(1,8), (2:1,_))"; `l` is its by-mode result.
Layout tile_unzip(const Layout& l, const Tile& t, const std::string& op) {
  Split z = zip2_by(l.shape(), l.stride(), t, l, op);
  return Layout(IntTuple{z.in_shape, z.out_shape}, IntTuple{z.in_stride, z.out_stride});
}

/// Slicing a mode with repeat<rank>(_): a rank>1 mode is unpacked, a rank-1 mode kept as is.
void unpack_into(std::vector<IntTuple>& sh, std::vector<IntTuple>& st, const IntTuple& s, const IntTuple& d) {
  if (s.rank() == 1) {
    sh.push_back(s);
    st.push_back(d);
    return;
  }
  for (int i = 0; i < s.rank(); ++i) {
    sh.push_back(s[i]);
    st.push_back(d[i]);
  }
}

Layout tiled_from_zipped(const Layout& z) {
  std::vector<IntTuple> sh{z.shape()[0]}, st{z.stride()[0]};
  unpack_into(sh, st, z.shape()[1], z.stride()[1]);
  return Layout(IntTuple(std::move(sh)), IntTuple(std::move(st)));
}

Layout flat_from_zipped(const Layout& z) {
  std::vector<IntTuple> sh, st;
  unpack_into(sh, st, z.shape()[0], z.stride()[0]);
  unpack_into(sh, st, z.shape()[1], z.stride()[1]);
  return Layout(IntTuple(std::move(sh)), IntTuple(std::move(st)));
}

int64_t sgn(int64_t x) { return (x > 0) - (x < 0); }

}  // namespace

// ---- Divides ----

Layout logical_divide(const Layout& l, const Layout& tiler) {
  return composition(l, make_layout(tiler, complement(tiler, shape(coalesce(l)))));
}

Layout logical_divide(const Layout& l, const Tile& tiler) {
  check_tile_rank("logical_divide", l, tiler);
  std::vector<Layout> modes;
  for (int i = 0; i < rank(l); ++i) {
    Layout m = mode(l, i);
    if (i >= tiler.rank() || tiler[i].is_underscore()) modes.push_back(m);  // `_`: the mode is kept whole
    else if (tiler[i].is_tile()) modes.push_back(logical_divide(m, tiler[i].tile()));
    else modes.push_back(logical_divide(m, tiler_layout(tiler[i])));
  }
  return make_layout_from_modes(modes);
}

Layout zipped_divide(const Layout& l, const Layout& tiler) { return logical_divide(l, tiler); }
Layout zipped_divide(const Layout& l, const Tile& tiler) {
  return tile_unzip(logical_divide(l, tiler), tiler, "zipped_divide(" + to_string(l) + ", " + to_string(tiler) + ")");
}
Layout tiled_divide(const Layout& l, const Layout& tiler) { return tiled_from_zipped(zipped_divide(l, tiler)); }
Layout tiled_divide(const Layout& l, const Tile& tiler) { return tiled_from_zipped(zipped_divide(l, tiler)); }
Layout flat_divide(const Layout& l, const Layout& tiler) { return flat_from_zipped(zipped_divide(l, tiler)); }
Layout flat_divide(const Layout& l, const Tile& tiler) { return flat_from_zipped(zipped_divide(l, tiler)); }

IntTuple ceil_div(const IntTuple& target, const Layout& tiler) { return shape(complement(tiler, target)); }

// ---- Products ----

Layout logical_product(const Layout& block, const Layout& tiler) {
  return make_layout(block, composition(complement(block, IntTuple(size(block) * cosize(tiler))), tiler));
}

Layout logical_product(const Layout& block, const Tile& tiler) {
  check_tile_rank("logical_product", block, tiler);
  std::vector<Layout> modes;
  for (int i = 0; i < rank(block); ++i) {
    Layout m = mode(block, i);
    if (i >= tiler.rank() || tiler[i].is_underscore()) modes.push_back(m);  // `_`: the mode is kept whole
    else if (tiler[i].is_tile()) modes.push_back(logical_product(m, tiler[i].tile()));
    else modes.push_back(logical_product(m, tiler_layout(tiler[i])));
  }
  return make_layout_from_modes(modes);
}

Layout zipped_product(const Layout& block, const Layout& tiler) { return logical_product(block, tiler); }
Layout zipped_product(const Layout& block, const Tile& tiler) {
  return tile_unzip(logical_product(block, tiler), tiler,
                    "zipped_product(" + to_string(block) + ", " + to_string(tiler) + ")");
}
Layout tiled_product(const Layout& b, const Layout& t) { return tiled_from_zipped(zipped_product(b, t)); }
Layout tiled_product(const Layout& b, const Tile& t) { return tiled_from_zipped(zipped_product(b, t)); }
Layout flat_product(const Layout& b, const Layout& t) { return flat_from_zipped(zipped_product(b, t)); }
Layout flat_product(const Layout& b, const Tile& t) { return flat_from_zipped(zipped_product(b, t)); }

namespace {
Layout rank_sensitive_product(const char* op, const Layout& block, const Layout& tiler, bool raked) {
  int R = std::max(rank(block), rank(tiler));
  Layout result = logical_product(append(block, R), append(tiler, R));
  Layout a = mode(result, raked ? 1 : 0), b = mode(result, raked ? 0 : 1);
  if (a.shape().is_tuple() && (b.shape().is_leaf() || rank(a) != rank(b)))
    fail(std::string(op) + "(" + to_string(block) + ", " + to_string(tiler) + "): cannot zip the block modes " +
         to_string(mode(result, 0)) + " with the tile modes " + to_string(mode(result, 1)) +
         ": their ranks differ (give block and tiler the same top-level rank)");
  return zip(a, b);
}
}  // namespace

Layout blocked_product(const Layout& block, const Layout& tiler) {
  return rank_sensitive_product("blocked_product", block, tiler, false);
}

Layout raked_product(const Layout& block, const Layout& tiler) {
  return rank_sensitive_product("raked_product", block, tiler, true);
}

namespace {
template <class MakeOrdered>
Layout tile_to_shape_impl(const Layout& block, const IntTuple& trg_shape, MakeOrdered&& make_ordered) {
  int R = rank(trg_shape);
  if (rank(block) > R)
    fail("tile_to_shape(" + to_string(block) + ", " + to_string(trg_shape) + "): the block has rank " +
         std::to_string(rank(block)) + " but the target shape only " + std::to_string(R) +
         " (rank(block) <= rank(target) is required)");
  Layout padded = append(block, R);
  IntTuple block_shape = product_each(padded.shape());
  IntTuple target_shape = product_each(trg_shape);
  if (!evenly_divides(target_shape, block_shape))
    fail("tile_to_shape(" + to_string(block) + ", " + to_string(trg_shape) + "): the block shape " +
         to_string(block_shape) + " does not divide the target shape " + to_string(target_shape) +
         " mode by mode");
  IntTuple product_shape = ceil_div(target_shape, block_shape);
  return blocked_product(padded, make_ordered(product_shape));
}
}  // namespace

Layout tile_to_shape(const Layout& block, const IntTuple& trg_shape) {
  return tile_to_shape_impl(block, trg_shape, [](const IntTuple& s) { return make_layout(s); });
}
Layout tile_to_shape(const Layout& block, const IntTuple& trg_shape, const IntTuple& order) {
  return tile_to_shape_impl(block, trg_shape, [&](const IntTuple& s) { return make_ordered_layout(s, order); });
}
Layout tile_to_shape(const Layout& block, const IntTuple& trg_shape, LayoutRight) {
  return tile_to_shape_impl(block, trg_shape, [](const IntTuple& s) { return make_layout(s, LayoutRight{}); });
}

// ---- Recasts ----

namespace {
Layout upcast_impl(const IntTuple& s, const IntTuple& d, int64_t n, const Layout& whole) {
  if (s.is_tuple()) {
    std::vector<Layout> modes;
    for (int i = 0; i < s.rank(); ++i) modes.push_back(upcast_impl(s[i], d[i], n, whole));
    return make_layout_from_modes(modes);
  }
  if (d.leaf().is_dynamic()) {
    // a dynamic stride must provably be a multiple of n: then it shrinks by n and the shape stays
    if (!divides(n, d.leaf()))
      throw Error("upcast<" + std::to_string(n) + ">(" + to_string(whole) + "): cannot prove that the dynamic stride is "
                  "a multiple of " + std::to_string(n) + "; state it with assume_divisible", d.leaf().where());
    return Layout(s, d.leaf() / n);
  }
  int64_t st = d.value();
  if (st == 0) return Layout(s, d);
  if (!(st % n == 0 || n % st == 0))
    fail("upcast<" + std::to_string(n) + ">(" + to_string(whole) + "): divisibility condition failed: the stride " +
         std::to_string(st) + " and " + std::to_string(n) + " must divide one another");
  return Layout(ceil_div(s.leaf(), Integer(ceil_div(n, std::llabs(st)))), sgn(st) * ceil_div(std::llabs(st), n));
}

Layout downcast_impl(const IntTuple& s, const IntTuple& d, int64_t n) {
  if (s.is_tuple()) {
    std::vector<Layout> modes;
    for (int i = 0; i < s.rank(); ++i) modes.push_back(downcast_impl(s[i], d[i], n));
    return make_layout_from_modes(modes);
  }
  const Integer& st = d.leaf();
  if (st.is_static() && (st.value() == 1 || st.value() == -1)) return Layout(s.leaf() * n, d);
  return Layout(s, st * n);
}

bool has_stride1(const IntTuple& d) {
  if (d.is_leaf()) return d.leaf().is_static() && d.value() == 1;
  for (const auto& e : d.elems())
    if (has_stride1(e)) return true;
  return false;
}
}  // namespace

Layout upcast(const Layout& l, int64_t n) {
  if (n <= 0) fail("upcast: the factor must be positive (got " + std::to_string(n) + ")");
  return upcast_impl(l.shape(), l.stride(), n, l);
}

Layout downcast(const Layout& l, int64_t n) {
  if (n <= 0) fail("downcast: the factor must be positive (got " + std::to_string(n) + ")");
  if (!has_stride1(l.stride()))
    fail("downcast<" + std::to_string(n) + ">(" + to_string(l) +
         "): downcast requires adjacent elements (a mode of stride 1)");
  return downcast_impl(l.shape(), l.stride(), n);
}

Layout recast_layout(const Layout& l, int64_t old_bits, int64_t new_bits) {
  if (old_bits <= 0 || new_bits <= 0)
    fail("recast_layout: element widths must be positive (got " + std::to_string(old_bits) + " and " +
         std::to_string(new_bits) + " bits)");
  int64_t g = std::gcd(old_bits, new_bits);
  int64_t num = new_bits / g, den = old_bits / g;
  if (num == 1 && den == 1) return l;
  if (num == 1) return downcast(l, den);
  if (den == 1) return upcast(l, num);
  return downcast(upcast(l, num), den);
}

}  // namespace cutejit
