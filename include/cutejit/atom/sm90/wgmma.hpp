/** \file
 * The sm_90a warpgroup MMA atom: D(64 x N, f32) += A(64 x K) * B(K x N) with A and B in
 * shared memory, K = 16 for bf16 or f16 and K = 32 for FP8 (f8e4m3, f8e5m2: one MMA reads 32
 * bytes of each row either way), issued by the 128 threads of a warpgroup (4 consecutive warps,
 * the first one's index a multiple of 4). `wgmma_fence()` before the first MMA that reads
 * accumulators written by ordinary instructions, `wgmma_commit_group()` after a batch,
 * `wgmma_wait_group(n)` before reusing the operands' shared memory, and `wgmma_wait_group(0)`
 * then `wgmma_fence_operands(acc)` before reading the accumulators.
 *
 * Operands are tiles as a TMA box with a swizzle of S bytes leaves them, in one of two layouts:
 *  - K-major (A stored M x K, B stored N x K): each row (an M row of A, an N row of B) holds S
 *    bytes of K, rows follow each other, and the swizzle repeats every 8 rows (8*S bytes);
 *  - MN-major (A stored K x M, B stored K x N; bf16 and f16 only): the tile is a sequence of
 *    chunks, each S bytes of M (or N) wide and `k_rows` rows of K long (one TMA box of a
 *    K x MN row-major tensor), the swizzle again repeating every 8 rows. The descriptor's
 *    stride byte offset is the step between groups of 8 K rows (8*S), its leading byte offset
 *    the step between chunks (k_rows*S), and the instruction's transpose bit is set.
 * `WgmmaOperand` builds the 64-bit descriptors and `slice` tags each with its layout, so
 * `wgmma` sets the transpose bits that match; a swizzle the tile does not have, a tile not
 * aligned to its swizzle pattern, or an MN-major FP8 operand is a trace-time error instead of
 * wrong numbers.
 *
 * Accumulator layout (PTX "wgmma D fragment", f32): thread t of the warpgroup holds N/2
 * values; value i is element
 *     row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2)
 *     col =  8 * (i / 4)  + 2 * (t % 4)  + (i % 2)
 * so values 2j and 2j+1 are neighbours in a row (one 2-element store each).
 */
#pragma once

#include "cutejit/atom/sm90/tma.hpp"
#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/runtime/tensor_map.hpp"
#include "cutejit/tensor/pointer.hpp"
#include "cutejit/tensor/tensor.hpp"

namespace cutejit {

/// The operand types wgmma reads from shared memory with f32 accumulation.
template <class T>
inline constexpr bool is_wgmma_operand_v =
    std::is_same_v<T, bf16> || std::is_same_v<T, f16> || std::is_same_v<T, f8e4m3> || std::is_same_v<T, f8e5m2>;

/// Which dimension of an operand tile is contiguous in shared memory: K, or M (of A) / N (of B).
enum class WgmmaMajor { k, mn };

/// The descriptor of one MMA's operand, tagged with its tile's layout so that `wgmma` sets the
/// transpose bit the descriptor needs (a K-major descriptor read as MN-major is wrong numbers).
template <Element T>
struct WgmmaDescriptor {
  Value<uint64_t> bits;
  WgmmaMajor major = WgmmaMajor::k;
};

/// A shared-memory operand tile with a swizzle: K-major (rows of `swizzle` bytes of K) or
/// MN-major (chunks of `swizzle` bytes of M or N, `k_rows` rows of K each); see above.
template <Element T>
  requires is_wgmma_operand_v<T>
class WgmmaOperand {
 public:
  /// K elements per MMA: 32 bytes of a row, so 16 for 2-byte and 32 for 1-byte types.
  static constexpr int k_per_mma = 32 / int(sizeof(T));

  /// A K-major tile.
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

  /// An MN-major tile: chunks of `swizzle` bytes of M (or N) side by side in memory, each
  /// `k_rows` rows of K (a multiple of k_per_mma). bf16 and f16 only.
  static WgmmaOperand mn_major(const Pointer<T>& tile, TmaSwizzle swizzle, int k_rows, detail::Where w = detail::Where::current()) {
    if constexpr (sizeof(T) == 1)
      detail::fail("an MN-major (transposed) wgmma operand must be bf16 or f16; wgmma reads " + std::string(name(dtype_v<T>)) +
                       " operands K-major only (store this operand with K contiguous)",
                   w);
    if (swizzle == TmaSwizzle::none)
      detail::fail("an MN-major wgmma operand tile needs a 32, 64 or 128-byte swizzle (rows of that many bytes of M or N, as a "
                   "swizzled TMA box of a K x MN row-major tensor leaves them); an unswizzled tile is not in the layout wgmma "
                   "reads",
                   w);
    if (k_rows <= 0 || k_rows % k_per_mma != 0)
      detail::fail("an MN-major wgmma operand's chunks hold a positive multiple of " + std::to_string(k_per_mma) +
                       " rows of K (one MMA's K), not " + std::to_string(k_rows),
                   w);
    return WgmmaOperand(tile, int(swizzle), k_rows, w);
  }

  /// The MN-major tile a TMA load with `map` leaves at `tile`, one box per chunk: the box's
  /// rows are K, and its contiguous mode must fill the swizzle span exactly (a narrower row is
  /// not the chunk layout the descriptor describes).
  static WgmmaOperand mn_major(const Pointer<T>& tile, const TmaDescriptor<T>& map, detail::Where w = detail::Where::current()) {
    if (map.rank() != 2)
      detail::fail("an MN-major wgmma operand is loaded by a rank-2 tensor map (K rows of M or N), not rank " +
                       std::to_string(map.rank()),
                   w);
    int row_bytes = map.box(1) * int(sizeof(T));
    if (map.swizzle() != TmaSwizzle::none && row_bytes != int(map.swizzle()))
      detail::fail("the tensor map's box rows are " + std::to_string(row_bytes) + " bytes but its swizzle is " +
                       std::to_string(int(map.swizzle())) +
                       " bytes; an MN-major wgmma operand needs box rows of exactly one swizzle span",
                   w);
    return mn_major(tile, map.swizzle(), map.box(0), w);
  }

  WgmmaMajor major() const { return major_; }
  /// Elements of K the tile holds (a K-major row's, or an MN-major chunk's rows), and how many
  /// MMAs (k16 or k32) cover them.
  int k_extent() const { return major_ == WgmmaMajor::k ? span_ / int(sizeof(T)) : k_rows_; }
  int k_steps() const { return k_extent() / k_per_mma; }
  /// M or N elements of one MN-major chunk (one swizzle span).
  int chunk_width() const { return span_ / int(sizeof(T)); }

  /// The descriptor of the `k_per_mma`-wide K slice `k_step` of the rows (K-major) or chunks
  /// (MN-major) starting at M or N index `mn`: a multiple of 8 for K-major tiles, of the chunk
  /// width for MN-major ones. Offsets go into the address field, which cannot overflow in 228 KB
  /// of shared memory; each keeps the swizzle pattern's phase (an MN-major K step is 16 or more
  /// whole rows).
  WgmmaDescriptor<T> slice(int mn, int k_step, detail::Where w = detail::Where::current()) const {
    if (k_step < 0 || k_step >= k_steps())
      detail::fail("k step " + std::to_string(k_step) + " is outside this tile's " + std::to_string(k_steps()) + " steps", w);
    int64_t bytes = 0;
    if (major_ == WgmmaMajor::k) {
      if (mn % 8 != 0) detail::fail("a wgmma operand starts at a row that is a multiple of 8, not " + std::to_string(mn), w);
      bytes = int64_t(mn) * span_ + int64_t(k_step) * k_per_mma * int64_t(sizeof(T));
    } else {
      if (mn < 0 || mn % chunk_width() != 0)
        detail::fail("an MN-major wgmma operand starts at an M or N index that is a multiple of its chunk width " +
                         std::to_string(chunk_width()) + " (one " + std::to_string(span_) + "-byte swizzle span), not " +
                         std::to_string(mn),
                     w);
      bytes = int64_t(mn / chunk_width()) * k_rows_ * span_ + int64_t(k_step) * k_per_mma * span_;
    }
    if (bytes == 0) return {base_, major_};
    return {base_ + Operand<uint64_t>(uint64_t(bytes >> 4), w), major_};
  }

 private:
  WgmmaOperand(const Pointer<T>& tile, int span, int k_rows, detail::Where w)
      : span_(span), k_rows_(k_rows), major_(WgmmaMajor::mn) {
    // Stride byte offset: from one group of 8 K rows to the next; leading byte offset: from one
    // chunk of M or N to the next.
    base_ = Value<uint64_t>(detail::wgmma_descriptor(tile.id(), span_, int64_t(k_rows) * span_, 8 * int64_t(span_), w));
  }

  int span_;
  int k_rows_ = 0;
  WgmmaMajor major_ = WgmmaMajor::k;
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
/// m64n{N}k32.f32.{e4m3,e5m2}.{same} for FP8 (both operands of one type here), with the
/// transpose bits of the operands' layouts (`WgmmaOperand::slice`).
template <Element T, int N>
void wgmma(const WgmmaAccumulator<N>& acc, const WgmmaDescriptor<T>& a, const WgmmaDescriptor<T>& b,
           detail::Where w = detail::Where::current()) {
  static_assert(is_wgmma_operand_v<T>, "wgmma from shared memory: bf16, f16, f8e4m3 or f8e5m2 operands");
  detail::wgmma_mma(dtype_v<T>, N, a.bits.id(), b.bits.id(), acc.registers(), a.major == WgmmaMajor::mn,
                    b.major == WgmmaMajor::mn, w);
}

/// The same from raw 64-bit descriptors, which carry no layout: both operands K-major.
template <Element T, int N>
void wgmma(const WgmmaAccumulator<N>& acc, const Value<uint64_t>& a, const Value<uint64_t>& b,
           detail::Where w = detail::Where::current()) {
  static_assert(is_wgmma_operand_v<T>, "wgmma from shared memory: bf16, f16, f8e4m3 or f8e5m2 operands");
  detail::wgmma_mma(dtype_v<T>, N, a.id(), b.id(), acc.registers(), false, false, w);
}

/// Two 16-bit values in one 32-bit register, `lo` in the low half: the form MMA fragments,
/// stmatrix and ldmatrix keep neighbouring columns in.
template <Element T>
  requires(sizeof(T) == 2)
Value<uint32_t> pack_pair(const Value<T>& lo, const Value<T>& hi, detail::Where w = detail::Where::current()) {
  return Value<uint32_t>(detail::pack_pair(lo.id(), hi.id(), w));
}

/// A warpgroup's 64 x 16 slice of A in registers, for wgmma with A from registers (bf16, f16):
/// four 32-bit registers per thread, each holding two neighbouring K values of one row (the
/// lower column in the low half). Thread t of the warpgroup holds rows
///     16 * (t / 32) + (t % 32) / 4  (registers 0 and 2)  and that + 8  (registers 1 and 3),
/// columns 2 * (t % 4) + {0, 1} (registers 0 and 1) and those + 8 (registers 2 and 3).
template <Element T>
  requires(std::is_same_v<T, bf16> || std::is_same_v<T, f16>)
struct WgmmaFragmentA {
  std::array<Value<uint32_t>, 4> registers;

  static constexpr int row_of(int t, int reg) { return 16 * (t / 32) + (t % 32) / 4 + 8 * (reg % 2); }
  static constexpr int col_of(int t, int reg) { return 2 * (t % 4) + 8 * (reg / 2); }  ///< and the next column

  /// Warpgroup thread `t`'s part of the 64 x 16 slice of `a` (rows and K, K contiguous) at
  /// (`row0`, `k0`).
  static WgmmaFragmentA load(const Tensor<T>& a, const Int& row0, const Int& k0, const Int& t,
                             detail::Where w = detail::Where::current()) {
    WgmmaFragmentA f;
    Int row = row0 + (t / 32) * 16 + (t % 32) / 4, col = k0 + (t % 4) * 2;
    for (int reg = 0; reg < 4; ++reg) {
      Pointer<T> p = a.pointer_at({row + 8 * (reg % 2), col + 8 * (reg / 2)});
      f.registers[size_t(reg)] = pack_pair(Value<T>(p[0]), Value<T>(p[1]), w);
    }
    return f;
  }
};

/// acc += A * B for one k16 slice, A from registers and B from shared memory:
/// wgmma.mma_async.sync.aligned.m64n{N}k16.f32.{bf16,f16}.{same} with a register A.
template <Element T, int N>
void wgmma(const WgmmaAccumulator<N>& acc, const WgmmaFragmentA<T>& a, const WgmmaDescriptor<T>& b,
           detail::Where w = detail::Where::current()) {
  std::array<detail::ValueId, 4> regs;
  for (int i = 0; i < 4; ++i) regs[size_t(i)] = a.registers[size_t(i)].id();
  detail::wgmma_mma_register_a(dtype_v<T>, N, regs, b.bits.id(), acc.registers(), b.major == WgmmaMajor::mn, w);
}

/// Pins the accumulators after a `wgmma_wait_group`: code reading them (an epilogue) cannot be
/// scheduled above the wait (CUTLASS's warpgroup_fence_operand). Emits no instruction.
template <int N>
void wgmma_fence_operands(const WgmmaAccumulator<N>& acc, detail::Where w = detail::Where::current()) {
  detail::wgmma_fence_operands(acc.registers(), WgmmaAccumulator<N>::size, w);
}

}  // namespace cutejit
