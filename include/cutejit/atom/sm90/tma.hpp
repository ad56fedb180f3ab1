/** \file
 * TMA in a kernel (sm_90 and newer). A `TmaDescriptor<T>` kernel parameter receives a host
 * `TensorMap<T>` by value, as a 64-byte-aligned `__grid_constant__` that the copy engine reads
 * in place; its rank, box and swizzle are static (part of the specialization).
 *
 *   load:  one thread issues it; the box lands in shared memory and its bytes complete the
 *          transaction count of an mbarrier (see pipeline/mbarrier.hpp: arrive_expect_tx with
 *          `box_bytes()`, then wait on the barrier's phase);
 *   store: shared memory to global (`reduce_add`: adding to what is there); `tma_store_commit()` closes a bulk group and
 *          `tma_store_wait<n>()` waits until at most n groups are in flight. Shared-memory
 *          writes the store reads must be ordered by `fence_proxy_async_shared()` first.
 *
 * Coordinates are element indices of the tile's first element, in the tensor's mode order.
 */
#pragma once

#include <array>
#include <cstring>
#include <vector>

#include "cutejit/arch/sm100/tcgen05.hpp"  // tma_load_pair
#include "cutejit/arch/sm90.hpp"
#include "cutejit/core/tensor_map_shape.hpp"
#include "cutejit/tensor/pointer.hpp"

namespace cutejit {

template <Element T>
class TmaDescriptor {
 public:
  TmaDescriptor() = default;
  TmaDescriptor(detail::ValueId id, const TensorMapShape& shape) : id_(id), shape_(shape) {}

  int rank() const { return shape_.rank; }
  /// The box extent of mode `i` (a static number).
  int box(int i) const { return int(shape_.box[size_t(i)]); }
  /// The bytes one load brings in: what the mbarrier's transaction count must expect.
  int box_bytes() const {
    int n = int(sizeof(T));
    for (int i = 0; i < rank(); ++i) n *= box(i);
    return n;
  }
  TmaSwizzle swizzle() const { return shape_.swizzle; }

  /// Global -> shared: the box at `coords` into `dst`, completing on `bar`.
  void load(const Pointer<T>& dst, const Pointer<uint64_t>& bar, std::initializer_list<Operand<int32_t>> coords,
            detail::Where w = detail::Where::current()) const {
    auto c = innermost_first(coords, w);
    detail::tma_load(id_, dst.id(), bar.id(), std::span<const detail::ValueId>(c.data(), size_t(rank())), w);
  }
  /// The same with the coordinates in a vector (a TmaPartition's box), outermost mode first.
  void load(const Pointer<T>& dst, const Pointer<uint64_t>& bar, const std::vector<Int>& coords,
            detail::Where w = detail::Where::current()) const {
    auto c = innermost_first(coords, w);
    detail::tma_load(id_, dst.id(), bar.id(), std::span<const detail::ValueId>(c.data(), size_t(rank())), w);
  }
  /// Global -> shared of every CTA of the cluster whose bit is set in `cta_mask` (bit r: the
  /// CTA of rank r): the box lands at `dst`'s offset in each one's shared memory and completes
  /// on the mbarrier at `bar`'s offset in each. Each of those CTAs expects the box's bytes on
  /// its own barrier. Needs a cluster launch (sm_90 and newer).
  void load_multicast(const Pointer<T>& dst, const Pointer<uint64_t>& bar, std::initializer_list<Operand<int32_t>> coords,
                      const Operand<int32_t>& cta_mask, detail::Where w = detail::Where::current()) const {
    auto c = innermost_first(coords, w);
    detail::tma_load_multicast(id_, dst.id(), bar.id(), std::span<const detail::ValueId>(c.data(), size_t(rank())), cta_mask.id, w);
  }
  void load_multicast(const Pointer<T>& dst, const Pointer<uint64_t>& bar, const std::vector<Int>& coords,
                      const Operand<int32_t>& cta_mask, detail::Where w = detail::Where::current()) const {
    auto c = innermost_first(coords, w);
    detail::tma_load_multicast(id_, dst.id(), bar.id(), std::span<const detail::ValueId>(c.data(), size_t(rank())), cta_mask.id, w);
  }
  /// Global -> shared for a CTA pair's MMA (sm_100 family, cta_group::2): the box lands at
  /// `dst` in this CTA and completes on the mbarrier at `bar`'s offset in the pair's even CTA,
  /// which expects both CTAs' boxes. Needs the kernel's cluster_shape to pair CTAs.
  void load_pair(const Pointer<T>& dst, const Pointer<uint64_t>& bar, std::initializer_list<Operand<int32_t>> coords,
                 detail::Where w = detail::Where::current()) const {
    auto c = innermost_first(coords, w);
    detail::tma_load_pair(id_, dst.id(), bar.id(), std::span<const detail::ValueId>(c.data(), size_t(rank())), detail::ValueId{}, w);
  }
  void load_pair(const Pointer<T>& dst, const Pointer<uint64_t>& bar, const std::vector<Int>& coords,
                 detail::Where w = detail::Where::current()) const {
    auto c = innermost_first(coords, w);
    detail::tma_load_pair(id_, dst.id(), bar.id(), std::span<const detail::ValueId>(c.data(), size_t(rank())), detail::ValueId{}, w);
  }
  /// The same box multicast to every CTA of the cluster whose bit is set in `cta_mask`: it lands
  /// at `dst`'s offset in each and completes on the barrier at `bar`'s offset in each one's
  /// pair's even CTA (pairs that share a row of A or a column of B load it once between them).
  void load_pair_multicast(const Pointer<T>& dst, const Pointer<uint64_t>& bar, std::initializer_list<Operand<int32_t>> coords,
                           const Operand<int32_t>& cta_mask, detail::Where w = detail::Where::current()) const {
    auto c = innermost_first(coords, w);
    detail::tma_load_pair(id_, dst.id(), bar.id(), std::span<const detail::ValueId>(c.data(), size_t(rank())), cta_mask.id, w);
  }
  void load_pair_multicast(const Pointer<T>& dst, const Pointer<uint64_t>& bar, const std::vector<Int>& coords,
                           const Operand<int32_t>& cta_mask, detail::Where w = detail::Where::current()) const {
    auto c = innermost_first(coords, w);
    detail::tma_load_pair(id_, dst.id(), bar.id(), std::span<const detail::ValueId>(c.data(), size_t(rank())), cta_mask.id, w);
  }
  /// Shared -> global: `src` (one box) to the box at `coords`.
  void store(const Pointer<T>& src, std::initializer_list<Operand<int32_t>> coords,
             detail::Where w = detail::Where::current()) const {
    auto c = innermost_first(coords, w);
    detail::tma_store(id_, src.id(), std::span<const detail::ValueId>(c.data(), size_t(rank())), w);
  }
  /// Shared -> global, adding: each element of the box at `coords` becomes itself plus the
  /// tile's element, atomically per element (split-K partial sums, scatter-add). The bulk group
  /// is committed and waited on like a store's. f32, f16, bf16, int32, uint32 and uint64 only.
  void reduce_add(const Pointer<T>& src, std::initializer_list<Operand<int32_t>> coords,
                  detail::Where w = detail::Where::current()) const {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, f16> || std::is_same_v<T, bf16> || std::is_same_v<T, int32_t> ||
                      std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>,
                  "a TMA reduce-add works on f32, f16, bf16, int32, uint32 or uint64 elements");
    auto c = innermost_first(coords, w);
    detail::tma_reduce_add(id_, src.id(), std::span<const detail::ValueId>(c.data(), size_t(rank())), w);
  }
  /// Brings the descriptor into the cache ahead of the first copy.
  void prefetch(detail::Where w = detail::Where::current()) const { detail::tma_prefetch_descriptor(id_, w); }

 private:
  /// The coordinates (outermost first: an initializer list of Operands, or a partition's vector
  /// of Ints) in the instruction's order, innermost first.
  template <class Coords>
  std::array<detail::ValueId, 5> innermost_first(const Coords& coords, detail::Where w) const {
    if (int(coords.size()) != rank())
      detail::fail("a TMA copy of a rank-" + std::to_string(rank()) + " tensor map needs " + std::to_string(rank()) +
                       " coordinates, not " + std::to_string(coords.size()),
                   w);
    std::array<detail::ValueId, 5> c{};
    int i = rank();
    for (const auto& x : coords) c[size_t(--i)] = id_of(x);
    return c;
  }
  static detail::ValueId id_of(const Operand<int32_t>& x) { return x.id; }
  static detail::ValueId id_of(const Int& x) { return x.id(); }
  detail::ValueId id_;
  TensorMapShape shape_;
};

inline void tma_store_commit(detail::Where w = detail::Where::current()) { detail::tma_store_commit(w); }
/// Waits until at most `Pending` committed store groups are in flight; `ReadOnly`: only until
/// they have read their shared-memory sources (enough to reuse the buffer).
template <int Pending = 0, bool ReadOnly = false>
void tma_store_wait(detail::Where w = detail::Where::current()) {
  detail::tma_store_wait(Pending, ReadOnly, w);
}

}  // namespace cutejit
