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
 * Kernels hold operands as shared-memory tensors in these layouts (`wgmma_tile_layout`, the
 * layout TMA boxes leave) and call `gemm(tiled, acc, sA, sB)`: `WgmmaOperand` derives the
 * 64-bit descriptors from the tensor's layout and swizzle, checked element by element by the
 * descriptor model (atom/smem_operand.hpp: Hopper's canonical layouts are sm_100's), and
 * `slice` tags each with its major-ness, so `wgmma` sets the transpose bits that match. A
 * layout the hardware cannot read, a tile off its swizzle pattern, or an MN-major FP8 operand
 * is a trace-time error instead of wrong numbers.
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

#include <bit>

#include "cutejit/atom/sm90/tma.hpp"
#include "cutejit/atom/smem_operand.hpp"
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

/// The shared-memory layout of an (MN, K) operand tile that TMA boxes with a `swizzle`-byte
/// swizzle fill, as wgmma reads it (CuTe's GMMA::Layout_{K,MN}_SW{32,64,128}_Atom tiled to the
/// shape): K-major, rows of one swizzle span of K, the spans of a wider K one after another
/// (each `mn` rows long, one box each); MN-major, chunks of one span of M or N side by side
/// (one box each), each `k` rows of K.
template <Element T>
ComposedLayout wgmma_tile_layout(WgmmaMajor major, TmaSwizzle swizzle, int mn, int k, detail::Where w = detail::Where::current()) {
  const int span = int(swizzle) / int(sizeof(T));
  if (swizzle == TmaSwizzle::none || (major == WgmmaMajor::k ? k : mn) % span != 0)
    detail::fail("a wgmma operand tile of " + std::to_string(mn) + " x " + std::to_string(k) + " is a whole number of " +
                     std::to_string(int(swizzle)) + "-byte swizzle spans of its contiguous dimension (" + std::to_string(span) +
                     " elements), with a 32, 64 or 128-byte swizzle",
                 w);
  const Swizzle sw(std::countr_zero(unsigned(swizzle)) - 4, 4 - std::countr_zero(unsigned(sizeof(T))), 3);
  if (major == WgmmaMajor::k) {
    if (k == span) return composition(sw, Layout(IntTuple{mn, k}, IntTuple{k, 1}));
    return composition(sw, Layout(IntTuple{mn, IntTuple{span, k / span}}, IntTuple{span, IntTuple{1, mn * span}}));
  }
  if (mn == span) return composition(sw, Layout(IntTuple{mn, k}, IntTuple{1, span}));
  return composition(sw, Layout(IntTuple{IntTuple{span, mn / span}, k}, IntTuple{IntTuple{1, span * k}, span}));
}

/// A shared-memory operand tile as wgmma reads it, with its descriptors: K-major (rows of
/// `swizzle` bytes of K) or MN-major (chunks of `swizzle` bytes of M or N, `k_rows` rows of K
/// each); see above. Made from a swizzled tensor, which gives its layout (the way kernels make
/// it), or from a pointer and the swizzle a TMA box left there.
template <Element T>
  requires is_wgmma_operand_v<T>
class WgmmaOperand {
 public:
  /// K elements per MMA: 32 bytes of a row, so 16 for 2-byte and 32 for 1-byte types.
  static constexpr int k_per_mma = 32 / int(sizeof(T));

  /// A tile given as a shared-memory tensor of static shape (MN, K): its layout and swizzle
  /// (e.g. a TMA box's, Sw<3,3,3> o (rows,64):(64,1) for 128-byte bf16 rows) give the
  /// descriptor, checked by the descriptor model at every element each K step reads, and its
  /// major-ness. `which` ("A", "B") names it in errors.
  WgmmaOperand(const Tensor<T>& tile, const char* which, detail::Where w = detail::Where::current()) {
    const std::string operand = std::string("wgmma's ") + which;
    if (tile.data().space() != Space::shared) detail::fail(operand + " must be in shared memory", w);
    if (!is_static(tile.layout()) || !tile.swizzle_base().is_static())
      detail::fail(operand + " needs a tile of static layout (its descriptor is fixed at trace time), not " + to_string(tile.layout()), w);
    const Layout& l = tile.layout();
    detail::SmemOperandPlan plan = detail::plan_smem_operand(l, tile.swizzle(), tile.swizzle_base().value(), int(sizeof(T)),
                                                             int(size(mode(l, 0)).value()), k_per_mma, operand, w);
    if constexpr (sizeof(T) == 1)
      if (plan.major == sm100::Major::mn)
        detail::fail(operand + " is MN-major (transposed), which wgmma reads for bf16 and f16 only; store " +
                         std::string(name(dtype_v<T>)) + " operands with K contiguous",
                     w);
    major_ = plan.major == sm100::Major::k ? WgmmaMajor::k : WgmmaMajor::mn;
    span_ = sm100::swizzle_bytes(plan.fields.swizzle);
    k_extent_ = int(size(mode(l, 1)).value());
    step_bytes_.assign(plan.step_bytes.begin(), plan.step_bytes.end());
    layout_ = l;
    base_ = Value<uint64_t>(detail::wgmma_descriptor(tile.data().id(), span_, plan.fields.leading_byte_offset,
                                                     plan.fields.stride_byte_offset, w));
    alignment_ = plan.alignment;
  }

  /// A K-major tile at `tile`, rows of `swizzle` bytes of K.
  WgmmaOperand(const Pointer<T>& tile, TmaSwizzle swizzle, detail::Where w = detail::Where::current()) : span_(int(swizzle)) {
    if (swizzle == TmaSwizzle::none)
      detail::fail("a wgmma operand tile needs a 32, 64 or 128-byte swizzle (rows of that many bytes of K, as a swizzled TMA "
                   "box leaves them); an unswizzled row-major tile is not in the core-matrix layout wgmma reads",
                   w);
    k_extent_ = span_ / int(sizeof(T));
    for (int s = 0; s < k_extent_ / k_per_mma; ++s) step_bytes_.push_back(uint32_t(32 * s));
    // Leading byte offset: unused for swizzled K-major tiles (one MMA's K fits in a row); stride
    // byte offset: from one group of 8 rows to the next.
    base_ = Value<uint64_t>(detail::wgmma_descriptor(tile.id(), span_, 16, 8 * int64_t(span_), w));
  }

  /// An MN-major tile at `tile`: chunks of `swizzle` bytes of M (or N) side by side in memory,
  /// each `k_rows` rows of K (a multiple of k_per_mma). bf16 and f16 only.
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
  /// Elements of K the tile holds, and how many MMAs (k16 or k32) cover them.
  int k_extent() const { return k_extent_; }
  int k_steps() const { return int(step_bytes_.size()); }

  /// The descriptor of the `k_per_mma`-wide K slice `k_step` of the rows (K-major) or chunks
  /// (MN-major) starting at M or N index `mn`, which must keep the swizzle pattern's phase: a
  /// multiple of 8 rows for K-major tiles, of the chunk width for MN-major ones. Offsets go into
  /// the address field, which cannot overflow in 228 KB of shared memory.
  WgmmaDescriptor<T> slice(int mn, int k_step, detail::Where w = detail::Where::current()) const {
    if (k_step < 0 || k_step >= k_steps())
      detail::fail("k step " + std::to_string(k_step) + " is outside this tile's " + std::to_string(k_steps()) + " steps", w);
    const int64_t bytes = mn_bytes(mn, w) + step_bytes_[size_t(k_step)];
    if (bytes == 0) return {base_, major_};
    return {base_ + Operand<uint64_t>(uint64_t(bytes >> 4), w), major_};
  }

 private:
  WgmmaOperand(const Pointer<T>& tile, int span, int k_rows, detail::Where w)
      : span_(span), k_extent_(k_rows), major_(WgmmaMajor::mn) {
    for (int s = 0; s < k_rows / k_per_mma; ++s) step_bytes_.push_back(uint32_t(s * k_per_mma * span));
    // Stride byte offset: from one group of 8 K rows to the next; leading byte offset: from one
    // chunk of M or N to the next.
    base_ = Value<uint64_t>(detail::wgmma_descriptor(tile.id(), span_, int64_t(k_rows) * span_, 8 * int64_t(span_), w));
  }

  /// Bytes from the tile's start to row (K-major) or column (MN-major) `mn`.
  int64_t mn_bytes(int mn, detail::Where w) const {
    const int chunk = span_ / int(sizeof(T));
    if (layout_) {  // the tensor's layout says where, and must keep the pattern's phase
      const int64_t rows = size(mode(*layout_, 0)).value();
      const int64_t bytes = int64_t(sizeof(T)) * (layout_->evaluate(IntTuple{int64_t(mn), int64_t(0)}).value() -
                                                  layout_->evaluate(IntTuple{int64_t(0), int64_t(0)}).value());
      if (mn < 0 || mn >= rows || bytes % alignment_ != 0)
        detail::fail("a wgmma operand slice starts at an M or N index of the tile that lies on its " + std::to_string(alignment_) +
                         "-byte swizzle pattern (a multiple of " + std::to_string(major_ == WgmmaMajor::k ? 8 : chunk) +
                         " below " + std::to_string(rows) + "), not " + std::to_string(mn),
                     w);
      return bytes;
    }
    if (major_ == WgmmaMajor::k) {
      if (mn % 8 != 0) detail::fail("a wgmma operand starts at a row that is a multiple of 8, not " + std::to_string(mn), w);
      return int64_t(mn) * span_;
    }
    if (mn < 0 || mn % chunk != 0)
      detail::fail("an MN-major wgmma operand starts at an M or N index that is a multiple of its chunk width " +
                       std::to_string(chunk) + " (one " + std::to_string(span_) + "-byte swizzle span), not " + std::to_string(mn),
                   w);
    return int64_t(mn / chunk) * k_extent_ * span_;
  }

  int span_ = 0;  ///< the swizzle's row bytes (0: none)
  int k_extent_ = 0;
  WgmmaMajor major_ = WgmmaMajor::k;
  std::vector<uint32_t> step_bytes_;  ///< where each K step starts, from the tile's start
  std::optional<Layout> layout_;      ///< a tensor's layout, which places its rows
  int64_t alignment_ = 16;
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

/// The same with the operands as shared-memory tensors, `a` (M x K: this warpgroup's rows) and
/// `b` (N x K) in one of the layouts wgmma reads (a swizzled TMA box's): CuTe's
/// `gemm(tiled_mma, acc, sA, sB)`, the descriptors derived from the layouts.
template <Element T, int N, WgmmaMajor AMajor, WgmmaMajor BMajor>
void gemm(const TiledMma<WgmmaSS<T, N, AMajor, BMajor>>& tiled, const Tensor<float>& acc, const Tensor<T>& a, const Tensor<T>& b,
          detail::Where w = detail::Where::current()) {
  gemm(tiled, acc, WgmmaOperand<T>(a, "A", w), WgmmaOperand<T>(b, "B", w), w);
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

/// The same with B as a shared-memory tensor (N x K) in one of the layouts wgmma reads.
template <Element T, int N, WgmmaMajor BMajor>
void gemm(const TiledMma<WgmmaRS<T, N, BMajor>>& tiled, const Tensor<float>& acc, const Tensor<T>& a, const Tensor<T>& b,
          detail::Where w = detail::Where::current()) {
  if (a.data().space() == Space::shared)
    detail::fail("this tiled wgmma takes A from registers (WgmmaRS): pass the register fragment, or use a WgmmaSS atom for A in shared memory", w);
  gemm(tiled, acc, a, WgmmaOperand<T>(b, "B", w), w);
}

}  // namespace cutejit
