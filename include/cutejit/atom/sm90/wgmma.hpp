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
 * The atoms (CuTe's SM90_64xNx16_F32BF16BF16_SS and kin) carry the thread-value layouts of the
 * PTX ISA's wgmma fragments, so `make_tiled_mma` tiles them over warpgroups and hands out
 * partitions as it does for mma.sync: `partition_fragment_C` is a thread's accumulators (a
 * register tensor, ((2,2,N/8),RestM,RestN)), `partition_C` of a tile or of an identity tensor
 * where each value lives. In CuTe's notation (index m + 64 n):
 *     C:        ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))
 *     A, B (shared memory, every thread sees the tile):  (128,(64,K)):(0,(1,64)), (128,(N,K)):(0,(1,N))
 *     A in registers (bf16, f16; 64 x 16):  ((4,8,4),(2,2,2)):((128,1,16),(64,8,512))
 * `gemm(tiled, acc, a, b)` issues one wgmma per K step of the operands for every block of the
 * fragment.
 */
#pragma once

#include "cutejit/atom/sm90/tma.hpp"
#include "cutejit/atom/tiled_mma.hpp"
#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/core/tensor_map_shape.hpp"
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

namespace detail {
/// The thread-value layouts of the header's comment (src/atom/wgmma_layouts.cpp).
Layout wgmma_layout_c(int n);
Layout wgmma_layout_shared(int mn, int k);
Layout wgmma_layout_register_a();
/// A wgmma's accumulators: N / 2 f32 registers and N.
struct WgmmaAccumulators {
  ValueId registers;
  int n;
};
/// Checks that `acc` is a register tensor of N / 2 f32 accumulators in register order (static,
/// compact, stride 1) for an N of 8 to 256; `what` names the call for the error.
WgmmaAccumulators wgmma_accumulators(const Layout& acc, const Pointer<float>& data, const char* what, Where w);
}  // namespace detail

/// The wgmma atom with A and B from shared memory (descriptors): D(64 x N, f32) += A * B,
/// K = 32 bytes of each operand row. `AMajor` / `BMajor`: the operands' layouts in shared
/// memory (MN-major for bf16 and f16 only).
template <Element T, int N, WgmmaMajor AMajor = WgmmaMajor::k, WgmmaMajor BMajor = WgmmaMajor::k>
  requires(is_wgmma_operand_v<T> && N >= 8 && N <= 256 && N % 8 == 0)
struct WgmmaSS {
  static_assert(sizeof(T) == 2 || (AMajor == WgmmaMajor::k && BMajor == WgmmaMajor::k),
                "wgmma reads FP8 operands K-major only: A stored M x K and B stored N x K");
  using ElementA = T;
  using ElementB = T;
  using ElementC = float;
  using ElementD = float;
  static constexpr int m = 64, n = N, k = 32 / int(sizeof(T)), threads = 128;
  static constexpr WgmmaMajor a_major = AMajor, b_major = BMajor;

  static std::string name() {
    auto major = [](const char* x, WgmmaMajor v) { return v == WgmmaMajor::mn ? std::string(" ") + x + " MN-major" : std::string(); };
    std::string t(cutejit::name(dtype_v<T>));
    return "wgmma.m64n" + std::to_string(N) + "k" + std::to_string(k) + ".f32." + t + "." + t + major("A", AMajor) + major("B", BMajor);
  }
  static Layout layout_a() { return detail::wgmma_layout_shared(64, k); }
  static Layout layout_b() { return detail::wgmma_layout_shared(N, k); }
  static Layout layout_c() { return detail::wgmma_layout_c(N); }
};

/// The wgmma atom with A from registers (bf16, f16: a 64 x 16 slice, four 32-bit registers per
/// thread) and B from shared memory.
template <Element T, int N, WgmmaMajor BMajor = WgmmaMajor::k>
  requires((std::is_same_v<T, bf16> || std::is_same_v<T, f16>) && N >= 8 && N <= 256 && N % 8 == 0)
struct WgmmaRS {
  using ElementA = T;
  using ElementB = T;
  using ElementC = float;
  using ElementD = float;
  static constexpr int m = 64, n = N, k = 16, threads = 128;
  static constexpr WgmmaMajor b_major = BMajor;

  static std::string name() {
    std::string t(cutejit::name(dtype_v<T>));
    return "wgmma.m64n" + std::to_string(N) + "k16.f32." + t + "." + t + " (A in registers)" +
           (BMajor == WgmmaMajor::mn ? " B MN-major" : "");
  }
  static Layout layout_a() { return detail::wgmma_layout_register_a(); }
  static Layout layout_b() { return detail::wgmma_layout_shared(N, 16); }
  static Layout layout_c() { return detail::wgmma_layout_c(N); }
};

// CuTe's names (M x N x K, D and operand types; SS: both operands from shared memory).
template <int N, WgmmaMajor A = WgmmaMajor::k, WgmmaMajor B = WgmmaMajor::k>
using SM90_64xNx16_F32BF16BF16_SS = WgmmaSS<bf16, N, A, B>;
template <int N, WgmmaMajor A = WgmmaMajor::k, WgmmaMajor B = WgmmaMajor::k>
using SM90_64xNx16_F32F16F16_SS = WgmmaSS<f16, N, A, B>;
template <int N>
using SM90_64xNx32_F32E4M3E4M3_SS_TN = WgmmaSS<f8e4m3, N>;
template <int N>
using SM90_64xNx32_F32E5M2E5M2_SS_TN = WgmmaSS<f8e5m2, N>;
template <int N, WgmmaMajor B = WgmmaMajor::k>
using SM90_64xNx16_F32BF16BF16_RS = WgmmaRS<bf16, N, B>;
template <int N, WgmmaMajor B = WgmmaMajor::k>
using SM90_64xNx16_F32F16F16_RS = WgmmaRS<f16, N, B>;

/// acc += A * B, one wgmma.mma_async.sync.aligned.m64n{N}k{16,32}.f32 on a register tensor of
/// N/2 accumulators (one atom's block of a partition_fragment_C, or the whole of a (V,1,1) one)
/// and one K slice of each operand (`WgmmaOperand::slice`), with the transpose bits of their
/// layouts.
template <Element T>
void wgmma(const Tensor<float>& acc, const WgmmaDescriptor<T>& a, const WgmmaDescriptor<T>& b,
           detail::Where w = detail::Where::current()) {
  static_assert(is_wgmma_operand_v<T>, "wgmma from shared memory: bf16, f16, f8e4m3 or f8e5m2 operands");
  detail::WgmmaAccumulators d = detail::wgmma_accumulators(acc.layout(), acc.data(), "wgmma", w);
  detail::wgmma_mma(dtype_v<T>, d.n, a.bits.id(), b.bits.id(), d.registers, a.major == WgmmaMajor::mn, b.major == WgmmaMajor::mn, w);
}

/// The same from raw 64-bit descriptors, which carry no layout: both operands K-major.
template <Element T>
void wgmma(const Tensor<float>& acc, const Value<uint64_t>& a, const Value<uint64_t>& b, detail::Where w = detail::Where::current()) {
  static_assert(is_wgmma_operand_v<T>, "wgmma from shared memory: bf16, f16, f8e4m3 or f8e5m2 operands");
  detail::WgmmaAccumulators d = detail::wgmma_accumulators(acc.layout(), acc.data(), "wgmma", w);
  detail::wgmma_mma(dtype_v<T>, d.n, a.id(), b.id(), d.registers, false, false, w);
}

namespace detail {
/// Atoms of a tiled MMA along M (0) or N (1).
inline int64_t tiled_atoms(const TiledMmaShape& s, int d) { return size(mode(s.atom_layout, d)).value(); }
/// Checks that a (V, RestM, RestN) accumulator fragment has the atom's V values.
inline void check_wgmma_fragment(const TiledMmaShape& s, const Layout& acc, Where w) {
  const int64_t values = size(mode(s.layout_c, 1)).value();
  if (rank(acc) != 3 || !is_static(acc) || size(mode(acc, 0)).value() != values)
    fail("gemm's accumulator fragment " + to_string(acc) + " is not a (V, RestM, RestN) register tile with the " + std::to_string(values) +
             " values per thread of " + s.atom_name + "; make it with partition_fragment_C",
         w);
}
}  // namespace detail

/// acc += A * B over a tiled wgmma: for each K step of the operands, one wgmma per (RestM,
/// RestN) block of the thread's fragment. `a` holds this thread's warpgroup's rows (block m at
/// row 64 WM m, WM the atoms along M) and `b` its columns (block n at N WN n), each in the
/// layout the atom names.
template <Element T, int N, WgmmaMajor AMajor, WgmmaMajor BMajor>
void gemm(const TiledMma<WgmmaSS<T, N, AMajor, BMajor>>& tiled, const Tensor<float>& acc, const WgmmaOperand<T>& a,
          const WgmmaOperand<T>& b, detail::Where w = detail::Where::current()) {
  const detail::TiledMmaShape& s = tiled.shape();
  detail::check_wgmma_fragment(s, acc.layout(), w);
  if (a.major() != AMajor || b.major() != BMajor)
    detail::fail("gemm's operands are " + std::string(a.major() == WgmmaMajor::k ? "K" : "MN") + "-major (A) and " +
                     (b.major() == WgmmaMajor::k ? "K" : "MN") + "-major (B), but the atom is " + s.atom_name +
                     "; name the operands' layouts in the atom",
                 w);
  if (a.k_steps() != b.k_steps())
    detail::fail("gemm's operands hold different K: " + std::to_string(a.k_extent()) + " (A) and " + std::to_string(b.k_extent()) + " (B)", w);
  const int64_t rest_m = size(mode(acc.layout(), 1)).value(), rest_n = size(mode(acc.layout(), 2)).value();
  const int64_t wm = detail::tiled_atoms(s, 0), wn = detail::tiled_atoms(s, 1);
  for (int k = 0; k < a.k_steps(); ++k)
    for (int64_t m = 0; m < rest_m; ++m)
      for (int64_t n = 0; n < rest_n; ++n)
        wgmma(acc(_, m, n), a.slice(int(64 * wm * m), k, w), b.slice(int(N * wn * n), k, w), w);
}

/// Waits for nothing; pins the accumulators after a `wgmma_wait_group`, so that code reading
/// them (an epilogue) cannot be scheduled above the wait (CUTLASS's warpgroup_fence_operand).
/// Emits no instruction.
inline void wgmma_fence_operands(const Tensor<float>& acc, detail::Where w = detail::Where::current()) {
  detail::WgmmaAccumulators d = detail::wgmma_accumulators(acc.layout(), acc.data(), "wgmma_fence_operands", w);
  detail::wgmma_fence_operands(d.registers, d.n / 2, w);
}

/// Two 16-bit values in one 32-bit register, `lo` in the low half: the form MMA fragments,
/// stmatrix and ldmatrix keep neighbouring columns in.
template <Element T>
  requires(sizeof(T) == 2)
Value<uint32_t> pack_pair(const Value<T>& lo, const Value<T>& hi, detail::Where w = detail::Where::current()) {
  return Value<uint32_t>(detail::pack_pair(lo.id(), hi.id(), w));
}

/// acc += A * B for one k16 slice, A from registers (a thread's 8 values of a 64 x 16 slice,
/// in WgmmaRS's layout: `partition_fragment_A(...)(_, m, k)`) and B from shared memory:
/// wgmma.mma_async.sync.aligned.m64n{N}k16.f32.{bf16,f16}.{same} with a register A.
template <Element T>
  requires(std::is_same_v<T, bf16> || std::is_same_v<T, f16>)
void wgmma(const Tensor<float>& acc, const Tensor<T>& a, const WgmmaDescriptor<T>& b, detail::Where w = detail::Where::current()) {
  detail::WgmmaAccumulators d = detail::wgmma_accumulators(acc.layout(), acc.data(), "wgmma", w);
  if (!(size(a.layout()) == Integer(8)))
    detail::fail("wgmma's A from registers is a thread's 8 values of a 64 x 16 slice, not " + to_string(a.layout()), w);
  std::array<detail::ValueId, 4> pairs;
  for (int r = 0; r < 4; ++r)
    pairs[size_t(r)] = pack_pair(a(IntTuple(2 * r), w).read(w), a(IntTuple(2 * r + 1), w).read(w), w).id();
  detail::wgmma_mma_register_a(dtype_v<T>, d.n, pairs, b.bits.id(), d.registers, b.major == WgmmaMajor::mn, w);
}

/// acc += A * B over a tiled wgmma with A in registers: `a` is the thread's
/// partition_fragment_A (V, RestM, RestK), one k16 slice per RestK, and `b` holds its
/// warpgroup's columns (block n at N WN n) with as many K steps.
template <Element T, int N, WgmmaMajor BMajor>
void gemm(const TiledMma<WgmmaRS<T, N, BMajor>>& tiled, const Tensor<float>& acc, const Tensor<T>& a, const WgmmaOperand<T>& b,
          detail::Where w = detail::Where::current()) {
  const detail::TiledMmaShape& s = tiled.shape();
  detail::check_wgmma_fragment(s, acc.layout(), w);
  if (b.major() != BMajor)
    detail::fail("gemm's B operand is " + std::string(b.major() == WgmmaMajor::k ? "K" : "MN") + "-major, but the atom is " + s.atom_name, w);
  if (rank(a) != 3 || !is_static(a.layout()) || size(mode(a.layout(), 0)).value() != 8 ||
      size(mode(a.layout(), 1)) != size(mode(acc.layout(), 1)) || size(mode(a.layout(), 2)).value() != b.k_steps())
    detail::fail("gemm's A fragment " + to_string(a.layout()) + " is not the (8, RestM, RestK) partition_fragment_A of " + s.atom_name +
                     " for the accumulator " + to_string(acc.layout()) + " and B's " + std::to_string(b.k_steps()) + " K steps",
                 w);
  const int64_t rest_m = size(mode(acc.layout(), 1)).value(), rest_n = size(mode(acc.layout(), 2)).value();
  const int64_t wn = detail::tiled_atoms(s, 1);
  for (int k = 0; k < b.k_steps(); ++k)
    for (int64_t m = 0; m < rest_m; ++m)
      for (int64_t n = 0; n < rest_n; ++n) wgmma(acc(_, m, n), a(_, m, k), b.slice(int(N * wn * n), k, w), w);
}

}  // namespace cutejit
