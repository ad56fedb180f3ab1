/** \file
 * copy(src, dst) between tensors of the same size, element i of src (1-D, colexicographic) to
 * element i of dst, vectorised: the layouts are analysed at trace time (max_common_layout) for
 * the longest run of elements contiguous in both memory sides, capped at 16 bytes, and the
 * run is used only where every access it makes is provably aligned (pointer alignment, strides
 * and offsets divisible by the vector width, from static values and known divisors). Register
 * tensors take part element by element, so a global -> register copy still loads 128 bits.
 *
 * copy_if(coords, bound, src, dst) predicates each element by elem_less(coords(i), bound),
 * for residue tiles; a vector is kept only where the predicate is provably uniform over it.
 */
#pragma once

#include <array>
#include <optional>

#include "cutejit/dsl/control.hpp"
#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/tensor/identity.hpp"

namespace cutejit {

namespace detail {

/// What the planner needs to know of one side of a copy.
struct CopySide {
  Layout layout;
  Space space;
  int64_t alignment;  ///< bytes, of the data pointer
  std::optional<Swizzle> swizzle;
  Integer swizzle_base;
};

/// Groups of `vector` elements: group r's element i is at in_group(i) + groups(r) (layout
/// offsets, before any swizzle) on each side, and at coordinate origin + coord_groups(r) (+
/// coord_in_group(i)) in each mode of the predicate's coordinate tensor.
struct CopyPlan {
  int vector = 1;
  Layout src_in_group, src_groups, dst_in_group, dst_groups;
  std::vector<Layout> coord_in_group, coord_groups;
};

/// The widest vector of at most `max_bytes` that every access can make (1 element at worst).
CopyPlan plan_copy(const CopySide& src, const CopySide& dst, int element_bytes, const CoordTensor* coords,
                   const IntTuple* bound, Where w, int max_bytes = 16);

template <Element T>
CopySide copy_side(const Tensor<T>& t) {
  return {t.layout(), t.data().space(), t.data().alignment(), t.swizzle(), t.swizzle_base()};
}

template <Element T, int V>
std::array<Value<T>, V> read_group(const Tensor<T>& t, const Layout& in_group, const Integer& base, bool vector, Where w) {
  std::array<Value<T>, V> v;
  if (vector) return t.address(base, w).template load_vector<V>(w);
  for (int i = 0; i < V; ++i) v[size_t(i)] = (*t.address(base + in_group(i), w)).read(w);
  return v;
}

template <Element T, int V>
void write_group(const Tensor<T>& t, const Layout& in_group, const Integer& base, bool vector,
                 const std::array<Value<T>, V>& v, Where w) {
  if (vector) return t.address(base, w).template store_vector<V>(v, w);
  for (int i = 0; i < V; ++i) *t.address(base + in_group(i), w) = Operand<T>(v[size_t(i)], w);
}

template <Element T, int V>
void copy_groups(const CopyPlan& p, const Tensor<T>& src, const Tensor<T>& dst, const CoordTensor* coords,
                 const IntTuple* bound, Where w) {
  bool vs = V > 1 && src.data().space() != Space::local, vd = V > 1 && dst.data().space() != Space::local;
  auto group = [&](const Integer& r) {
    auto move = [&] {
      auto v = read_group<T, V>(src, p.src_in_group, p.src_groups(r), vs, w);
      write_group<T, V>(dst, p.dst_in_group, p.dst_groups(r), vd, v, w);
    };
    if (!coords) return move();
    std::vector<IntTuple> c;
    for (size_t k = 0; k < p.coord_groups.size(); ++k) c.emplace_back(coords->origin()[k] + p.coord_groups[k](r));
    if_(elem_less(c.size() == 1 ? c[0] : IntTuple(std::move(c)), *bound, w), move, w);
  };
  Integer n = size(p.src_groups);
  if (n.is_static()) {
    for (int64_t r = 0; r < n.value(); ++r) group(r);  // unrolled at trace time
  } else {
    for_(Operand<int32_t>(0, w), Operand<int32_t>(n.read(w), w), Operand<int32_t>(1, w), [&](Int r) { group(Integer(r, w)); },
         Unroll{}, w);
  }
}

template <Element T>
void copy_planned(const CopyPlan& p, const Tensor<T>& src, const Tensor<T>& dst, const CoordTensor* coords,
                  const IntTuple* bound, Where w) {
  switch (p.vector) {
    case 16: if constexpr (16 * sizeof(T) <= 16) return copy_groups<T, 16>(p, src, dst, coords, bound, w); break;
    case 8: if constexpr (8 * sizeof(T) <= 16) return copy_groups<T, 8>(p, src, dst, coords, bound, w); break;
    case 4: if constexpr (4 * sizeof(T) <= 16) return copy_groups<T, 4>(p, src, dst, coords, bound, w); break;
    case 2: if constexpr (2 * sizeof(T) <= 16) return copy_groups<T, 2>(p, src, dst, coords, bound, w); break;
    default: break;
  }
  copy_groups<T, 1>(p, src, dst, coords, bound, w);
}

}  // namespace detail

/// dst(i) = src(i) for every i, vectorised where provably safe.
template <Element T>
void copy(const Tensor<T>& src, const Tensor<T>& dst, detail::Where w = detail::Where::current()) {
  detail::CopyPlan p = detail::plan_copy(detail::copy_side(src), detail::copy_side(dst), int(sizeof(T)), nullptr, nullptr, w);
  detail::copy_planned(p, src, dst, nullptr, nullptr, w);
}

/// dst(i) = src(i) where elem_less(coords(i), bound): `coords` is the identity tensor of the
/// whole problem partitioned like src (e.g. local_tile(make_identity_tensor(shape(A)), ...)).
template <Element T>
void copy_if(const CoordTensor& coords, const IntTuple& bound, const Tensor<T>& src, const Tensor<T>& dst,
             detail::Where w = detail::Where::current()) {
  detail::CopyPlan p = detail::plan_copy(detail::copy_side(src), detail::copy_side(dst), int(sizeof(T)), &coords, &bound, w);
  detail::copy_planned(p, src, dst, &coords, &bound, w);
}

/// The default copy as an atom for make_tiled_copy (CuTe's AutoVectorizingCopy): the widest
/// access, up to 16 bytes, that is provably aligned on both sides.
struct AutoVectorizingCopy {};
template <Element T>
void copy(AutoVectorizingCopy, const Tensor<T>& src, const Tensor<T>& dst, detail::Where w = detail::Where::current()) {
  copy(src, dst, w);
}
template <Element T>
void copy_if(AutoVectorizingCopy, const CoordTensor& coords, const IntTuple& bound, const Tensor<T>& src, const Tensor<T>& dst,
             detail::Where w = detail::Where::current()) {
  copy_if(coords, bound, src, dst, w);
}

/// A copy of `Bytes` per access (CuTe's UniversalCopy<uint{8 Bytes}_t>): 1, 2, 4, 8 or 16. It
/// is an error at the user's line unless every access is provably that wide and aligned, where
/// copy() would quietly move less. (LLVM may still merge neighbouring accesses into wider ones.)
template <int Bytes>
  requires(Bytes == 1 || Bytes == 2 || Bytes == 4 || Bytes == 8 || Bytes == 16)
struct UniversalCopy {
  static constexpr int bytes = Bytes;
};

namespace detail {
template <int Bytes, Element T>
CopyPlan universal_plan(const Tensor<T>& src, const Tensor<T>& dst, const CoordTensor* coords, const IntTuple* bound, Where w) {
  static_assert(Bytes >= int(sizeof(T)), "a UniversalCopy moves at least one element per access");
  CopyPlan p = plan_copy(copy_side(src), copy_side(dst), int(sizeof(T)), coords, bound, w, Bytes);
  if (p.vector * int64_t(sizeof(T)) < Bytes) {
    const int64_t run = p.vector * int64_t(sizeof(T));
    fail("cannot prove that this copy moves aligned, contiguous runs of " + std::to_string(Bytes) + " bytes on both sides (the " +
             "longest provable run is " + std::to_string(run) + " bytes" + (coords ? ", with the predicate uniform over it" : "") +
             "); use UniversalCopy<" + std::to_string(run) + ">, AutoVectorizingCopy, or align the tiles",
         w);
  }
  return p;
}
}  // namespace detail

template <int Bytes, Element T>
void copy(UniversalCopy<Bytes>, const Tensor<T>& src, const Tensor<T>& dst, detail::Where w = detail::Where::current()) {
  detail::copy_planned(detail::universal_plan<Bytes>(src, dst, nullptr, nullptr, w), src, dst, nullptr, nullptr, w);
}
template <int Bytes, Element T>
void copy_if(UniversalCopy<Bytes>, const CoordTensor& coords, const IntTuple& bound, const Tensor<T>& src, const Tensor<T>& dst,
             detail::Where w = detail::Where::current()) {
  detail::copy_planned(detail::universal_plan<Bytes>(src, dst, &coords, &bound, w), src, dst, &coords, &bound, w);
}

/// dst(i) += src(i) for every i, each addition atomic (one atom.add per element, whose old
/// value ptxas discards: ATOMG/ATOMS with no result): the copy atom of a reduction epilogue
/// (split-K partial sums, gradients), a register fragment into global or shared memory.
/// Types: those atomic_add takes.
struct AtomicAdd {};
template <Element T>
void copy(AtomicAdd, const Tensor<T>& src, const Tensor<T>& dst, detail::Where w = detail::Where::current()) {
  if (dst.data().space() != Space::global && dst.data().space() != Space::shared)
    detail::fail("an AtomicAdd copy adds into global or shared memory; this copy's destination is neither", w);
  Integer n = size(src.layout()), nd = size(dst.layout());
  if (!n.is_static() || !nd.is_static() || n.value() != nd.value())
    detail::fail("an AtomicAdd copy adds element i of the source into element i of the destination: give tensors of one static "
                 "size, not " + to_string(src.layout()) + " and " + to_string(dst.layout()),
                 w);
  for (int64_t i = 0; i < n.value(); ++i) atomic_add(dst(IntTuple(i), w), Operand<T>(src(IntTuple(i), w).read(w), w));
}
template <Element T>
void copy_if(AtomicAdd, const CoordTensor& coords, const IntTuple& bound, const Tensor<T>& src, const Tensor<T>& dst,
             detail::Where w = detail::Where::current()) {
  Integer n = size(src.layout());
  if (!n.is_static()) detail::fail("an AtomicAdd copy needs a source of static size, not " + to_string(src.layout()), w);
  for (int64_t i = 0; i < n.value(); ++i)
    if_(elem_less(coords(IntTuple(i)), bound, w), [&] { atomic_add(dst(IntTuple(i), w), Operand<T>(src(IntTuple(i), w).read(w), w)); }, w);
}

/// The number of elements each access of copy(src, dst) would move (for tests and tuning).
template <Element T>
int copy_vector_width(const Tensor<T>& src, const Tensor<T>& dst, detail::Where w = detail::Where::current()) {
  return detail::plan_copy(detail::copy_side(src), detail::copy_side(dst), int(sizeof(T)), nullptr, nullptr, w).vector;
}

}  // namespace cutejit
