// Coalesce, filter, composition, complement, inverses, nullspace, max_common_*.
// Each algorithm reproduces the result form of CuTe's (C++) implementation.
#include <cutejit/layout/algebra.hpp>

#include <cutejit/jit/error.hpp>

#include <cstdlib>

namespace cutejit {

namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }

std::vector<int64_t> leaves(const IntTuple& t) {
  std::vector<int64_t> out;
  IntTuple flat = flatten_to_tuple(t);
  for (const auto& e : flat.elems()) out.push_back(e.value());
  return out;
}

IntTuple tuple_of(const std::vector<int64_t>& v) {
  std::vector<IntTuple> out(v.begin(), v.end());
  return IntTuple(std::move(out));
}

/// A list of modes; one element becomes a plain leaf layout, more a flat tuple layout.
Layout unwrap_layout(const std::vector<int64_t>& sh, const std::vector<int64_t>& st) {
  if (sh.size() == 1) return Layout(sh[0], st[0]);
  return Layout(tuple_of(sh), tuple_of(st));
}

/// CuTe's backward coalesce of a flat layout, with the starting front mode given.
Layout bw_coalesce(const std::vector<int64_t>& s, const std::vector<int64_t>& d, int64_t front_shape,
                   int64_t front_stride) {
  int R = static_cast<int>(s.size());
  std::vector<int64_t> ns{front_shape}, nd{front_stride};  // front = ns[0]
  bool scalar = true;  // CuTe keeps the accumulator a non-tuple until the first prepend
  for (int i = R - 2; i >= 0; --i) {
    if (s[i] == 1) continue;
    if (scalar && ns[0] == 1) {
      ns[0] = s[i];
      nd[0] = d[i];
    } else if (s[i] * d[i] == nd[0]) {
      ns[0] = s[i] * ns[0];
      nd[0] = d[i];
    } else {
      ns.insert(ns.begin(), s[i]);
      nd.insert(nd.begin(), d[i]);
      scalar = false;
    }
  }
  if (scalar && ns[0] == 1) return Layout(1, 0);
  return unwrap_layout(ns, nd);
}

/// CuTe detail::coalesce_x: also preserves the function beyond the domain.
Layout coalesce_x(const Layout& l) {
  auto s = leaves(l.shape()), d = leaves(l.stride());
  if (s.empty()) return Layout(1, 0);
  int R = static_cast<int>(s.size());
  if (s[R - 1] == 1) return bw_coalesce(s, d, 2, d[R - 1]);
  return bw_coalesce(s, d, s[R - 1], d[R - 1]);
}

int64_t sgn(int64_t x) { return (x > 0) - (x < 0); }

struct CompositionContext {
  const Layout& lhs;
  const Layout& rhs;
  const Layout& flat_lhs;
};

Layout composition_impl(const IntTuple& lshape, const IntTuple& lstride, const IntTuple& rshape,
                        const IntTuple& rstride, const CompositionContext& ctx) {
  if (rshape.is_tuple()) {
    std::vector<Layout> modes;
    for (int i = 0; i < rshape.rank(); ++i)
      modes.push_back(composition_impl(lshape, lstride, rshape[i], rstride[i], ctx));
    return make_layout_from_modes(modes);
  }
  if (rstride.value() == 0) return Layout(rshape, rstride);
  if (lshape.is_leaf()) return Layout(rshape, rstride.value() * lstride.value());

  const int R = lshape.rank();
  std::vector<int64_t> res_shape, res_stride;
  int64_t rest_shape = rshape.value(), rest_stride = rstride.value();
  for (int i = 0; i < R - 1; ++i) {
    int64_t curr_shape = lshape[i].value(), curr_stride = lstride[i].value();
    if (!((rest_stride % curr_shape) == 0 || rest_stride < curr_shape))
      fail("composition(" + to_string(ctx.lhs) + ", " + to_string(ctx.rhs) +
           "): stride divisibility condition failed: the remaining stride " + std::to_string(rest_stride) +
           " of the right layout reaches mode " + std::to_string(i) + " (shape " + std::to_string(curr_shape) +
           ") of the coalesced left layout " + to_string(ctx.flat_lhs) + ", and is neither a multiple of " +
           std::to_string(curr_shape) + " nor less than it (valid: a multiple of " + std::to_string(curr_shape) +
           ", or a divisor of it)");
    int64_t next_shape = ceil_div(curr_shape, std::llabs(rest_stride));
    int64_t next_stride = ceil_div(std::llabs(rest_stride), curr_shape) * sgn(rest_stride);
    // CuTe only checks the weak form above; a stride that does not divide the mode is still wrong
    // when the right layout continues past this mode. cutejit refuses instead of returning that.
    if (rest_shape > next_shape && rest_stride % curr_shape != 0 && curr_shape % rest_stride != 0)
      fail("composition(" + to_string(ctx.lhs) + ", " + to_string(ctx.rhs) +
           "): stride divisibility condition failed: the remaining stride " + std::to_string(rest_stride) +
           " of the right layout does not divide mode " + std::to_string(i) + " (shape " + std::to_string(curr_shape) +
           ") of the coalesced left layout " + to_string(ctx.flat_lhs) + ", and the remaining shape " +
           std::to_string(rest_shape) + " runs past that mode (valid: a stride dividing " + std::to_string(curr_shape) +
           ", or at most " + std::to_string(next_shape) + " elements at that stride)");
    if (next_shape == 1 || rest_shape == 1) {
      rest_stride = next_stride;
      continue;
    }
    int64_t new_shape = std::min(next_shape, rest_shape);
    if (rest_shape % new_shape != 0)
      fail("composition(" + to_string(ctx.lhs) + ", " + to_string(ctx.rhs) +
           "): shape divisibility condition failed: the remaining shape " + std::to_string(rest_shape) +
           " of the right layout is not a multiple of " + std::to_string(new_shape) + ", the extent that mode " +
           std::to_string(i) + " (shape " + std::to_string(curr_shape) + ") of the coalesced left layout " +
           to_string(ctx.flat_lhs) + " provides at that stride");
    res_shape.push_back(new_shape);
    res_stride.push_back(rest_stride * curr_stride);
    rest_shape /= new_shape;
    rest_stride = next_stride;
  }
  int64_t last_stride = lstride[R - 1].value();
  if (res_shape.empty()) return Layout(rest_shape, rest_stride * last_stride);
  if (rest_shape == 1) return unwrap_layout(res_shape, res_stride);
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
    return st.value() == 0 ? repeat_like(sh, 1) : sh;
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
  for (int i = 0; i < tile.rank(); ++i) modes.push_back(composition(mode(lhs, i), tile[i].layout()));
  return make_layout_from_modes(modes);
}

// ---- complement ----

Layout complement(const Layout& layout, const IntTuple& cotarget) {
  Layout f = filter(layout);
  if (f.stride().is_leaf() && f.stride().value() == 0) return make_layout(IntTuple(size(cotarget)));
  auto shape = leaves(f.shape()), stride = leaves(f.stride());
  const int R = static_cast<int>(shape.size());
  for (int64_t d : stride)
    if (d < 0)
      fail("complement(" + to_string(layout) + ", " + to_string(cotarget) +
           "): negative strides are not supported (the filtered layout is " + to_string(f) + ")");
  auto non_injective = [&]() {
    fail("complement(" + to_string(layout) + ", " + to_string(cotarget) +
         "): non-injective layout detected: the filtered layout " + to_string(f) +
         " has overlapping modes (complement needs an injective layout)");
  };
  std::vector<int64_t> res_shape, res_stride{1};
  for (int i = 0; i < R - 1; ++i) {
    size_t min_idx = 0;
    for (size_t j = 1; j < stride.size(); ++j)
      if (stride[j] < stride[min_idx]) min_idx = j;
    int64_t min_stride = stride[min_idx];
    int64_t new_shape = min_stride / res_stride[static_cast<size_t>(i)];
    int64_t new_stride = min_stride * shape[min_idx];
    if (new_shape == 0) non_injective();
    shape.erase(shape.begin() + static_cast<long>(min_idx));
    stride.erase(stride.begin() + static_cast<long>(min_idx));
    res_shape.push_back(new_shape);
    res_stride.push_back(new_stride);
  }
  int64_t new_shape = stride[0] / res_stride[static_cast<size_t>(R - 1)];
  if (new_shape == 0) non_injective();
  res_shape.push_back(new_shape);
  int64_t new_stride = stride[0] * shape[0];
  int64_t rest_shape = size(ceil_div(cotarget, IntTuple(new_stride)));
  int64_t rest_stride = rest_shape == 1 ? 0 : new_stride;
  Layout full(IntTuple{tuple_of(res_shape), rest_shape}, IntTuple{tuple_of(res_stride), rest_stride});
  return coalesce(full);
}

Layout complement(const Layout& l) { return complement(l, IntTuple(cosize(filter(l)))); }

// ---- inverses ----

namespace {
std::vector<int64_t> exclusive_prefix_product(const std::vector<int64_t>& s) {
  std::vector<int64_t> p{1};
  for (int64_t x : s) p.push_back(p.back() * x);
  return p;
}
}  // namespace

Layout right_inverse(const Layout& layout) {
  Layout c = coalesce(layout);
  auto lshape = leaves(c.shape()), lstride = leaves(c.stride());
  auto pre = exclusive_prefix_product(lshape);
  std::vector<int64_t> rs{1}, rd{0};
  int64_t curr = 1;
  for (int i : sort_by_key(lstride)) {
    if (lstride[static_cast<size_t>(i)] == curr) {
      rs.push_back(lshape[static_cast<size_t>(i)]);
      rd.push_back(pre[static_cast<size_t>(i)]);
      curr = lshape[static_cast<size_t>(i)] * lstride[static_cast<size_t>(i)];
    }
  }
  return coalesce(Layout(tuple_of(rs), tuple_of(rd)));
}

Layout left_inverse(const Layout& layout) {
  Layout c = coalesce(layout);
  auto lshape = leaves(c.shape()), lstride = leaves(c.stride());
  auto pre = exclusive_prefix_product(lshape);
  auto order = sort_by_key(lstride);
  std::vector<int64_t> rs, rd{0};
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
  auto s = leaves(l.shape()), d = leaves(l.stride());
  std::vector<int64_t> rs, rd;
  int64_t cur = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t cs = s[i] == 1 ? 0 : cur;  // compact column-major stride
    if (s[i] != 1) cur *= s[i];
    if (d[i] == 0) {
      rs.push_back(s[i]);
      rd.push_back(cs);
    }
  }
  if (rs.empty()) return Layout(1, 0);
  return unwrap_layout(rs, rd);
}

// ---- common vectors ----

int64_t max_common_vector(const Layout& a, const Layout& b) {
  Layout common = coalesce(composition(a, right_inverse(b)));
  if (mode(common, 0).stride().value() == 1) return mode(common, 0).shape().value();
  return 1;
}

Layout max_common_layout(const Layout& a, const Layout& b) {
  Layout inv_b = right_inverse(b);
  Layout common = coalesce(composition(a, inv_b));
  if (mode(common, 0).stride().value() == 1) return composition(inv_b, mode(common, 0));
  return Layout(1, 0);
}

}  // namespace cutejit
