/** \file
 * Tile: a by-mode tiler (CuTe's Tile<...>), built with make_tile(...). Mode i of the tiler
 * applies to mode i of the layout; each mode is
 *   - a Layout,
 *   - an integer n (n:1 in composition, make_layout(n) in divides and products),
 *   - `_` (keep that mode of the layout whole), or
 *   - a nested Tile (applied by-mode to the sub-modes of that mode).
 * `make_tile(make_tile(2, 3), _, Layout(4, 2))` prints `((2,3),_,4:2)`.
 */
#pragma once

#include <cutejit/layout/layout.hpp>

#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace cutejit {

class Tile;

/// One mode of a Tile.
class TileMode {
 public:
  enum class Kind { layout, integer, keep, tile };

  TileMode(const Layout& l) : kind_(Kind::layout), layout_(l) {}  // NOLINT (implicit on purpose)
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  TileMode(T n) : kind_(Kind::integer), layout_(static_cast<int64_t>(n), 1) {}  // NOLINT
  TileMode(Underscore) : kind_(Kind::keep) {}  // NOLINT
  TileMode(const Tile& nested);  // NOLINT

  Kind kind() const { return kind_; }
  bool is_int() const { return kind_ == Kind::integer; }
  bool is_underscore() const { return kind_ == Kind::keep; }
  bool is_tile() const { return kind_ == Kind::tile; }
  /// The layout of a Layout or integer mode (n:1 for an integer); throws cutejit::Error for
  /// `_` and nested modes, which have none.
  const Layout& layout() const;
  /// The nested tiler of a nested mode; throws cutejit::Error otherwise.
  const Tile& tile() const;

 private:
  Kind kind_;
  Layout layout_;
  std::shared_ptr<const Tile> nested_;  // shared: a Tile is an immutable value
};

/// A by-mode tiler: mode i of the tiler applies to mode i of the layout.
class Tile {
 public:
  Tile() = default;
  Tile(std::initializer_list<TileMode> modes) : modes_(modes) {}
  explicit Tile(std::vector<TileMode> modes) : modes_(std::move(modes)) {}
  int rank() const { return static_cast<int>(modes_.size()); }
  const TileMode& operator[](int i) const { return modes_.at(static_cast<size_t>(i)); }
  const std::vector<TileMode>& modes() const { return modes_; }

 private:
  std::vector<TileMode> modes_;
};

inline TileMode::TileMode(const Tile& nested) : kind_(Kind::tile), nested_(std::make_shared<const Tile>(nested)) {}

template <class... Ts>
Tile make_tile(const Ts&... ts) { return Tile{TileMode(ts)...}; }

std::string to_string(const Tile& t);
std::ostream& operator<<(std::ostream& os, const Tile& t);

}  // namespace cutejit
