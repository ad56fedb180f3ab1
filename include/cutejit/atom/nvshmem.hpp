/** \file
 * NVSHMEM from inside a traced kernel: one-sided puts and gets into other GPUs' symmetric memory,
 * signals, ordering and barriers. Each call is NVSHMEM's own device function, linked from the
 * bitcode NVSHMEM ships (libnvshmem_device_sm_XX.bc) into the kernel's module before LLVM
 * optimises it; the host side, which starts NVSHMEM and allocates symmetric memory, is
 * runtime/nvshmem.hpp.
 *
 *     // send my tile to PE `pe`, and raise my flag there once it has arrived
 *     nvshmem::put_signal_nbi(tile, tile, n, flags + nvshmem::my_pe(), epoch, nvshmem::SignalOp::set, pe, Scope::block);
 *     // wait until PE `pe` has sent me its tile
 *     nvshmem::signal_wait_until(flags + pe, nvshmem::Compare::ge, epoch);
 *
 * Pointers given as the remote side (a put's destination, a get's source, a signal) must lie in
 * NVSHMEM's symmetric heap, and a PE must be in [0, n_pes()): both are checked on the device,
 * where they are known, and a violation traps with the user's file and line (as device_assert).
 * Sizes are in elements of T. The scope says who makes the call: one thread, a whole warp
 * (every lane, with the same arguments), or a whole block; the warp and block forms spread
 * the copy over their threads.
 */
#pragma once

#include <array>
#include <string>

#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/tensor/pointer.hpp"

namespace cutejit::nvshmem {

enum class Scope { thread, warp, block };
/// What a signal operation does to the 64-bit signal word (NVSHMEM_SIGNAL_SET / _ADD).
enum class SignalOp : int { set = 9, add = 10 };
/// How signal_wait_until compares (NVSHMEM_CMP_EQ ... NVSHMEM_CMP_GE).
enum class Compare : int { eq = 0, ne = 1, gt = 2, le = 3, lt = 4, ge = 5 };

namespace detail {
using cutejit::detail::LibraryResult;
using cutejit::detail::ValueId;
using cutejit::detail::Where;

/// NVSHMEM's name for a function at a scope: nvshmem_putmem, nvshmemx_putmem_warp, ...
inline std::string scoped(const char* base, Scope scope) {
  if (scope == Scope::thread) return std::string("nvshmem_") + base;
  return std::string("nvshmemx_") + base + (scope == Scope::warp ? "_warp" : "_block");
}
template <class... Ids>
ValueId call(const std::string& function, LibraryResult result, Where w, Ids... ids) {
  const std::array<ValueId, sizeof...(Ids)> args{ids...};
  return cutejit::detail::nvshmem_call(function, result, args, w);
}
inline Int64 bytes(const Operand<int32_t>& count, int element_bytes) {
  return Int64(cutejit::detail::cast(count.id, DType::i64, count.where)) * Operand<int64_t>(int64_t(element_bytes), count.where);
}
/// Traps unless `pe` names a PE of this job.
inline void check_pe(const Operand<int32_t>& pe, const char* what) {
  const Int n(call("nvshmem_n_pes", LibraryResult::i32, pe.where));
  const Int p(pe.id);
  device_assert(Operand<bool>((p >= 0) && (p < n), pe.where),
                std::string(what) + ": the PE is outside [0, nvshmem::n_pes())");
}
/// Traps unless `ptr` lies in NVSHMEM's symmetric heap (nvshmem_ptr of our own PE is null
/// exactly for addresses outside it).
inline void check_symmetric(ValueId ptr, const char* what, Where w) {
  const ValueId me = call("nvshmem_my_pe", LibraryResult::i32, w);
  const ValueId local = call("nvshmem_ptr", LibraryResult::pointer, w, ptr, me);
  device_assert(Operand<bool>(Bool(cutejit::detail::not_null(local, w)), w), std::string(what) + " is not in NVSHMEM's symmetric heap (allocate it with nvshmem::Session::alloc)");
}
}  // namespace detail

/// This GPU's PE (processing element) number, and how many there are.
inline Int my_pe(cutejit::detail::Where w = cutejit::detail::Where::current()) {
  return Int(detail::call("nvshmem_my_pe", detail::LibraryResult::i32, w));
}
inline Int n_pes(cutejit::detail::Where w = cutejit::detail::Where::current()) {
  return Int(detail::call("nvshmem_n_pes", detail::LibraryResult::i32, w));
}

/// PE `pe`'s address of the symmetric `ptr`, for plain loads and stores to its memory (NVLink
/// peers; `nvshmem_ptr`). Traps when that PE's memory cannot be reached by loads and stores.
template <Element T>
Pointer<T> peer_of(const Pointer<T>& ptr, const Operand<int32_t>& pe) {
  detail::check_pe(pe, "nvshmem::peer_of");
  const auto p = detail::call("nvshmem_ptr", detail::LibraryResult::pointer, pe.where, ptr.id(), pe.id);
  device_assert(Operand<bool>(Bool(cutejit::detail::not_null(p, pe.where)), pe.where),
                "nvshmem::peer_of: the pointer is not symmetric, or that PE is not reachable by loads and stores");
  return Pointer<T>(p);
}

/// Copies `count` elements from local `src` to `dest` on PE `pe`; returns once `src` may be
/// reused (put) or at once (put_nbi: complete after quiet()).
template <Element T>
void put(const Pointer<T>& dest, const Pointer<T>& src, const Operand<int32_t>& count, const Operand<int32_t>& pe,
         Scope scope = Scope::thread) {
  detail::check_pe(pe, "nvshmem::put");
  detail::check_symmetric(dest.id(), "nvshmem::put: the destination", pe.where);
  detail::call(detail::scoped("putmem", scope), detail::LibraryResult::none, pe.where, dest.id(), src.id(),
               detail::bytes(count, sizeof(T)).id(), pe.id);
}
template <Element T>
void put_nbi(const Pointer<T>& dest, const Pointer<T>& src, const Operand<int32_t>& count, const Operand<int32_t>& pe,
             Scope scope = Scope::thread) {
  detail::check_pe(pe, "nvshmem::put_nbi");
  detail::check_symmetric(dest.id(), "nvshmem::put_nbi: the destination", pe.where);
  detail::call(detail::scoped("putmem_nbi", scope), detail::LibraryResult::none, pe.where, dest.id(), src.id(),
               detail::bytes(count, sizeof(T)).id(), pe.id);
}
/// Copies `count` elements from `src` on PE `pe` to local `dest`.
template <Element T>
void get(const Pointer<T>& dest, const Pointer<T>& src, const Operand<int32_t>& count, const Operand<int32_t>& pe,
         Scope scope = Scope::thread) {
  detail::check_pe(pe, "nvshmem::get");
  detail::check_symmetric(src.id(), "nvshmem::get: the source", pe.where);
  detail::call(detail::scoped("getmem", scope), detail::LibraryResult::none, pe.where, dest.id(), src.id(),
               detail::bytes(count, sizeof(T)).id(), pe.id);
}
template <Element T>
void get_nbi(const Pointer<T>& dest, const Pointer<T>& src, const Operand<int32_t>& count, const Operand<int32_t>& pe,
             Scope scope = Scope::thread) {
  detail::check_pe(pe, "nvshmem::get_nbi");
  detail::check_symmetric(src.id(), "nvshmem::get_nbi: the source", pe.where);
  detail::call(detail::scoped("getmem_nbi", scope), detail::LibraryResult::none, pe.where, dest.id(), src.id(),
               detail::bytes(count, sizeof(T)).id(), pe.id);
}
/// A put, then `op` with `value` on the 64-bit `signal` at PE `pe`, ordered after the data: the
/// receiver that sees the signal sees the data (put_signal waits for `src` to be reusable).
template <Element T>
void put_signal(const Pointer<T>& dest, const Pointer<T>& src, const Operand<int32_t>& count, const Pointer<uint64_t>& signal,
                const Operand<uint64_t>& value, SignalOp op, const Operand<int32_t>& pe, Scope scope = Scope::thread) {
  detail::check_pe(pe, "nvshmem::put_signal");
  detail::check_symmetric(dest.id(), "nvshmem::put_signal: the destination", pe.where);
  detail::check_symmetric(signal.id(), "nvshmem::put_signal: the signal", pe.where);
  const Int sig_op(cutejit::detail::constant_int(DType::i32, int(op), pe.where));
  detail::call(detail::scoped("putmem_signal", scope), detail::LibraryResult::none, pe.where, dest.id(), src.id(),
               detail::bytes(count, sizeof(T)).id(), signal.id(), value.id, sig_op.id(), pe.id);
}
template <Element T>
void put_signal_nbi(const Pointer<T>& dest, const Pointer<T>& src, const Operand<int32_t>& count, const Pointer<uint64_t>& signal,
                    const Operand<uint64_t>& value, SignalOp op, const Operand<int32_t>& pe, Scope scope = Scope::thread) {
  detail::check_pe(pe, "nvshmem::put_signal_nbi");
  detail::check_symmetric(dest.id(), "nvshmem::put_signal_nbi: the destination", pe.where);
  detail::check_symmetric(signal.id(), "nvshmem::put_signal_nbi: the signal", pe.where);
  const Int sig_op(cutejit::detail::constant_int(DType::i32, int(op), pe.where));
  detail::call(detail::scoped("putmem_signal_nbi", scope), detail::LibraryResult::none, pe.where, dest.id(), src.id(),
               detail::bytes(count, sizeof(T)).id(), signal.id(), value.id, sig_op.id(), pe.id);
}
/// `op` with `value` on the 64-bit `signal` at PE `pe` (nvshmemx_signal_op).
inline void signal_op(const Pointer<uint64_t>& signal, const Operand<uint64_t>& value, SignalOp op, const Operand<int32_t>& pe) {
  detail::check_pe(pe, "nvshmem::signal_op");
  detail::check_symmetric(signal.id(), "nvshmem::signal_op: the signal", pe.where);
  const Int sig_op(cutejit::detail::constant_int(DType::i32, int(op), pe.where));
  detail::call("nvshmemx_signal_op", detail::LibraryResult::none, pe.where, signal.id(), value.id, sig_op.id(), pe.id);
}
/// Waits until the local 64-bit `signal` compares true against `value`; returns the signal.
inline Value<uint64_t> signal_wait_until(const Pointer<uint64_t>& signal, Compare cmp, const Operand<uint64_t>& value) {
  const Int c(cutejit::detail::constant_int(DType::i32, int(cmp), value.where));
  return Value<uint64_t>(detail::call("nvshmem_signal_wait_until", detail::LibraryResult::u64, value.where, signal.id(), c.id(), value.id));
}
/// Orders this thread's puts and signals to each PE (fence), or completes all of them (quiet).
inline void fence(cutejit::detail::Where w = cutejit::detail::Where::current()) {
  detail::call("nvshmem_fence", detail::LibraryResult::none, w);
}
inline void quiet(cutejit::detail::Where w = cutejit::detail::Where::current()) {
  detail::call("nvshmem_quiet", detail::LibraryResult::none, w);
}
/// Every PE's barrier, with quiet(): called once per PE (by one thread, warp or block), never
/// by several blocks of one PE.
inline void barrier_all(Scope scope = Scope::block, cutejit::detail::Where w = cutejit::detail::Where::current()) {
  detail::call(detail::scoped("barrier_all", scope), detail::LibraryResult::none, w);
}

}  // namespace cutejit::nvshmem
