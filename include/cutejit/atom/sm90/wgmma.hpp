/** \file
 * The sm_90a warpgroup MMA atom: D(64 x N, f32) += A(64 x K) * B(K x N) with A and B in
 * shared memory, K = 16 for bf16 or f16 and K = 32 for FP8 (f8e4m3, f8e5m2: one MMA reads 32
 * bytes of each row either way), issued by the 128 threads of a warpgroup (4 consecutive warps,
 * the first one's index a multiple of 4). `wgmma_fence()` before the first MMA that reads
 * accumulators written by ordinary instructions, `wgmma_commit_group()` after a batch,
 * `wgmma_wait_group(n)` before reusing the operands' shared memory, and `wgmma_wait_group(0)`
 * then `wgmma_fence_operands(acc)` before reading the accumulators.
 *
 * Operands are K-major tiles as TMA leaves them with a swizzle of S bytes: each row (an M row
 * of A, an N row of B, i.e. B stored N x K) holds S bytes of K, rows follow each other, and
 * the swizzle repeats every 8 rows (8*S bytes). `WgmmaOperand` builds the 64-bit descriptors;
 * a swizzle the tile does not have, or a tile not aligned to its swizzle pattern, is a trace-time
 * error instead of wrong numbers.
 *
 * Accumulator layout (PTX "wgmma D fragment", f32): thread t of the warpgroup holds N/2
 * values; value i is element
 *     row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2)
 *     col =  8 * (i / 4)  + 2 * (t % 4)  + (i % 2)
 * so values 2j and 2j+1 are neighbours in a row (one 2-element store each).
 */
#pragma once

#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/runtime/tensor_map.hpp"
#include "cutejit/tensor/pointer.hpp"

namespace cutejit {

/// The operand types wgmma reads from shared memory with f32 accumulation (K-major only).
template <class T>
inline constexpr bool is_wgmma_operand_v =
    std::is_same_v<T, bf16> || std::is_same_v<T, f16> || std::is_same_v<T, f8e4m3> || std::is_same_v<T, f8e5m2>;

/// A K-major shared-memory operand tile: rows of `swizzle` bytes of K.
template <Element T>
  requires is_wgmma_operand_v<T>
class WgmmaOperand {
 public:
  /// K elements per MMA: 32 bytes of a row, so 16 for 2-byte and 32 for 1-byte types.
  static constexpr int k_per_mma = 32 / int(sizeof(T));

  WgmmaOperand(const Pointer<T>& tile, TmaSwizzle swizzle, detail::Where w = detail::Where::current())
      : span_(int(swizzle)) {
    if (swizzle == TmaSwizzle::none)
      detail::fail("a wgmma operand tile needs a 32, 64 or 128-byte swizzle (rows of that many bytes of K, as a swizzled TMA "
                   "box leaves them); an unswizzled row-major tile is not in the core-matrix layout wgmma reads",
                   w);
    // Leading byte offset: unused for swizzled K-major tiles (one MMA's K fits in a row); stride
    // byte offset: from one group of 8 rows to the next.
    base_ = Value<uint64_t>(detail::wgmma_descriptor(tile.id(), span_, 16, 8 * int64_t(span_), w));
  }

  /// Elements of K one row holds, and how many MMAs (k16 or k32) cover them.
  int k_extent() const { return span_ / int(sizeof(T)); }
  int k_steps() const { return k_extent() / k_per_mma; }

  /// The descriptor of the `k_per_mma`-wide K slice `k_step` of the rows starting at `row` (a multiple
  /// of 8). Offsets go into the address field, which cannot overflow in 228 KB of shared memory.
  Value<uint64_t> slice(int row, int k_step, detail::Where w = detail::Where::current()) const {
    if (row % 8 != 0) detail::fail("a wgmma operand starts at a row that is a multiple of 8, not " + std::to_string(row), w);
    if (k_step < 0 || k_step >= k_steps())
      detail::fail("k step " + std::to_string(k_step) + " is outside this tile's " + std::to_string(k_steps()) + " steps", w);
    int64_t bytes = int64_t(row) * span_ + int64_t(k_step) * k_per_mma * int64_t(sizeof(T));
    if (bytes == 0) return base_;
    return base_ + Operand<uint64_t>(uint64_t(bytes >> 4), w);
  }

 private:
  int span_;
  Value<uint64_t> base_;
};

/// One warpgroup's 64 x N f32 accumulator tile, N/2 registers per thread (layout above).
template <int N>
  requires(N >= 8 && N <= 256 && N % 8 == 0)
class WgmmaAccumulator {
 public:
  static constexpr int size = N / 2;

  explicit WgmmaAccumulator(detail::Where w = detail::Where::current())
      : base_(detail::register_array(DType::f32, size, w)) {}

  detail::Ref<float> operator[](int i) const {
    if (i < 0 || i >= size) detail::index_out_of_range(i, size, detail::Where::current());
    return detail::Ref<float>(detail::offset_pointer(base_, Operand<int32_t>(i).id, DType::f32, detail::Where::current()));
  }
  void fill(float v) const {
    for (int i = 0; i < size; ++i) (*this)[i] = v;
  }
  /// The (row, col) of value i of warpgroup thread t: the layout above, on the host.
  static constexpr int row_of(int t, int i) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2); }
  static constexpr int col_of(int t, int i) { return 8 * (i / 4) + 2 * (t % 4) + (i % 2); }

  detail::ValueId registers() const { return base_; }

 private:
  detail::ValueId base_;
};

/// acc += A * B for one K slice: wgmma.mma_async.sync.aligned.m64n{N}k16.f32.{bf16,f16}.{same}, or
/// m64n{N}k32.f32.{e4m3,e5m2}.{same} for FP8 (both operands of one type here).
template <Element T, int N>
void wgmma(const WgmmaAccumulator<N>& acc, const Value<uint64_t>& a, const Value<uint64_t>& b,
           detail::Where w = detail::Where::current()) {
  static_assert(is_wgmma_operand_v<T>, "wgmma from shared memory: bf16, f16, f8e4m3 or f8e5m2 operands");
  detail::wgmma_mma(dtype_v<T>, N, a.id(), b.id(), acc.registers(), w);
}

/// Pins the accumulators after a `wgmma_wait_group`: code reading them (an epilogue) cannot be
/// scheduled above the wait (CUTLASS's warpgroup_fence_operand). Emits no instruction.
template <int N>
void wgmma_fence_operands(const WgmmaAccumulator<N>& acc, detail::Where w = detail::Where::current()) {
  detail::wgmma_fence_operands(acc.registers(), WgmmaAccumulator<N>::size, w);
}

}  // namespace cutejit
