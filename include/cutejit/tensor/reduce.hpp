/** \file
 * Reductions across threads, which every kernel otherwise writes itself:
 *   - `warp_reduce(v, op, width)`: the sum, maximum or minimum over each segment of `width`
 *     lanes (32: the warp), by butterfly shuffles, so every lane ends with the result;
 *   - `block_reduce(v, threads, op)`: the same over a block of `threads` threads (its static
 *     size, a multiple of 32 up to 1024): warps reduce, their leaders meet in shared memory,
 *     and every warp reduces the partials, so every thread ends with the result. Every thread
 *     of the block must call it: with more than one warp it has barriers, and ends with one,
 *     so it may be called again at once, in a loop too.
 * 32-bit types (f32, i32, u32), as the shuffles move.
 */
#pragma once

#include <limits>
#include <string>

#include "cutejit/dsl/control.hpp"
#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/dsl/var.hpp"
#include "cutejit/tensor/pointer.hpp"

namespace cutejit {

/// Reductions CuTeDSL names by kind (here, and for TensorSSA's reduce).
enum class Reduce { sum, max, min };

namespace detail {
template <Element T>
Value<T> combine(Reduce op, const Value<T>& a, const Value<T>& b) {
  switch (op) {
    case Reduce::sum: return a + b;
    case Reduce::max: return max(a, b);
    case Reduce::min: return min(a, b);
  }
  return a;
}
/// The value that changes nothing: 0, the lowest value, or the highest.
template <Element T>
T reduce_identity(Reduce op) {
  if (op == Reduce::sum) return T(0);
  if constexpr (std::numeric_limits<T>::has_infinity)
    return op == Reduce::max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  else
    return op == Reduce::max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
}
}  // namespace detail

template <Element T>
  requires(sizeof(T) == 4)
Value<T> warp_reduce(const Value<T>& v, Reduce op = Reduce::sum, int width = 32, detail::Where w = detail::Where::current()) {
  if (width < 1 || width > 32 || (width & (width - 1)) != 0)
    detail::fail("warp_reduce reduces over a power-of-two number of lanes up to 32, not " + std::to_string(width), w);
  Value<T> r = v;
  for (int offset = width / 2; offset > 0; offset /= 2)
    r = detail::combine(op, r, Value<T>(detail::shuffle(detail::ShuffleKind::bfly, r.id(), Operand<int32_t>(offset, w).id, 32, w)));
  return r;
}

template <Element T>
  requires(sizeof(T) == 4)
Value<T> block_reduce(const Value<T>& v, int threads, Reduce op = Reduce::sum, detail::Where w = detail::Where::current()) {
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    detail::fail("block_reduce needs the block's size, a multiple of 32 from 32 to 1024 threads, not " + std::to_string(threads), w);
  if (int declared = detail::declared_block_threads(w); declared && declared != threads)
    detail::fail("block_reduce is told the block has " + std::to_string(threads) + " threads, but the kernel declared a block of " +
                     std::to_string(declared) + " (block_shape)",
                 w);
  const int warps = threads / 32;
  Value<T> partial = warp_reduce(v, op, 32, w);
  if (warps == 1) return partial;
  Pointer<T> scratch = shared_array<T>(warps, 16, w);
  Int tid = thread_idx().x, lane = tid % 32, warp = tid / 32;
  if_(lane == 0, [&] { scratch[warp] = partial; }, w);
  sync_threads(w);
  // Every warp reduces the partials, so no second broadcast is needed; only lanes that have one
  // read it (an index past the array would read another kernel's leftovers).
  Var<T> mine(detail::reduce_identity<T>(op), w);
  if_(lane < warps, [&] { mine = Value<T>(scratch[lane]); }, w);
  Value<T> total = warp_reduce(mine.read(w), op, 32, w);
  sync_threads(w);  // every warp has read the scratch before a next call writes it
  return total;
}

template <detail::TracedReference R>
  requires(sizeof(detail::traced_element_t<R>) == 4)
auto warp_reduce(const R& v, Reduce op = Reduce::sum, int width = 32, detail::Where w = detail::Where::current()) {
  return warp_reduce(v.read(w), op, width, w);
}
template <detail::TracedReference R>
  requires(sizeof(detail::traced_element_t<R>) == 4)
auto block_reduce(const R& v, int threads, Reduce op = Reduce::sum, detail::Where w = detail::Where::current()) {
  return block_reduce(v.read(w), threads, op, w);
}

}  // namespace cutejit
