// The all-reduce (sum) of bf16 vectors over the GPUs of an NVSHMEM job, in one kernel, in the two
// classic shapes (kernels/collective.hpp's AllReduce launches them):
// - one-shot: every PE reads every PE's whole input through NVLink and sums it, f32 in
//   registers; the fewest steps, for small messages;
// - two-shot: PE p sums only the p-th slice (a reduce-scatter) and writes that slice of the
//   result into every PE's output (an all-gather); each byte crosses a link once, for large ones.
// Block b of each PE meets block b of every other PE before reading (their inputs are ready) and
// after (their reads of ours, and their writes into ours, are done), through NVSHMEM signals: no
// grid-wide barrier, no host step. Every PE adds the PEs in the same order, so the result is the
// same bits on every PE and on every run.
#pragma once

#include <array>
#include <vector>

#include "cutejit/cutejit.hpp"

namespace cutejit::kernels::all_reduce {

inline constexpr int threads = 512;
inline constexpr int vector = 8;  // bf16 values per 16-byte load and store

/// Block b of every PE waits for block b of every other PE: each raises its flag (at index
/// `meeting * pes + its PE`) on every PE, then waits for all of them on its own.
inline void meet(const Tensor<uint64_t>& flags, const Int& meeting, const Value<uint64_t>& epoch, int pes) {
  sync_threads();
  Int peer = thread_idx().x;
  if_(peer < pes, [&] {
    thread_fence_system();  // this block's stores into other PEs' memory, before the flag that says they are done
    nvshmem::signal_op(flags.data() + (meeting * pes + nvshmem::my_pe()), epoch, nvshmem::SignalOp::set, peer);
    nvshmem::signal_wait_until(flags.data() + (meeting * pes + peer), nvshmem::Compare::ge, epoch);
  });
  sync_threads();
}

/// The PEs' addresses of a symmetric tensor's data, for loads and stores to each.
template <Element T>
std::vector<Pointer<T>> on_every_pe(const Tensor<T>& t, int pes) {
  std::vector<Pointer<T>> out;
  for (int pe = 0; pe < pes; ++pe) out.push_back(nvshmem::peer_of(t.data(), pe));
  return out;
}

/// The sum over PEs of the 8-vector at element `i` of `inputs`.
inline std::array<BF16, vector> sum_at(const std::vector<Pointer<bf16>>& inputs, const Int& i) {
  std::array<F32, vector> acc;
  for (size_t pe = 0; pe < inputs.size(); ++pe) {
    std::array<BF16, vector> v = (inputs[pe] + i).load_vector<vector>();
    for (int k = 0; k < vector; ++k) acc[k] = pe == 0 ? cast<float>(v[k]) : acc[k] + cast<float>(v[k]);
  }
  std::array<BF16, vector> out;
  for (int k = 0; k < vector; ++k) out[k] = cast<bf16>(acc[k]);
  return out;
}

/// One-shot: y = the sum over the PEs of x, every PE reading every PE's whole x. `x` and `y`:
/// every PE's symmetric input and output, their size a multiple of 8; `flags`: symmetric,
/// 2 x blocks x pes words, raised to `epoch` (one more at each call, from 1).
inline void one_shot(const Tensor<bf16>& x, const Tensor<bf16>& y, const Tensor<uint64_t>& flags, const Value<uint64_t>& epoch, int pes) {
  Int vectors = size(x) / vector;
  std::vector<Pointer<bf16>> inputs = on_every_pe(x, pes);
  meet(flags, block_idx().x, epoch, pes);
  for_(block_idx().x * threads + thread_idx().x, vectors, grid_dim().x * threads, [&](Int v) {
    (y.data() + v * vector).store_vector<vector>(sum_at(inputs, v * vector));
  });
  meet(flags, grid_dim().x + block_idx().x, epoch, pes);
}

/// Two-shot: PE p sums the p-th slice of every PE's x and writes it into every PE's y. The
/// arguments as one_shot's.
inline void two_shot(const Tensor<bf16>& x, const Tensor<bf16>& y, const Tensor<uint64_t>& flags, const Value<uint64_t>& epoch, int pes) {
  Int vectors = size(x) / vector;
  Int slice = (vectors + (pes - 1)) / pes;
  Int first = nvshmem::my_pe() * slice;
  Int last = min(first + slice, vectors);
  std::vector<Pointer<bf16>> inputs = on_every_pe(x, pes), outputs = on_every_pe(y, pes);
  meet(flags, block_idx().x, epoch, pes);
  for_(first + block_idx().x * threads + thread_idx().x, last, grid_dim().x * threads, [&](Int v) {
    std::array<BF16, vector> sum = sum_at(inputs, v * vector);
    for (const Pointer<bf16>& out : outputs) (out + v * vector).store_vector<vector>(sum);
  });
  meet(flags, grid_dim().x + block_idx().x, epoch, pes);
}

}  // namespace cutejit::kernels::all_reduce
