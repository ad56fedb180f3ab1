// IntTuple: structure, arithmetic, compact strides and coordinate maps (CuTe semantics).
#include <cutejit/layout/int_tuple.hpp>

#include <cutejit/core/error.hpp>

#include <algorithm>
#include <ostream>

namespace cutejit {

namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }

std::vector<IntTuple> elems_of(const IntTuple& t) {
  return t.is_leaf() ? std::vector<IntTuple>{t} : t.elems();
}

}  // namespace

int64_t IntTuple::value() const { return leaf().value(); }

const Integer& IntTuple::leaf() const {
  if (!leaf_) fail("IntTuple: expected an integer, got the tuple " + to_string(*this));
  if (underscore_) fail("IntTuple: expected an integer, got the wildcard _ (only slice accepts _ in a coordinate)");
  return value_;
}

const IntTuple& IntTuple::operator[](int i) const {
  if (leaf_) {
    if (i != 0) fail("IntTuple: index " + std::to_string(i) + " out of range for the integer " + to_string(*this) + " (rank 1, valid index: 0)");
    return *this;
  }
  if (i < 0 || i >= static_cast<int>(elems_.size()))
    fail("IntTuple: index " + std::to_string(i) + " out of range for " + to_string(*this) + " (rank " +
         std::to_string(elems_.size()) + ")");
  return elems_[static_cast<size_t>(i)];
}

bool operator==(const IntTuple& a, const IntTuple& b) {
  if (a.leaf_ != b.leaf_) return false;
  if (a.leaf_) return a.underscore_ == b.underscore_ && same(a.value_, b.value_);
  return a.elems_ == b.elems_;
}

// ---- Printing ----

namespace {
void print_to(std::string& out, const IntTuple& t) {
  if (t.is_leaf()) {
    out += t.is_underscore() ? "_" : to_string(t.leaf());
    return;
  }
  out += '(';
  bool first = true;
  for (const auto& e : t.elems()) {
    if (!first) out += ',';
    first = false;
    print_to(out, e);
  }
  out += ')';
}
}  // namespace

std::string to_string(const IntTuple& t) {
  std::string s;
  print_to(s, t);
  return s;
}

std::ostream& operator<<(std::ostream& os, const IntTuple& t) { return os << to_string(t); }

// ---- Structure ----

bool is_tuple(const IntTuple& t) { return t.is_tuple(); }

bool is_static(const IntTuple& t) {
  if (t.is_leaf()) return t.is_underscore() || t.leaf().is_static();
  for (const auto& e : t.elems())
    if (!is_static(e)) return false;
  return true;
}

bool has_underscore(const IntTuple& t) {
  if (t.is_leaf()) return t.is_underscore();
  for (const auto& e : t.elems())
    if (has_underscore(e)) return true;
  return false;
}
int rank(const IntTuple& t) { return t.rank(); }

int depth(const IntTuple& t) {
  if (t.is_leaf()) return 0;
  int d = 0;
  for (const auto& e : t.elems()) d = std::max(d, depth(e));
  return d + 1;
}

Integer size(const IntTuple& t) {
  if (t.is_leaf()) return t.leaf();
  Integer p = 1;
  for (const auto& e : t.elems()) p = p * size(e);
  return p;
}
Integer product(const IntTuple& t) { return size(t); }

Integer sum(const IntTuple& t) {
  if (t.is_leaf()) return t.leaf();
  Integer s = 0;
  for (const auto& e : t.elems()) s = s + sum(e);
  return s;
}

namespace {
void flatten_into(std::vector<IntTuple>& out, const IntTuple& t) {
  if (t.is_leaf()) {
    out.push_back(t);
    return;
  }
  for (const auto& e : t.elems()) flatten_into(out, e);
}
}  // namespace

IntTuple flatten_to_tuple(const IntTuple& t) {
  std::vector<IntTuple> out;
  flatten_into(out, t);
  return IntTuple(std::move(out));
}

IntTuple flatten(const IntTuple& t) { return t.is_leaf() ? t : flatten_to_tuple(t); }

IntTuple wrap(const IntTuple& t) { return t.is_leaf() ? IntTuple(std::vector<IntTuple>{t}) : t; }

IntTuple unwrap(const IntTuple& t) {
  if (t.is_tuple() && t.rank() == 1) return unwrap(t[0]);
  return t;
}

IntTuple product_each(const IntTuple& t) {
  std::vector<IntTuple> out;
  for (const auto& e : elems_of(t)) out.emplace_back(size(e));
  return IntTuple(std::move(out));
}

IntTuple repeat_like(const IntTuple& t, int64_t x) {
  if (t.is_leaf()) return x;
  std::vector<IntTuple> out;
  for (const auto& e : t.elems()) out.push_back(repeat_like(e, x));
  return IntTuple(std::move(out));
}

IntTuple append(const IntTuple& t, const IntTuple& x) {
  auto v = elems_of(t);
  v.push_back(x);
  return IntTuple(std::move(v));
}

IntTuple prepend(const IntTuple& t, const IntTuple& x) {
  auto v = elems_of(t);
  v.insert(v.begin(), x);
  return IntTuple(std::move(v));
}

IntTuple take(const IntTuple& t, int begin, int end) {
  if (begin < 0 || end > t.rank() || begin > end)
    fail("take: range [" + std::to_string(begin) + "," + std::to_string(end) + ") is out of bounds for " +
         to_string(t) + " (rank " + std::to_string(t.rank()) + ")");
  std::vector<IntTuple> out;
  for (int i = begin; i < end; ++i) out.push_back(t[i]);
  return IntTuple(std::move(out));
}

IntTuple select(const IntTuple& t, const std::vector<int>& modes) {
  std::vector<IntTuple> out;
  for (int i : modes) out.push_back(t[i]);
  return IntTuple(std::move(out));
}

namespace {
IntTuple unflatten_impl(const std::vector<IntTuple>& flat, size_t& pos, const IntTuple& profile) {
  if (profile.is_leaf()) {
    if (pos >= flat.size()) fail("unflatten: too few elements for the profile");
    return flat[pos++];
  }
  std::vector<IntTuple> out;
  for (const auto& p : profile.elems()) out.push_back(unflatten_impl(flat, pos, p));
  return IntTuple(std::move(out));
}
}  // namespace

IntTuple unflatten(const IntTuple& flat, const IntTuple& profile) {
  if (flat.is_leaf()) {
    if (profile.is_leaf()) return flat;
  }
  auto v = elems_of(flat);
  size_t pos = 0;
  IntTuple r = unflatten_impl(v, pos, profile);
  if (pos != v.size())
    fail("unflatten: " + to_string(flat) + " has " + std::to_string(v.size()) + " elements but the profile " +
         to_string(profile) + " has " + std::to_string(pos) + " leaves");
  return r;
}

bool congruent(const IntTuple& a, const IntTuple& b) {
  if (a.is_leaf() || b.is_leaf()) return a.is_leaf() && b.is_leaf();
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i)
    if (!congruent(a[i], b[i])) return false;
  return true;
}

bool weakly_congruent(const IntTuple& a, const IntTuple& b) {
  if (a.is_leaf()) return true;
  if (b.is_leaf()) return false;
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i)
    if (!weakly_congruent(a[i], b[i])) return false;
  return true;
}

bool compatible(const IntTuple& a, const IntTuple& b) {
  // A dynamic size cannot be compared at trace time: only the structure is checked (as CuTe).
  if (a.is_leaf()) {
    Integer n = size(b);
    return a.leaf().is_dynamic() || n.is_dynamic() || a.value() == n.value();
  }
  if (b.is_leaf()) return false;
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i)
    if (!compatible(a[i], b[i])) return false;
  return true;
}

// ---- Arithmetic ----

int64_t ceil_div(int64_t a, int64_t b) {
  if (b == 0) fail("ceil_div: division by zero (" + std::to_string(a) + " / 0)");
  return (a + b - 1) / b;
}

IntTuple ceil_div(const IntTuple& a, const IntTuple& b) {
  if (a.is_tuple()) {
    if (b.is_tuple()) {
      if (b.rank() > a.rank())
        fail("ceil_div: " + to_string(b) + " has more modes than " + to_string(a));
      std::vector<IntTuple> out;
      for (int i = 0; i < a.rank(); ++i) out.push_back(ceil_div(a[i], i < b.rank() ? b[i] : IntTuple(1)));
      return IntTuple(std::move(out));
    }
    std::vector<IntTuple> out;
    IntTuple rest = b;
    for (const auto& ai : a.elems()) {
      out.push_back(ceil_div(ai, rest));
      rest = ceil_div(rest, ai);
    }
    return IntTuple(std::move(out));
  }
  if (b.is_tuple()) return ceil_div(a, IntTuple(product(b)));
  return ceil_div(a.leaf(), b.leaf());
}

namespace {
/// CuTe's shape_div of two integers when one is dynamic: a/b when b divides a, and 1 when a
/// divides b. Which case holds must be provable; otherwise we refuse rather than guess.
Integer shape_div_dynamic(const Integer& a, const Integer& b) {
  if (divides(b, a)) return a / b;
  if (divides(a, b)) return 1;
  throw Error("shape_div: cannot prove that " + to_string(a) + " and " + to_string(b) +
                  " divide one another (one of them is dynamic); state it with assume_divisible(x, d) on the "
                  "dynamic value, or use static sizes",
              a.is_dynamic() ? a.where() : b.where());
}
}  // namespace

IntTuple shape_div(const IntTuple& a, const IntTuple& b) {
  if (a.is_tuple()) {
    if (b.is_tuple()) {
      if (a.rank() != b.rank()) fail("shape_div: mismatched ranks " + to_string(a) + " / " + to_string(b));
      std::vector<IntTuple> out;
      for (int i = 0; i < a.rank(); ++i) out.push_back(shape_div(a[i], b[i]));
      return IntTuple(std::move(out));
    }
    std::vector<IntTuple> out;
    IntTuple rest = b;
    for (const auto& ai : a.elems()) {
      out.push_back(shape_div(ai, rest));
      rest = shape_div(rest, ai);
    }
    return IntTuple(std::move(out));
  }
  if (b.is_tuple()) return shape_div(a, IntTuple(product(b)));
  if (a.leaf().is_dynamic() || b.leaf().is_dynamic()) return shape_div_dynamic(a.leaf(), b.leaf());
  int64_t x = a.value(), y = b.value();
  if (y == 0 || x == 0 || !((x % y) == 0 || (y % x) == 0))
    fail("shape_div: divisibility condition failed: neither " + std::to_string(x) + " nor " + std::to_string(y) +
         " divides the other");
  return ceil_div(x, y);
}

IntTuple elem_scale(const IntTuple& a, const IntTuple& b) {
  if (a.is_leaf()) return a.leaf() * size(b);
  std::vector<IntTuple> out;
  for (int i = 0; i < a.rank(); ++i) out.push_back(elem_scale(a[i], b[i]));
  return IntTuple(std::move(out));
}

Integer inner_product(const IntTuple& a, const IntTuple& b) {
  if (a.is_leaf() && b.is_leaf()) return a.leaf() * b.leaf();
  if (a.is_leaf() || b.is_leaf() || a.rank() != b.rank())
    fail("inner_product: " + to_string(a) + " and " + to_string(b) + " are not congruent");
  Integer s = 0;
  for (int i = 0; i < a.rank(); ++i) s = s + inner_product(a[i], b[i]);
  return s;
}

IntTuple inner_product_tuple(const IntTuple& a, const IntTuple& b) { return inner_product(a, b); }

bool evenly_divides(const IntTuple& a, const IntTuple& b) {
  if (b.is_tuple()) {
    if (b.rank() > a.rank()) return false;
    for (int i = 0; i < b.rank(); ++i)
      if (!evenly_divides(a[i], b[i])) return false;
    return true;
  }
  // A dynamic extent divides evenly only when that is provable (e.g. from assume_divisible).
  Integer sa = size(a), sb = size(b);
  if (sa.is_static() && sb.is_static()) return sa.value() == sb.value() * size(ceil_div(a, b)).value();
  return divides(sb, sa);
}

// ---- Compact strides ----

namespace {
// Returns the stride tuple and updates `current` (CuTe detail::compact).
IntTuple compact_left(const IntTuple& shape, Integer& current) {
  if (shape.is_leaf()) {
    const Integer& s = shape.leaf();
    if (s.is_static() && s.value() == 1) return 0;
    Integer d = current;
    current = current * s;
    return d;
  }
  std::vector<IntTuple> out;
  for (const auto& s : shape.elems()) out.push_back(compact_left(s, current));
  return IntTuple(std::move(out));
}
IntTuple compact_right(const IntTuple& shape, Integer& current) {
  if (shape.is_leaf()) {
    const Integer& s = shape.leaf();
    if (s.is_static() && s.value() == 1) return 0;
    Integer d = current;
    current = current * s;
    return d;
  }
  std::vector<IntTuple> out(shape.elems().size());
  for (size_t i = out.size(); i-- > 0;) out[i] = compact_right(shape.elems()[i], current);
  return IntTuple(std::move(out));
}
}  // namespace

IntTuple compact_col_major(const IntTuple& shape, const Integer& current) {
  Integer c = current;
  return compact_left(shape, c);
}
IntTuple compact_row_major(const IntTuple& shape, const Integer& current) {
  Integer c = current;
  return compact_right(shape, c);
}

namespace {
IntTuple product_like(const IntTuple& t, const IntTuple& guide) {
  if (guide.is_leaf()) return size(t);
  std::vector<IntTuple> out;
  for (int i = 0; i < guide.rank(); ++i) out.push_back(product_like(t[i], guide[i]));
  return IntTuple(std::move(out));
}
IntTuple compact_order_impl(const IntTuple& shape, const IntTuple& order, const IntTuple& ref_shape,
                            const IntTuple& ref_order) {
  if (order.is_tuple()) {
    if (shape.is_leaf() || shape.rank() != order.rank())
      fail("compact_order: the order " + to_string(order) + " is not congruent with the shape " + to_string(shape));
    std::vector<IntTuple> out;
    for (int i = 0; i < order.rank(); ++i) out.push_back(compact_order_impl(shape[i], order[i], ref_shape, ref_order));
    return IntTuple(std::move(out));
  }
  Integer start = 1;
  for (int i = 0; i < ref_shape.rank(); ++i)
    if (ref_order[i].value() < order.value()) start = start * ref_shape[i].leaf();
  return compact_col_major(shape, start);
}
}  // namespace

IntTuple compact_order(const IntTuple& shape, const IntTuple& order) {
  if (!weakly_congruent(order, shape))
    fail("compact_order: the order " + to_string(order) + " must have the profile of (a prefix of) the shape " +
         to_string(shape));
  IntTuple ref_shape = flatten_to_tuple(product_like(shape, order));
  IntTuple ref_order = flatten_to_tuple(order);
  return compact_order_impl(shape, order, ref_shape, ref_order);
}

// ---- Coordinates ----

Integer crd2idx(const IntTuple& coord, const IntTuple& shape, const IntTuple& stride) {
  if (coord.is_tuple()) {
    if (shape.is_leaf() || coord.rank() != shape.rank() || shape.rank() != stride.rank())
      fail("crd2idx: the coordinate " + to_string(coord) + " does not match the shape " + to_string(shape) +
           " (a coordinate is an integer or a tuple congruent with the shape)");
    Integer s = 0;
    for (int i = 0; i < coord.rank(); ++i) s = s + crd2idx(coord[i], shape[i], stride[i]);
    return s;
  }
  if (shape.is_tuple()) {
    if (stride.is_leaf() || shape.rank() != stride.rank())
      fail("crd2idx: shape " + to_string(shape) + " and stride " + to_string(stride) + " are not congruent");
    Integer c = coord.leaf(), s = 0;
    int r = shape.rank();
    for (int i = 0; i < r; ++i) {
      if (i == r - 1) {
        s = s + crd2idx(c, shape[i], stride[i]);
      } else {
        Integer p = size(shape[i]);
        s = s + crd2idx(c % p, shape[i], stride[i]);
        c = c / p;
      }
    }
    return s;
  }
  return coord.leaf() * stride.leaf();
}

Integer crd2idx(const IntTuple& coord, const IntTuple& shape) {
  return crd2idx(coord, shape, compact_col_major(shape));
}

namespace {
IntTuple idx2crd_1d(Integer idx, const IntTuple& shape) {
  if (shape.is_leaf()) return idx;
  std::vector<IntTuple> out;
  int r = shape.rank();
  for (int i = 0; i < r; ++i) {
    if (i == r - 1) {
      out.push_back(idx2crd_1d(idx, shape[i]));
    } else {
      Integer p = size(shape[i]);
      out.push_back(idx2crd_1d(idx % p, shape[i]));
      idx = idx / p;
    }
  }
  return IntTuple(std::move(out));
}
}  // namespace

IntTuple idx2crd(const IntTuple& coord, const IntTuple& shape) {
  if (coord.is_leaf()) return idx2crd_1d(coord.leaf(), shape);
  if (shape.is_leaf() || coord.rank() != shape.rank())
    fail("idx2crd: the coordinate " + to_string(coord) + " does not match the shape " + to_string(shape));
  std::vector<IntTuple> out;
  for (int i = 0; i < coord.rank(); ++i) out.push_back(idx2crd(coord[i], shape[i]));
  return IntTuple(std::move(out));
}

IntTuple idx2crd(const Integer& idx, const IntTuple& shape, const IntTuple& stride) {
  if (shape.is_tuple()) {
    IntTuple d = stride.is_tuple() ? stride : compact_col_major(shape, stride.leaf());
    std::vector<IntTuple> out;
    for (int i = 0; i < shape.rank(); ++i) out.push_back(idx2crd(idx, shape[i], d[i]));
    return IntTuple(std::move(out));
  }
  const Integer& s = shape.leaf();
  if (s.is_static() && s.value() == 1) return 0;
  return (idx / stride.leaf()) % s;
}

}  // namespace cutejit
