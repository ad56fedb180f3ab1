// The partitioning behind TiledMma: CuTe's thrfrg_A/B/C on cutejit layouts, and the checks
// that give a wrong tile, atom layout or fragment a clear error at the user's line.
#include "cutejit/atom/tiled_mma.hpp"

#include <algorithm>
#include <unordered_map>

#include "cutejit/layout/algebra.hpp"

namespace cutejit::detail {

namespace {

/// The (P, Q) dimensions of operand x among (M, N, K), and its thread-value layout.
std::pair<int, int> dims(MmaOperand x) {
  switch (x) {
    case MmaOperand::a: return {0, 2};
    case MmaOperand::b: return {1, 2};
    case MmaOperand::c: return {0, 1};
  }
  return {0, 1};
}
const Layout& operand_tv(const TiledMmaShape& s, MmaOperand x) {
  return x == MmaOperand::a ? s.layout_a : x == MmaOperand::b ? s.layout_b : s.layout_c;
}
const char* operand_name(MmaOperand x) { return x == MmaOperand::a ? "A" : x == MmaOperand::b ? "B" : "C"; }
const char* dim_name(int d) { return d == 0 ? "M" : d == 1 ? "N" : "K"; }
int64_t atom_extent(const TiledMmaShape& s, int d) { return d == 0 ? s.atom_m : d == 1 ? s.atom_n : s.atom_k; }

/// Atoms of the atom layout along M, N or K.
int64_t atoms(const TiledMmaShape& s, int d) { return size(mode(s.atom_layout, d)).value(); }

/// The coordinate of atom instance `i` in a compact atom layout: (i / stride) % shape, mode by mode.
std::vector<Integer> atom_coordinate(const Layout& l, const Integer& i) {
  std::vector<Integer> c;
  for (int d = 0; d < 3; ++d) {
    int64_t n = size(mode(l, d)).value(), stride = mode(l, d).stride().leaf().value();
    c.push_back(n == 1 ? Integer(0) : (i / stride) % n);
  }
  return c;
}

}  // namespace

int TiledMmaShape::threads() const { return atom_threads * int(size(atom_layout).value()); }

int64_t TiledMmaShape::extent(int d) const {
  if (permutation && d < permutation->rank() && !(*permutation)[d].is_underscore()) return size((*permutation)[d].layout()).value();
  return atom_extent(*this, d) * atoms(*this, d);
}

TiledMmaShape make_tiled_mma_shape(std::string atom_name, int m, int n, int k, int threads, Layout a, Layout b, Layout c,
                                   const Layout& atom_layout, std::optional<Tile> permutation, Where w) {
  Layout l = atom_layout;
  if (!is_static(l)) fail("a TiledMma's atom layout must be static, not " + to_string(l), w);
  if (rank(l) > 3) fail("a TiledMma's atom layout has at most three modes (M, N, K), not " + to_string(l), w);
  while (rank(l) < 3) l = append(l, Layout(1, 0));
  // Compact: sorted by stride, each stride is the product of the shapes before it (so that
  // every group of atom threads is exactly one atom instance).
  std::vector<std::pair<int64_t, int64_t>> modes;  // (stride, shape)
  for (int d = 0; d < 3; ++d) {
    Layout md = mode(l, d);
    if (!md.shape().is_leaf()) fail("a TiledMma's atom layout has one integer per mode, not " + to_string(atom_layout), w);
    if (md.shape().value() > 1) modes.emplace_back(md.stride().value(), md.shape().value());
  }
  std::sort(modes.begin(), modes.end());
  int64_t expected = 1;
  for (auto [stride, shape] : modes) {
    if (stride != expected)
      fail("a TiledMma's atom layout must be compact (each atom instance once, as (2,2,1) or (2,2,1):(2,1,0)), not " +
                to_string(atom_layout),
            w);
    expected *= shape;
  }
  if (permutation) {
    if (permutation->rank() > 3) fail("a TiledMma's permutation has at most three modes (M, N, K), not " + to_string(*permutation), w);
    for (int d = 0; d < permutation->rank(); ++d) {
      const TileMode& p = (*permutation)[d];
      if (p.is_underscore()) continue;
      if (p.is_tile() || !is_static(p.layout()))
        fail("mode " + std::string(dim_name(d)) + " of a TiledMma's permutation must be a static layout or an integer, not " +
                  to_string(*permutation),
              w);
      int64_t need = (d == 0 ? m : d == 1 ? n : k) * size(mode(l, d)).value();
      if (size(p.layout()).value() % need != 0)
        fail("mode " + std::string(dim_name(d)) + " of the permutation " + to_string(*permutation) + " covers " +
                  std::to_string(size(p.layout()).value()) + " elements, not a multiple of the " + std::to_string(need) +
                  " that the atoms along " + dim_name(d) + " take",
              w);
    }
  }
  return {std::move(atom_name), m, n, k, threads, std::move(a), std::move(b), std::move(c), l, std::move(permutation)};
}

Layout mma_thread_fragments(const TiledMmaShape& s, MmaOperand x, const Layout& tile, Where w) {
  auto [p, q] = dims(x);
  if (rank(tile) != 2)
    fail(std::string("a TiledMma partitions ") + operand_name(x) + " as a rank-2 (" + dim_name(p) + ", " + dim_name(q) +
              ") tile, not " + to_string(tile),
          w);
  for (auto [mode_index, d] : {std::pair{0, p}, std::pair{1, q}}) {
    Integer extent = size(mode(tile, mode_index));
    if (!extent.is_static())
      fail(std::string("a TiledMma partitions tiles of static shape; mode ") + dim_name(d) + " of " + to_string(tile) + " is dynamic",
            w);
    if (extent.value() % s.extent(d) != 0)
      fail(std::string("the ") + operand_name(x) + " tile " + to_string(tile) + " has " + std::to_string(extent.value()) + " " +
                dim_name(d) + " elements, not a multiple of the " + std::to_string(s.extent(d)) + " that the TiledMma of " +
                s.atom_name + " covers",
            w);
  }
  Layout t = tile;
  if (s.permutation) {
    auto perm = [&](int d) -> TileMode {
      if (d >= s.permutation->rank() || (*s.permutation)[d].is_underscore()) return _;
      return (*s.permutation)[d].layout();
    };
    t = logical_divide(t, Tile{perm(p), perm(q)});
  }
  // ((AtomP, AtomQ), (RestP, RestQ)), then the atom's (thread, value) layout on the first mode.
  Layout a = zipped_divide(t, Tile{TileMode(atom_extent(s, p)), TileMode(atom_extent(s, q))});
  Layout tv = composition(mode(a, 0), operand_tv(s, x));
  // The atom instances along P and Q take the first (WP, WQ) blocks of the rest.
  Layout rest = zipped_divide(mode(a, 1), Tile{TileMode(atoms(s, p)), TileMode(atoms(s, q))});
  return make_layout(make_layout(mode(tv, 0), mode(rest, 0)), make_layout(mode(tv, 1), mode(rest, 1)));
}

SlicedLayout mma_partition(const TiledMmaShape& s, MmaOperand x, const Layout& tile, const Integer& thread, Where w) {
  auto [p, q] = dims(x);
  Layout frag = mma_thread_fragments(s, x, tile, w);
  Integer atom_thread = thread % s.atom_threads;
  std::vector<Integer> instance = atom_coordinate(s.atom_layout, thread / s.atom_threads);
  IntTuple coord{IntTuple{IntTuple(atom_thread), IntTuple{IntTuple(instance[size_t(p)]), IntTuple(instance[size_t(q)])}}, IntTuple(_)};
  SlicedLayout mine = slice_and_offset(coord, frag);
  // The slice keeps the `_` mode as the one mode of a tuple: ((V, (RestP, RestQ))) -> (V, RestP, RestQ).
  Layout values = mode(mine.layout, 0);
  Layout rest = mode(values, 1);
  return {make_layout(mode(values, 0), mode(rest, 0), mode(rest, 1)), mine.offset};
}

IntTuple mma_fragment_shape(const TiledMmaShape& s, MmaOperand x, const IntTuple& tile_shape, Where w) {
  return mma_partition(s, x, make_layout(tile_shape), Integer(0), w).layout.shape();
}

namespace {
/// ldmatrix.m16n16.trans of bytes: each 16 x 16 matrix's rows are 16 K values apart, its 16
/// bytes run along M (N); lane 4g + t's register 2j + h holds rows 4t ... 4t + 3 of column
/// g + 8h of matrix j. That is a whole A fragment of 16 rows, or the fragments of two B atoms
/// of 8 columns side by side (register 2j + h: atom h's register j), so for B the copy tiles N
/// by 16: twice the atom, which only a TiledMma with one atom along N (unpermuted) keeps aligned
/// with its own partition.
TiledMmaShape transposed_bytes_source(const TiledMmaShape& s, MmaOperand x, int count, Where w) {
  const Layout& dst = operand_tv(s, x);
  const std::string fragment = std::string("the ") + operand_name(x) + " fragment of " + s.atom_name;
  const int64_t registers = size(mode(dst, 1)).value() / 4, atom_q = s.atom_k;
  const int p = x == MmaOperand::a ? s.atom_m : s.atom_n, per_load = x == MmaOperand::a ? 1 : 2;
  if (s.atom_threads != 32 || x == MmaOperand::c || 16 != p * per_load || size(mode(dst, 1)).value() != 4 * registers)
    fail("ldmatrix.m16n16.trans loads the 8-bit A fragments of 16 rows and B fragments of 8 columns of mma.sync; " + fragment + " is not one",
         w);
  if (2 * count != per_load * registers || atom_q != 16 * count)
    fail("ldmatrix.m16n16.x" + std::to_string(count) + ".trans loads " + std::to_string(2 * count) + " registers of " +
             std::to_string(16 * count) + " K values per thread, but " +
             (x == MmaOperand::a ? fragment + " has " : "two of " + fragment + " side by side have ") +
             std::to_string(per_load * registers) + " of " + std::to_string(atom_q) +
             (atom_q == 16 || atom_q == 32 ? "; use LdMatrix<" + std::to_string(atom_q / 16) + ", true>" : std::string()),
         w);
  if (x == MmaOperand::b && (atoms(s, 1) != 1 || (s.permutation && s.permutation->rank() > 1 && !(*s.permutation)[1].is_underscore())))
    fail("ldmatrix.m16n16.trans fills two B atoms side by side along N; a TiledMma of " + std::to_string(atoms(s, 1)) +
             " atoms along N" + (atoms(s, 1) == 1 ? std::string(" with a permutation of N") : std::string()) +
             " hands those columns to different threads; tile N with one atom, unpermuted",
         w);
  // The ISA's rule against the fragment, in the atom's (P, K) tile: for A, register 2j + h is
  // the fragment's register 2j + h; for B, register j of the atom h blocks along N, which holds
  // what register j of the first atom holds, 8 columns on.
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < count; ++j)
      for (int h = 0; h < (x == MmaOperand::a ? 2 : 1); ++h)
        for (int i = 0; i < 4; ++i) {
          const int64_t k = 16 * j + 4 * (lane % 4) + i, column = lane / 4 + (x == MmaOperand::a ? 8 * h : 0);
          const int64_t got = dst(lane, 4 * (x == MmaOperand::a ? 2 * j + h : j) + i).value();
          if (got != column + p * k)
            fail(fragment + " is not made of the 16 x 16 matrices ldmatrix.m16n16.trans loads (lane 4g + t, register 2j + h: K rows "
                 "4t ... 4t + 3 of matrix j at column g + 8h)",
                 w);
        }
  TiledMmaShape out = s;
  // Lane r + 16j points at row r of matrix j (lanes 16 ... 31 repeat 0 ... 15 for x1); a row's
  // 16 bytes run along M (N) of the instruction's 16-wide tile.
  Layout src = make_layout(Layout(IntTuple{16, 2}, IntTuple{16, count == 2 ? 256 : 0}), Layout(16, 1));
  if (x == MmaOperand::a) {
    out.layout_a = src;
  } else {
    out.layout_b = src;
    out.atom_n = 16;
  }
  return out;
}
}  // namespace

TiledMmaShape ldmatrix_source(const TiledMmaShape& s, MmaOperand x, int count, bool transpose, int element_bytes, Where w) {
  if (transpose && element_bytes == 1) return transposed_bytes_source(s, x, count, w);
  const Layout& dst = operand_tv(s, x);
  const int per_register = 4 / element_bytes;
  const int64_t values = size(mode(dst, 1)).value(), registers = values / per_register;
  const std::string fragment = std::string("the ") + operand_name(x) + " fragment of " + s.atom_name;
  const std::string atom = "LdMatrix<" + std::to_string(registers) + (transpose ? ", true>" : ">");
  if (s.atom_threads != 32 || per_register < 1 || registers * per_register != values)
    fail(fragment + " is not in registers of 8-, 16- or 32-bit values, which ldmatrix loads", w);
  if (transpose && per_register != 2) fail("ldmatrix.trans moves 16-bit values; " + fragment + " has " + std::to_string(8 * element_bytes) + "-bit ones", w);
  if (count != registers)
    fail("ldmatrix.x" + std::to_string(count) + " loads " + std::to_string(count) + " registers per thread, but " + fragment + " has " +
             std::to_string(registers) + (registers == 1 || registers == 2 || registers == 4 ? "; use " + atom : ""),
         w);
  // Without .trans lane l reads the values of row l / 4 of its matrix, with .trans those of
  // column l / 4: a matrix's row addresses run along the fragment's group (lane / 4) in the
  // first case, along its thread-in-group (lane % 4) and register value in the second. A row's
  // 16 bytes run along a register's values, or (32-bit values, one per register) across the
  // thread-in-group.
  auto at = [&](int lane, int v) { return dst(lane, v).value(); };
  const int64_t value_step = at(0, 1) - at(0, 0), quad_step = at(1, 0) - at(0, 0), group_step = at(4, 0) - at(0, 0);
  Layout matrices = composition(mode(dst, 1), Layout(count, per_register)), broadcast(32 / (8 * count), 0);
  Layout src = transpose ? make_layout(make_layout(Layout(IntTuple{2, 4}, IntTuple{value_step, quad_step}), matrices, broadcast), Layout(8, group_step))
                         : make_layout(make_layout(mode(mode(dst, 0), 1), matrices, broadcast),
                                       Layout(16 / element_bytes, per_register == 1 ? quad_step : value_step));
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < count; ++j)
      for (int i = 0; i < per_register; ++i) {
        int64_t expect = transpose ? src(8 * j + 2 * (lane % 4) + i, lane / 4).value()
                                   : src(lane / 4 + 8 * j, per_register * (lane % 4) + i).value();
        if (at(lane, per_register * j + i) != expect)
          fail(fragment + " is not made of the 8 x 8 matrices ldmatrix" + (transpose ? ".trans" : "") + " loads (one per register, " +
                   (transpose ? "lane / 4 the column)" : "lane / 4 the row)"),
               w);
      }
  TiledMmaShape out = s;
  (x == MmaOperand::a ? out.layout_a : x == MmaOperand::b ? out.layout_b : out.layout_c) = src;
  return out;
}

TiledMmaShape scale_factor_source(const TiledMmaShape& s, MmaOperand x, const Layout& sf, int blocks, Where w) {
  if (x == MmaOperand::c) fail("scale factors belong to A and B, not C", w);
  const int rows = x == MmaOperand::a ? s.atom_m : s.atom_n;
  if (rank(sf) != 2 || size(mode(sf, 0)).value() != s.atom_threads || cosize(sf).value() > int64_t(rows) * blocks)
    fail("the scale factors of " + s.atom_name + " must be a (thread, value) layout of " + std::to_string(s.atom_threads) +
             " threads into its (" + std::to_string(rows) + ", " + std::to_string(blocks) + ") scale tile, not " + to_string(sf),
         w);
  if (s.permutation && s.permutation->rank() > 2 && !(*s.permutation)[2].is_underscore())
    fail("a TiledMma that permutes K has no scale-factor partition: a scale block would be split", w);
  TiledMmaShape out = s;
  (x == MmaOperand::a ? out.layout_a : out.layout_b) = sf;
  out.atom_k = blocks;
  return out;
}

void check_ldmatrix_rows(const Layout& row, const std::optional<Swizzle>& swizzle, int element_bytes, bool transpose, Where w) {
  const int64_t per_row = 16 / element_bytes;
  // A swizzle that moves bits below the 16-byte chunk would split a row.
  bool contiguous = coalesce(row) == Layout(per_row, 1) && (!swizzle || (int64_t(1) << swizzle->base()) >= per_row);
  if (!contiguous)
    fail(std::string("ldmatrix") + (transpose ? ".trans" : "") + " reads 16 contiguous bytes per row address, but this tile's values along " +
             (transpose ? "M (or N)" : "K") + " are at " + to_string(row) + (swizzle ? " under the swizzle " + to_string(*swizzle) : std::string()) +
             (transpose ? "; store the operand M- or N-major, or load a K-major one with LdMatrix<N> (no transpose)"
                        : "; store the operand with K contiguous (K-major), or load an M- or N-major one with LdMatrix<N, true>") +
             ", swizzled in 16-byte chunks or coarser",
         w);
}

void check_gemm_fragments(const TiledMmaShape& s, const Layout& d, const Layout& a, const Layout& b, Where w) {
  auto check = [&](const Layout& f, MmaOperand x) {
    int64_t values = size(mode(operand_tv(s, x), 1)).value();
    if (rank(f) != 3 || !is_static(f) || size(mode(f, 0)).value() != values)
      fail(std::string("gemm's ") + operand_name(x) + " fragment " + to_string(f) + " is not a (V, Rest, Rest) register tile with the " +
                std::to_string(values) + " values per thread of " + s.atom_name + "; make it with partition_fragment_" +
                operand_name(x),
            w);
  };
  check(d, MmaOperand::c);
  check(a, MmaOperand::a);
  check(b, MmaOperand::b);
  auto extent = [](const Layout& f, int i) { return size(mode(f, i)).value(); };
  if (extent(a, 1) != extent(d, 1) || extent(b, 1) != extent(d, 2) || extent(a, 2) != extent(b, 2))
    fail("gemm's fragments disagree: A " + to_string(a) + ", B " + to_string(b) + " and C " + to_string(d) +
              " must be (V, M, K), (V, N, K) and (V, M, N) of the same M, N and K",
          w);
}

namespace {
/// The leaves of a layout, in order, as (shape, stride).
std::vector<std::pair<int64_t, int64_t>> leaves(const Layout& l) {
  IntTuple shape = flatten_to_tuple(l.shape()), stride = flatten_to_tuple(l.stride());
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int i = 0; i < shape.rank(); ++i) out.emplace_back(shape[i].value(), stride[i].value());
  return out;
}
/// A layout of (shape, stride) leaves: one leaf as itself, several as a tuple.
Layout from_leaves(const std::vector<std::pair<int64_t, int64_t>>& l) {
  if (l.empty()) return Layout(1, 0);
  if (l.size() == 1) return Layout(l[0].first, l[0].second);
  std::vector<IntTuple> shape, stride;
  for (auto [n, d] : l) shape.emplace_back(n), stride.emplace_back(d);
  return Layout(IntTuple(shape), IntTuple(stride));
}
}  // namespace

Layout accumulator_rowcol(const TiledMmaShape& s, const Layout& fragment, Where w) {
  const std::string what = "the C fragment of " + s.atom_name;
  if (rank(fragment) != 3 || !is_static(fragment))
    fail("a rows-and-columns view takes a (V, RestM, RestN) accumulator from partition_fragment_C, not " + to_string(fragment), w);
  // The atom's values as leaves, each along M (index step below M) or along N (a multiple of M);
  // the fragment's value mode has the same leaves, in registers.
  auto atom = leaves(mode(s.layout_c, 1)), mine = leaves(mode(fragment, 0));
  if (atom.size() != mine.size()) fail(what + " " + to_string(mode(fragment, 0)) + " does not have the atom's value shape " + to_string(mode(s.layout_c, 1)), w);
  std::vector<std::pair<int64_t, int64_t>> rows, cols;  // (atom stride, leaf of the fragment)
  std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> along_m, along_n;
  for (size_t i = 0; i < atom.size(); ++i) {
    auto [n, step] = atom[i];
    if (n != mine[i].first) fail(what + " " + to_string(mode(fragment, 0)) + " does not have the atom's value shape " + to_string(mode(s.layout_c, 1)), w);
    if (n == 1) continue;
    if (step * (n - 1) < s.atom_m) along_m.push_back({step, mine[i]});
    else if (step % s.atom_m == 0) along_n.push_back({step, mine[i]});
    else fail(what + " has values that are neither along M nor along N (" + to_string(s.layout_c) + ")", w);
  }
  std::sort(along_m.begin(), along_m.end());
  std::sort(along_n.begin(), along_n.end());
  for (auto& [step, leaf] : along_m) rows.push_back(leaf);
  for (auto& [step, leaf] : along_n) cols.push_back(leaf);
  for (auto [n, d] : leaves(mode(fragment, 1))) rows.emplace_back(n, d);
  for (auto [n, d] : leaves(mode(fragment, 2))) cols.emplace_back(n, d);
  return make_layout(from_leaves(rows), from_leaves(cols));
}

int accumulator_row_lanes(const TiledMmaShape& s, Where w) {
  // The leading thread leaves that step along N share their rows; every later one steps along M.
  int64_t lanes = 1;
  bool rows_started = false;
  for (auto [n, step] : leaves(mode(s.layout_c, 0))) {
    if (n == 1) continue;
    bool along_n = step % s.atom_m == 0;
    if (along_n && rows_started)
      fail("the C layout of " + s.atom_name + " " + to_string(s.layout_c) + " does not give each row to consecutive lanes", w);
    if (along_n) lanes *= n;
    else rows_started = true;
  }
  return int(lanes);
}

std::vector<std::pair<int, int>> accumulator_to_a(const TiledMmaShape& prev, const TiledMmaShape& next, int64_t k_blocks, Where w) {
  const std::string what = "the C fragment of " + prev.atom_name + " as the A fragment of " + next.atom_name;
  if (prev.atom_threads != next.atom_threads || prev.atom_m != next.atom_m || atoms(prev, 0) != atoms(next, 0) || atoms(prev, 1) != 1 ||
      atoms(next, 2) != 1 || prev.permutation || next.permutation)
    fail(what + " needs the same atoms along M, one along the first's N and the second's K, and no permutations", w);
  // next's K runs along prev's N: K block kk covers columns kk K ... of the accumulator, which
  // may span several of prev's N atoms (mma.sync: k16 over n8) or lie inside one (wgmma: k16
  // inside n128); either way a K block may not straddle two atoms unevenly.
  if (next.atom_k % prev.atom_n != 0 && prev.atom_n % next.atom_k != 0)
    fail(what + " needs the second's K (" + std::to_string(next.atom_k) + ") to be a multiple or a divisor of the first's N (" +
             std::to_string(prev.atom_n) + ")",
         w);
  const int64_t values_a = size(mode(next.layout_a, 1)).value(), values_c = size(mode(prev.layout_c, 1)).value();
  std::vector<std::pair<int, int>> map(size_t(values_a * k_blocks), {-1, -1});
  // Each lane's C values by the (m, n) index they hold: one evaluation of the layout per value
  // (a search per A value would evaluate it ~10^6 times for a wgmma tile).
  std::vector<std::unordered_map<int64_t, int>> c_at(size_t(prev.atom_threads));
  for (int lane = 0; lane < prev.atom_threads; ++lane)
    for (int64_t c = 0; c < values_c; ++c) c_at[size_t(lane)].emplace(prev.layout_c(lane, c).value(), int(c));
  for (int64_t kk = 0; kk < k_blocks; ++kk)
    for (int lane = 0; lane < next.atom_threads; ++lane)
      for (int64_t v = 0; v < values_a; ++v) {
        // A's (m, k) of this value is C's (m, n) at column kk K + k: N atom n / N, column n % N.
        int64_t index = next.layout_a(lane, v).value(), m = index % next.atom_m, n = kk * next.atom_k + index / next.atom_m;
        int64_t want = m + prev.atom_m * (n % prev.atom_n);
        auto at = c_at[size_t(lane)].find(want);
        int found = at == c_at[size_t(lane)].end() ? -1 : at->second;
        std::pair<int, int> here{found, int(n / prev.atom_n)};
        std::pair<int, int>& slot = map[size_t(kk * values_a + v)];
        if (found < 0 || (lane > 0 && slot != here))
          fail(what + ": lane " + std::to_string(lane) + " holds A value " + std::to_string(v) + " of K block " + std::to_string(kk) +
                   " but not the C value at that place",
               w);
        slot = here;
      }
  return map;
}

}  // namespace cutejit::detail
