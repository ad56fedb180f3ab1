// Tile: access to its modes, and printing (nested tiles in parentheses, `_` as is).
#include <cutejit/layout/tile.hpp>

#include <cutejit/core/error.hpp>

#include <ostream>

namespace cutejit {

namespace {
std::string mode_string(const TileMode& m) {
  switch (m.kind()) {
    case TileMode::Kind::integer: return std::to_string(m.layout().shape().value());
    case TileMode::Kind::layout: return to_string(m.layout());
    case TileMode::Kind::keep: return "_";
    case TileMode::Kind::tile: return to_string(m.tile());
  }
  return "?";
}
}  // namespace

const Layout& TileMode::layout() const {
  if (kind_ != Kind::layout && kind_ != Kind::integer)
    throw Error("tile mode " + mode_string(*this) + " has no layout of its own (it is `_` or a nested tile)");
  return layout_;
}

const Tile& TileMode::tile() const {
  if (kind_ != Kind::tile) throw Error("tile mode " + mode_string(*this) + " is not a nested tile");
  return *nested_;
}

std::string to_string(const Tile& t) {
  std::string s = "(";
  for (int i = 0; i < t.rank(); ++i) {
    if (i) s += ',';
    s += mode_string(t[i]);
  }
  return s + ")";
}

std::ostream& operator<<(std::ostream& os, const Tile& t) { return os << to_string(t); }

}  // namespace cutejit
