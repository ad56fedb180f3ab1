// Swizzle<B,M,S> and ComposedLayout (swizzle o offset o layout).
#include <cutejit/layout/swizzle.hpp>

#include <cutejit/core/error.hpp>
#include <cutejit/layout/algebra.hpp>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <ostream>

namespace cutejit {

namespace {
[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }
}  // namespace

Swizzle::Swizzle(int bits, int base, int shift) : bits_(bits), base_(base), shift_(shift) {
  std::string me = "Sw<" + std::to_string(bits) + "," + std::to_string(base) + "," + std::to_string(shift) + ">";
  if (bits < 0) fail("Swizzle " + me + ": BBits must be >= 0");
  if (base < 0) fail("Swizzle " + me + ": MBase must be >= 0");
  if (std::abs(shift) < bits) fail("Swizzle " + me + ": |SShift| must be >= BBits (" + std::to_string(bits) + ")");
  if (bits + base + std::abs(shift) > 62) fail("Swizzle " + me + ": the masks do not fit in 62 bits");
}

int64_t Swizzle::yyy_mask() const { return ((int64_t{1} << bits_) - 1) << (base_ + std::max(0, shift_)); }
int64_t Swizzle::zzz_mask() const { return ((int64_t{1} << bits_) - 1) << (base_ - std::min(0, shift_)); }

int64_t Swizzle::operator()(int64_t offset) const {
  int64_t y = offset & yyy_mask();
  int64_t moved = shift_ >= 0 ? (y >> shift_) : (y << -shift_);
  return offset ^ moved;
}

std::string to_string(const Swizzle& s) {
  return "Sw<" + std::to_string(s.bits()) + "," + std::to_string(s.base()) + "," + std::to_string(s.shift()) + ">";
}
std::string to_string(const ComposedLayout& c) {
  return to_string(c.layout_a()) + " o " + std::to_string(c.offset()) + " o " + to_string(c.layout_b());
}
std::ostream& operator<<(std::ostream& os, const Swizzle& s) { return os << to_string(s); }
std::ostream& operator<<(std::ostream& os, const ComposedLayout& c) { return os << to_string(c); }

Swizzle make_swizzle(int64_t y, int64_t z) {
  auto uy = static_cast<uint64_t>(y), uz = static_cast<uint64_t>(z);
  int by = std::popcount(uy), bz = std::popcount(uz);
  if (by != bz)
    fail("make_swizzle: the masks " + std::to_string(y) + " and " + std::to_string(z) +
         " have different numbers of bits (" + std::to_string(by) + " and " + std::to_string(bz) + ")");
  if (by == 0) return Swizzle(0, 0, 0);
  int ty = std::countr_zero(uy), tz = std::countr_zero(uz);
  Swizzle s(by, std::min(ty, tz), ty - tz);
  if ((s.yyy_mask() | s.zzz_mask()) != (y | z))
    fail("make_swizzle: the masks " + std::to_string(y) + " and " + std::to_string(z) +
         " are not contiguous runs of bits (no Swizzle<B,M,S> has them)");
  return s;
}

Swizzle composition(const Swizzle& a, const Swizzle& b) {
  if (a.shift() != b.shift())
    fail("composition(" + to_string(a) + ", " + to_string(b) + "): can only merge swizzles of the same shift");
  return make_swizzle(a.yyy_mask() ^ b.yyy_mask(), a.zzz_mask() ^ b.zzz_mask());
}

ComposedLayout make_composed_layout(const Swizzle& outer, int64_t offset, const Layout& inner) {
  return ComposedLayout(outer, offset, inner);
}
ComposedLayout composition(const Swizzle& sw, const Layout& l) { return ComposedLayout(sw, 0, l); }
ComposedLayout composition(const Swizzle& sw, int64_t offset, const Layout& l) { return ComposedLayout(sw, offset, l); }

namespace {
template <class F>
ComposedLayout inner_map(const ComposedLayout& c, F&& f) {
  return ComposedLayout(c.layout_a(), c.offset(), f(c.layout_b()));
}
}  // namespace

ComposedLayout composition(const ComposedLayout& c, const Layout& t) {
  return inner_map(c, [&](const Layout& b) { return composition(b, t); });
}
ComposedLayout composition(const ComposedLayout& c, const Tile& t) {
  return inner_map(c, [&](const Layout& b) { return composition(b, t); });
}

int64_t size(const ComposedLayout& c) { return size(c.layout_b()); }
int64_t cosize(const ComposedLayout& c) { return cosize(c.layout_b()); }
int rank(const ComposedLayout& c) { return rank(c.layout_b()); }
int depth(const ComposedLayout& c) { return depth(c.layout_b()); }

#define CUTEJIT_COMPOSED_FORWARD(NAME, TILER)                                       \
  ComposedLayout NAME(const ComposedLayout& c, const TILER& t) {                   \
    return inner_map(c, [&](const Layout& b) { return NAME(b, t); });              \
  }
CUTEJIT_COMPOSED_FORWARD(logical_divide, Layout)
CUTEJIT_COMPOSED_FORWARD(logical_divide, Tile)
CUTEJIT_COMPOSED_FORWARD(zipped_divide, Layout)
CUTEJIT_COMPOSED_FORWARD(zipped_divide, Tile)
CUTEJIT_COMPOSED_FORWARD(tiled_divide, Layout)
CUTEJIT_COMPOSED_FORWARD(tiled_divide, Tile)
CUTEJIT_COMPOSED_FORWARD(flat_divide, Layout)
CUTEJIT_COMPOSED_FORWARD(flat_divide, Tile)
CUTEJIT_COMPOSED_FORWARD(logical_product, Layout)
CUTEJIT_COMPOSED_FORWARD(blocked_product, Layout)
CUTEJIT_COMPOSED_FORWARD(raked_product, Layout)
CUTEJIT_COMPOSED_FORWARD(tile_to_shape, IntTuple)
#undef CUTEJIT_COMPOSED_FORWARD

ComposedLayout tile_to_shape(const ComposedLayout& c, const IntTuple& trg, const IntTuple& order) {
  return inner_map(c, [&](const Layout& b) { return tile_to_shape(b, trg, order); });
}
ComposedLayout coalesce(const ComposedLayout& c) {
  return inner_map(c, [](const Layout& b) { return coalesce(b); });
}

}  // namespace cutejit
