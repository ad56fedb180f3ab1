// Coalesce, filter, composition, complement, inverses, nullspace, max_common_*.
// Each algorithm reproduces the result form of CuTe's (C++) implementation.
#include <cutejit/layout/algebra.hpp>

#include <cutejit/core/error.hpp>

#include <cstdlib>

namespace cutejit {

namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }

using Integers = std::vector<Integer>;

Integers leaves(const IntTuple& t) {
  Integers out;
  IntTuple flat = flatten_to_tuple(t);
  for (const auto& e : flat.elems()) out.push_back(e.leaf());
  return out;
}

/// Static values only: the algorithms that sort or compare strides need them.
std::vector<int64_t> static_leaves(const IntTuple& t, const std::string& op, const Layout& l, const char* what) {
  std::vector<int64_t> out;
  for (const Integer& x : leaves(t)) {
    if (x.is_dynamic())
      throw Error(op + "(" + to_string(l) + "): the " + what + " must be static here (they are compared to order "
                  "the modes), but one is dynamic; make it a static value", x.where());
    out.push_back(x.value());
  }
  return out;
}

bool is_const(const Integer& x, int64_t v) { return x.is_static() && x.value() == v; }

IntTuple tuple_of(const Integers& v) {
  std::vector<IntTuple> out(v.begin(), v.end());
  return IntTuple(std::move(out));
}

/// A list of modes; one element becomes a plain leaf layout, more a flat tuple layout.
Layout unwrap_layout(const Integers& sh, const Integers& st) {
  if (sh.size() == 1) return Layout(sh[0], st[0]);
  return Layout(tuple_of(sh), tuple_of(st));
}

/// s * d == target, decided without emitting IR: statically, or because one factor is a
/// static 1 and the other is the same traced value as the target.
bool product_is(const Integer& s, const Integer& d, const Integer& target) {
  if (s.is_static() && d.is_static() && target.is_static()) return s.value() * d.value() == target.value();
  return (is_const(s, 1) && same(d, target)) || (is_const(d, 1) && same(s, target));
}

/// CuTe's backward coalesce of a flat layout, with the starting front mode given. Dynamic
/// modes merge only when the merge is provable (CuTe never merges them).
Layout bw_coalesce(const Integers& s, const Integers& d, const Integer& front_shape, const Integer& front_stride) {
  int R = static_cast<int>(s.size());
  Integers ns{front_shape}, nd{front_stride};  // front = ns[0]
  bool scalar = true;  // CuTe keeps the accumulator a non-tuple until the first prepend
  for (int i = R - 2; i >= 0; --i) {
    if (is_const(s[i], 1)) continue;
    if (scalar && is_const(ns[0], 1)) {
      ns[0] = s[i];
      nd[0] = d[i];
    } else if (product_is(s[i], d[i], nd[0])) {
      ns[0] = s[i] * ns[0];
      nd[0] = d[i];
    } else {
      ns.insert(ns.begin(), s[i]);
      nd.insert(nd.begin(), d[i]);
      scalar = false;
    }
  }
  if (scalar && is_const(ns[0], 1)) return Layout(1, 0);
  return unwrap_layout(ns, nd);
}

/// CuTe detail::coalesce_x: also preserves the function beyond the domain.
Layout coalesce_x(const Layout& l) {
  auto s = leaves(l.shape()), d = leaves(l.stride());
  if (s.empty()) return Layout(1, 0);
  int R = static_cast<int>(s.size());
  if (is_const(s[R - 1], 1)) return bw_coalesce(s, d, 2, d[R - 1]);
  return bw_coalesce(s, d, s[R - 1], d[R - 1]);
}

int64_t sgn(int64_t x) { return (x > 0) - (x < 0); }

struct CompositionContext {
  const Layout& lhs;
  const Layout& rhs;
  const Layout& flat_lhs;
};

/// a*b divides c, without emitting a*b unless it folds (static, or a factor is 1).
bool divides_product(const Integer& a, const Integer& b, const Integer& c) {
  if (a.is_static() && b.is_static()) return divides(Integer(a.value() * b.value()), c);
  if (is_const(a, 1)) return divides(b, c);
  if (is_const(b, 1)) return divides(a, c);
  return false;
}

[[noreturn]] void composition_dynamic_error(const CompositionContext& ctx, int mode, const Integer& curr_shape,
                                            const Integer& rest_stride, const Integer& rest_shape) {
  const Integer& culprit = curr_shape.is_dynamic() ? curr_shape : rest_stride.is_dynamic() ? rest_stride : rest_shape;
  throw Error("composition(" + to_string(ctx.lhs) + ", " + to_string(ctx.rhs) +
                  "): cannot prove the divisibility condition with dynamic values: at mode " + std::to_string(mode) +
                  " of the coalesced left layout " + to_string(ctx.flat_lhs) + " (shape " + to_string(curr_shape) +
                  "), the remaining stride " + to_string(rest_stride) + " and shape " + to_string(rest_shape) +
                  " of the right layout must provably divide (or be multiples of) it. State what you know with "
                  "assume_divisible(x, d) on the dynamic value, or use static sizes",
              culprit.where());
}

/// One mode of composition_impl when a dynamic value takes part: the same steps as the static
/// algorithm, but each decision must be provable from static values and known divisors.
void composition_dynamic_step(int i, const Integer& curr_shape, const Integer& curr_stride, Integer& rest_shape,
                              Integer& rest_stride, Integers& res_shape, Integers& res_stride,
                              const CompositionContext& ctx) {
  if (is_const(rest_shape, 1)) return;  // nothing left to place: the rest has shape 1
  if (rest_stride.is_static() && rest_stride.value() < 0)
    throw Error("composition(" + to_string(ctx.lhs) + ", " + to_string(ctx.rhs) +
                "): negative strides are not supported together with dynamic shapes");
  if (divides(curr_shape, rest_stride)) {  // the stride steps over the whole mode
    rest_stride = rest_stride / curr_shape;
    return;
  }
  if (!divides(rest_stride, curr_shape)) composition_dynamic_error(ctx, i, curr_shape, rest_stride, rest_shape);
  // The mode offers next = curr_shape / rest_stride elements at this stride; the new mode takes
  // min(next, rest_shape), which needs one to divide the other. Decided on the products (the
  // divisors of a quotient are not tracked): rest_shape | next  <=>  rest_shape*rest_stride | curr_shape.
  Integer new_shape;
  if (divides_product(rest_shape, rest_stride, curr_shape)) {
    new_shape = rest_shape;
  } else {
    Integer next_shape = curr_shape / rest_stride;
    if (is_const(next_shape, 1)) {
      rest_stride = 1;
      return;
    }
    if (!divides(next_shape, rest_shape)) composition_dynamic_error(ctx, i, curr_shape, rest_stride, rest_shape);
    new_shape = next_shape;
  }
  res_shape.push_back(new_shape);
  res_stride.push_back(rest_stride * curr_stride);
  rest_shape = rest_shape / new_shape;
  rest_stride = 1;
}

Layout composition_impl(const IntTuple& lshape, const IntTuple& lstride, const IntTuple& rshape,
                        const IntTuple& rstride, const CompositionContext& ctx) {
  if (rshape.is_tuple()) {
    std::vector<Layout> modes;
    for (int i = 0; i < rshape.rank(); ++i)
      modes.push_back(composition_impl(lshape, lstride, rshape[i], rstride[i], ctx));
    return make_layout_from_modes(modes);
  }
  if (is_const(rstride.leaf(), 0)) return Layout(rshape, rstride);
  if (lshape.is_leaf()) return Layout(rshape, rstride.leaf() * lstride.leaf());

  const int R = lshape.rank();
  Integers res_shape, res_stride;
  Integer rest_shape = rshape.leaf(), rest_stride = rstride.leaf();
  for (int i = 0; i < R - 1; ++i) {
    const Integer& curr_shape_i = lshape[i].leaf();
    const Integer& curr_stride = lstride[i].leaf();
    if (curr_shape_i.is_dynamic() || rest_stride.is_dynamic() || rest_shape.is_dynamic()) {
      composition_dynamic_step(i, curr_shape_i, curr_stride, rest_shape, rest_stride, res_shape, res_stride, ctx);
      continue;
    }
    int64_t curr_shape = curr_shape_i.value(), rs = rest_stride.value(), rsh = rest_shape.value();
    if (!((rs % curr_shape) == 0 || rs < curr_shape))
      fail("composition(" + to_string(ctx.lhs) + ", " + to_string(ctx.rhs) +
           "): stride divisibility condition failed: the remaining stride " + std::to_string(rs) +
           " of the right layout reaches mode " + std::to_string(i) + " (shape " + std::to_string(curr_shape) +
           ") of the coalesced left layout " + to_string(ctx.flat_lhs) + ", and is neither a multiple of " +
           std::to_string(curr_shape) + " nor less than it (valid: a multiple of " + std::to_string(curr_shape) +
           ", or a divisor of it)");
    int64_t next_shape = ceil_div(curr_shape, std::llabs(rs));
    int64_t next_stride = ceil_div(std::llabs(rs), curr_shape) * sgn(rs);
    // CuTe only checks the weak form above; a stride that does not divide the mode is still wrong
    // when the right layout continues past this mode. cutejit refuses instead of returning that.
    if (rsh > next_shape && rs % curr_shape != 0 && curr_shape % rs != 0)
      fail("composition(" + to_string(ctx.lhs) + ", " + to_string(ctx.rhs) +
           "): stride divisibility condition failed: the remaining stride " + std::to_string(rs) +
           " of the right layout does not divide mode " + std::to_string(i) + " (shape " + std::to_string(curr_shape) +
           ") of the coalesced left layout " + to_string(ctx.flat_lhs) + ", and the remaining shape " +
           std::to_string(rsh) + " runs past that mode (valid: a stride dividing " + std::to_string(curr_shape) +
           ", or at most " + std::to_string(next_shape) + " elements at that stride)");
    if (next_shape == 1 || rsh == 1) {
      rest_stride = next_stride;
      continue;
    }
    int64_t new_shape = std::min(next_shape, rsh);
    if (rsh % new_shape != 0)
      fail("composition(" + to_string(ctx.lhs) + ", " + to_string(ctx.rhs) +
           "): shape divisibility condition failed: the remaining shape " + std::to_string(rsh) +
           " of the right layout is not a multiple of " + std::to_string(new_shape) + ", the extent that mode " +
           std::to_string(i) + " (shape " + std::to_string(curr_shape) + ") of the coalesced left layout " +
           to_string(ctx.flat_lhs) + " provides at that stride");
    res_shape.push_back(new_shape);
    res_stride.push_back(rs * curr_stride);
    rest_shape = rsh / new_shape;
    rest_stride = next_stride;
  }
  const Integer& last_stride = lstride[R - 1].leaf();
  if (res_shape.empty()) return Layout(rest_shape, rest_stride * last_stride);
  if (is_const(rest_shape, 1)) return unwrap_layout(res_shape, res_stride);
  res_shape.push_back(rest_shape);
  res_stride.push_back(rest_stride * last_stride);
  return Layout(tuple_of(res_shape), tuple_of(res_stride));
}

/// CuTe's exchange sort by key (not stable); returns the values in sorted order.
std::vector<int> sort_by_key(const std::vector<int64_t>& keys) {
  std::vector<std::pair<int64_t, int>> a;
  for (size_t i = 0; i < keys.size(); ++i) a.emplace_back(keys[i], static_cast<int>(i));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = i + 1; j < a.size(); ++j)
      if (a[j].first < a[i].first) std::swap(a[i], a[j]);
  std::vector<int> out;
  for (auto& p : a) out.push_back(p.second);
  return out;
}

}  // namespace

// ---- coalesce / filter ----

Layout coalesce(const Layout& l) {
  auto s = leaves(l.shape()), d = leaves(l.stride());
  if (s.empty()) return Layout(1, 0);
  return bw_coalesce(s, d, s.back(), d.back());
}

Layout coalesce(const Layout& l, const IntTuple& profile) {
  if (profile.is_leaf()) return coalesce(l);
  if (profile.rank() > rank(l))
    fail("coalesce: the profile " + to_string(profile) + " has more modes than the layout " + to_string(l));
  std::vector<Layout> modes;
  for (int i = 0; i < rank(l); ++i)
    modes.push_back(i < profile.rank() ? coalesce(mode(l, i), profile[i]) : mode(l, i));
  return make_layout_from_modes(modes);
}

Layout filter_zeros(const Layout& l) {
  auto fz = [](auto&& self, const IntTuple& sh, const IntTuple& st) -> IntTuple {
    if (st.is_tuple()) {
      std::vector<IntTuple> out;
      for (int i = 0; i < st.rank(); ++i) out.push_back(self(self, sh[i], st[i]));
      return IntTuple(std::move(out));
    }
    return is_const(st.leaf(), 0) ? repeat_like(sh, 1) : sh;
  };
  return Layout(fz(fz, l.shape(), l.stride()), l.stride());
}

Layout filter(const Layout& l) { return coalesce(filter_zeros(l)); }

Layout filter(const Layout& l, const IntTuple& profile) {
  if (profile.is_leaf()) return filter(l);
  if (profile.rank() > rank(l))
    fail("filter: the profile " + to_string(profile) + " has more modes than the layout " + to_string(l));
  std::vector<Layout> modes;
  for (int i = 0; i < rank(l); ++i)
    modes.push_back(i < profile.rank() ? filter(mode(l, i), profile[i]) : mode(l, i));
  return make_layout_from_modes(modes);
}

// ---- composition ----

Layout composition(const Layout& lhs, const Layout& rhs) {
  Layout flat = coalesce_x(lhs);
  CompositionContext ctx{lhs, rhs, flat};
  return composition_impl(flat.shape(), flat.stride(), rhs.shape(), rhs.stride(), ctx);
}

Layout composition(const Layout& lhs, const Tile& tile) {
  if (tile.rank() > rank(lhs))
    fail("composition(" + to_string(lhs) + ", " + to_string(tile) + "): the tiler has " +
         std::to_string(tile.rank()) + " modes but the layout only " + std::to_string(rank(lhs)) +
         " (a by-mode tiler needs at most rank(layout) modes)");
  std::vector<Layout> modes;
  for (int i = 0; i < tile.rank(); ++i) {
    Layout m = mode(lhs, i);
    if (tile[i].is_underscore()) modes.push_back(m);  // `_`: the mode is kept whole
    else if (tile[i].is_tile()) modes.push_back(composition(m, tile[i].tile()));
    else modes.push_back(composition(m, tile[i].layout()));
  }
  return make_layout_from_modes(modes);
}

// ---- complement ----

Layout complement(const Layout& layout, const IntTuple& cotarget) {
  Layout f = filter(layout);
  if (f.stride().is_leaf() && is_const(f.stride().leaf(), 0)) return make_layout(IntTuple(size(cotarget)));
  // Shapes may be dynamic; the strides order the modes, so they must be static.
  Integers shape = leaves(f.shape());
  std::vector<int64_t> stride = static_leaves(f.stride(), "complement", layout, "strides");
  const int R = static_cast<int>(shape.size());
  // CuTe's algorithm divides each stride by the extent below it; with a negative stride that
  // yields a negative shape and a meaningless layout (CuTe does not check), so refuse here.
  for (int64_t d : stride)
    if (d < 0)
      fail("complement(" + to_string(layout) + ", " + to_string(cotarget) + "): the filtered layout " + to_string(f) +
           " has the negative stride " + std::to_string(d) +
           "; complement is defined for non-negative strides only");
  auto non_injective = [&]() {
    fail("complement(" + to_string(layout) + ", " + to_string(cotarget) +
         "): non-injective layout detected: the filtered layout " + to_string(f) +
         " has overlapping modes (complement needs an injective layout)");
  };
  Integers res_shape, res_stride{1};
  for (int i = 0; i < R - 1; ++i) {
    size_t min_idx = 0;
    for (size_t j = 1; j < stride.size(); ++j)
      if (stride[j] < stride[min_idx]) min_idx = j;
    int64_t min_stride = stride[min_idx];
    Integer new_shape = min_stride / res_stride[static_cast<size_t>(i)];
    Integer new_stride = min_stride * shape[min_idx];
    if (is_const(new_shape, 0)) non_injective();
    shape.erase(shape.begin() + static_cast<long>(min_idx));
    stride.erase(stride.begin() + static_cast<long>(min_idx));
    res_shape.push_back(new_shape);
    res_stride.push_back(new_stride);
  }
  Integer new_shape = stride[0] / res_stride[static_cast<size_t>(R - 1)];
  if (is_const(new_shape, 0)) non_injective();
  res_shape.push_back(new_shape);
  Integer new_stride = stride[0] * shape[0];
  Integer rest_shape = size(ceil_div(cotarget, IntTuple(new_stride)));
  Integer rest_stride = is_const(rest_shape, 1) ? Integer(0) : new_stride;
  Layout full(IntTuple{tuple_of(res_shape), rest_shape}, IntTuple{tuple_of(res_stride), rest_stride});
  return coalesce(full);
}

Layout complement(const Layout& l) { return complement(l, IntTuple(cosize(filter(l)))); }

// ---- inverses ----

namespace {
Integers exclusive_prefix_product(const Integers& s) {
  Integers p{1};
  for (const Integer& x : s) p.push_back(p.back() * x);
  return p;
}

bool all_static(const Integers& v) {
  for (const Integer& x : v)
    if (x.is_dynamic()) return false;
  return true;
}

/// The order in which right_inverse visits modes: by increasing static stride (CuTe's sort),
/// or, with dynamic strides, by following the chain stride == shape*stride of the previous one.
std::vector<int> inverse_order(const Integers& shape, const Integers& stride) {
  if (all_static(stride)) {
    std::vector<int64_t> keys;
    for (const Integer& d : stride) keys.push_back(d.value());
    return sort_by_key(keys);
  }
  std::vector<int> order;
  std::vector<bool> used(stride.size(), false);
  Integer curr = 1;
  for (bool found = true; found;) {
    found = false;
    for (size_t i = 0; i < stride.size() && !found; ++i)
      if (!used[i] && same(stride[i], curr)) {
        used[i] = found = true;
        order.push_back(int(i));
        curr = shape[i] * stride[i];
      }
  }
  return order;
}
}  // namespace

Layout right_inverse(const Layout& layout) {
  Layout c = coalesce(layout);
  Integers lshape = leaves(c.shape()), lstride = leaves(c.stride());
  Integers pre = exclusive_prefix_product(lshape);
  Integers rs{1}, rd{0};
  Integer curr = 1;
  for (int i : inverse_order(lshape, lstride)) {
    if (same(lstride[static_cast<size_t>(i)], curr)) {
      rs.push_back(lshape[static_cast<size_t>(i)]);
      rd.push_back(pre[static_cast<size_t>(i)]);
      curr = lshape[static_cast<size_t>(i)] * lstride[static_cast<size_t>(i)];
    }
  }
  return coalesce(Layout(tuple_of(rs), tuple_of(rd)));
}

Layout left_inverse(const Layout& layout) {
  Layout c = coalesce(layout);
  Integers lshape = leaves(c.shape());
  std::vector<int64_t> lstride = static_leaves(c.stride(), "left_inverse", layout, "strides");
  Integers pre = exclusive_prefix_product(lshape);
  auto order = sort_by_key(lstride);
  Integers rs, rd{0};
  int64_t rsize = 1;
  for (int i : order) {
    int64_t d = lstride[static_cast<size_t>(i)];
    if (d == 0) continue;
    if (d % rsize != 0)
      fail("left_inverse(" + to_string(layout) + "): divisibility condition failed: the stride " + std::to_string(d) +
           " of the coalesced layout " + to_string(c) + " is not a multiple of " + std::to_string(rsize) +
           ", the extent covered by its smaller strides (a left inverse needs an injective layout whose strides "
           "divide each other in order)");
    rs.push_back(d / rsize);
    rsize *= d / rsize;
    rd.push_back(pre[static_cast<size_t>(i)]);
  }
  rs.push_back(lshape[static_cast<size_t>(order.back())]);
  return coalesce(Layout(tuple_of(rs), tuple_of(rd)));
}

Layout nullspace(const Layout& l) {
  Integers s = leaves(l.shape()), d = leaves(l.stride());
  Integers rs, rd;
  Integer cur = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    Integer cs = is_const(s[i], 1) ? Integer(0) : cur;  // compact column-major stride
    if (!is_const(s[i], 1)) cur = cur * s[i];
    if (is_const(d[i], 0)) {
      rs.push_back(s[i]);
      rd.push_back(cs);
    }
  }
  if (rs.empty()) return Layout(1, 0);
  return unwrap_layout(rs, rd);
}

// ---- common vectors ----

Integer max_common_vector(const Layout& a, const Layout& b) {
  Layout common = coalesce(composition(a, right_inverse(b)));
  if (is_const(mode(common, 0).stride().leaf(), 1)) return mode(common, 0).shape().leaf();
  return 1;
}

Layout max_common_layout(const Layout& a, const Layout& b) {
  Layout inv_b = right_inverse(b);
  Layout common = coalesce(composition(a, inv_b));
  if (is_const(mode(common, 0).stride().leaf(), 1)) return composition(inv_b, mode(common, 0));
  return Layout(1, 0);
}

}  // namespace cutejit
