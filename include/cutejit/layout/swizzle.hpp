/** \file
 * Swizzle<B,M,S> and ComposedLayout (swizzle o offset o layout), as CuTe's
 * composition(Swizzle, Layout) produces.
 */
#pragma once

#include <cutejit/layout/layout.hpp>

#include <iosfwd>
#include <string>
#include <type_traits>

namespace cutejit {

/// CuTe Swizzle<BBits, MBase, SShift>: offset ^ ((offset & yyy_mask) >> SShift)
/// (a negative SShift shifts left). Requires B >= 0, M >= 0, |S| >= B.
class Swizzle {
 public:
  Swizzle(int bits, int base, int shift);
  int bits() const { return bits_; }
  int base() const { return base_; }
  int shift() const { return shift_; }
  int64_t yyy_mask() const;
  int64_t zzz_mask() const;
  int64_t operator()(int64_t offset) const;
  friend bool operator==(const Swizzle& a, const Swizzle& b) {
    return a.bits_ == b.bits_ && a.base_ == b.base_ && a.shift_ == b.shift_;
  }
  friend bool operator!=(const Swizzle& a, const Swizzle& b) { return !(a == b); }

 private:
  int bits_, base_, shift_;
};

/// f(c) = swizzle(offset + inner(c)).
class ComposedLayout {
 public:
  ComposedLayout(Swizzle outer, int64_t offset, Layout inner)
      : outer_(outer), offset_(offset), inner_(std::move(inner)) {}
  const Swizzle& layout_a() const { return outer_; }
  int64_t offset() const { return offset_; }
  const Layout& layout_b() const { return inner_; }
  const IntTuple& shape() const { return inner_.shape(); }
  int64_t operator()(int64_t idx) const { return outer_(offset_ + inner_(idx)); }
  int64_t operator()(const IntTuple& c) const { return outer_(offset_ + inner_(c)); }
  template <class... Ts, std::enable_if_t<(sizeof...(Ts) >= 2), int> = 0>
  int64_t operator()(const Ts&... cs) const { return (*this)(IntTuple{IntTuple(cs)...}); }
  friend bool operator==(const ComposedLayout& a, const ComposedLayout& b) {
    return a.outer_ == b.outer_ && a.offset_ == b.offset_ && a.inner_ == b.inner_;
  }

 private:
  Swizzle outer_;
  int64_t offset_;
  Layout inner_;
};

std::string to_string(const Swizzle& s);        ///< "Sw<3,4,3>"
std::string to_string(const ComposedLayout& c); ///< "Sw<3,4,3> o 0 o (8,64):(64,1)"
std::ostream& operator<<(std::ostream& os, const Swizzle& s);
std::ostream& operator<<(std::ostream& os, const ComposedLayout& c);
/// Parses "Sw<3,4,3> o 0 o (8,64):(64,1)" (or "Sw<3,4,3> o (8,64):(64,1)").
ComposedLayout parse_composed_layout(std::string_view text);

/// Build a swizzle from its yyy and zzz bit masks (CuTe make_swizzle<Y,Z>).
Swizzle make_swizzle(int64_t yyy_mask, int64_t zzz_mask);
ComposedLayout make_composed_layout(const Swizzle& outer, int64_t offset, const Layout& inner);
ComposedLayout composition(const Swizzle& sw, const Layout& l);
ComposedLayout composition(const Swizzle& sw, int64_t offset, const Layout& l);
ComposedLayout composition(const ComposedLayout& c, const Layout& tiler);
ComposedLayout composition(const ComposedLayout& c, const Tile& tiler);
/// Two swizzles of the same shift merged into one (CuTe composition(Swizzle, Swizzle)).
Swizzle composition(const Swizzle& a, const Swizzle& b);

int64_t size(const ComposedLayout& c);
int64_t cosize(const ComposedLayout& c);
int rank(const ComposedLayout& c);
int depth(const ComposedLayout& c);

ComposedLayout logical_divide(const ComposedLayout& c, const Layout& tiler);
ComposedLayout logical_divide(const ComposedLayout& c, const Tile& tiler);
ComposedLayout zipped_divide(const ComposedLayout& c, const Layout& tiler);
ComposedLayout zipped_divide(const ComposedLayout& c, const Tile& tiler);
ComposedLayout tiled_divide(const ComposedLayout& c, const Layout& tiler);
ComposedLayout tiled_divide(const ComposedLayout& c, const Tile& tiler);
ComposedLayout flat_divide(const ComposedLayout& c, const Layout& tiler);
ComposedLayout flat_divide(const ComposedLayout& c, const Tile& tiler);
ComposedLayout logical_product(const ComposedLayout& c, const Layout& tiler);
ComposedLayout blocked_product(const ComposedLayout& c, const Layout& tiler);
ComposedLayout raked_product(const ComposedLayout& c, const Layout& tiler);
ComposedLayout tile_to_shape(const ComposedLayout& c, const IntTuple& trg_shape);
ComposedLayout tile_to_shape(const ComposedLayout& c, const IntTuple& trg_shape, const IntTuple& order);
ComposedLayout coalesce(const ComposedLayout& c);

}  // namespace cutejit
