// An all-reduce (sum) of BF16 vectors over the GPUs of an NVSHMEM job, in one kernel, in the two
// classic shapes:
// - one-shot: every PE reads every PE's whole input through NVLink and sums it, f32 in
//   registers; the fewest steps, for small messages;
// - two-shot: PE p sums only the p-th slice (a reduce-scatter) and writes that slice of the
//   result into every PE's output (an all-gather); each byte crosses a link once, for large ones.
// Block b of each PE meets block b of every other PE before reading (their inputs are ready) and
// after (their reads of ours, and their writes into ours, are done), through NVSHMEM signals: no
// grid-wide barrier, no host step. Every PE adds the PEs in the same order, so the result is the
// same bits on every PE and on every run.
#pragma once

#include <cstring>
#include <vector>

#include "example.hpp"

namespace examples {
using namespace cutejit;

namespace allreduce {

constexpr int threads = 512;
constexpr int vector = 8;  // bf16 values per 16-byte load and store

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

/// `x` and `y`: every PE's symmetric input and output, `n` a multiple of 8; `flags`: symmetric,
/// 2 x blocks x pes words, raised to `epoch` (one more at each call, from 1).
inline Kernel one_shot{"allreduce_one_shot", [](Tensor<bf16> x, Tensor<bf16> y, Tensor<uint64_t> flags, Value<uint64_t> epoch,
                                                Constexpr<int> pes) {
  Int vectors = size(x) / vector;
  std::vector<Pointer<bf16>> inputs = on_every_pe(x, pes);
  meet(flags, block_idx().x, epoch, pes);
  for_(block_idx().x * threads + thread_idx().x, vectors, grid_dim().x * threads, [&](Int v) {
    (y.data() + v * vector).store_vector<vector>(sum_at(inputs, v * vector));
  });
  meet(flags, grid_dim().x + block_idx().x, epoch, pes);
}};

inline Kernel two_shot{"allreduce_two_shot", [](Tensor<bf16> x, Tensor<bf16> y, Tensor<uint64_t> flags, Value<uint64_t> epoch,
                                                Constexpr<int> pes) {
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
}};

}  // namespace allreduce

/// An all-reduce over the PEs of `session`: the flags it meets on, and the epoch they count.
class AllReduce {
 public:
  enum class Shape { one_shot, two_shot };
  /// `blocks` CTAs on each PE, one per multiprocessor unless given.
  explicit AllReduce(const nvshmem::Session& session, int blocks = 0)
      : session_(&session), blocks_(blocks > 0 ? blocks : session.device().multiprocessors()),
        flags_(session.alloc<uint64_t>(size_t(2 * blocks_ * session.n_pes()))) {
    flags_.zero();
  }
  /// y = the sum over PEs of x, on every PE; x and y symmetric (a whole Buffer from
  /// Session::alloc, or a view of one), of the same size, a multiple of 8.
  void operator()(Shape shape, const DeviceTensor<bf16>& x, const DeviceTensor<bf16>& y, StreamHandle stream = nullptr) {
    if (x.rank != 1 || y.rank != 1 || x.stride[0] != 1 || y.stride[0] != 1 || x.shape[0] != y.shape[0] || x.shape[0] % allreduce::vector != 0)
      throw Error("AllReduce: x and y must be contiguous vectors of the same size, a multiple of 8 elements (" + std::to_string(x.shape[0]) +
                  " and " + std::to_string(y.shape[0]) + " given)");
    Launch launch{.grid = uint32_t(blocks_), .block = allreduce::threads, .stream = stream};
    const Constexpr<int> pes(session_->n_pes());
    if (shape == Shape::one_shot)
      allreduce::one_shot(session_->device(), launch, x, y, flags_, uint64_t(++epoch_), pes);
    else
      allreduce::two_shot(session_->device(), launch, x, y, flags_, uint64_t(++epoch_), pes);
  }

 private:
  const nvshmem::Session* session_;
  int blocks_;
  Buffer<uint64_t> flags_;
  uint64_t epoch_ = 0;
};

/// The BF16 inputs PE `pe` contributes in the examples and tests: random, from a seed of its own.
inline std::vector<bf16> allreduce_input(size_t n, int pe) { return random_values<bf16>(n, 1000u + unsigned(pe)); }

/// The sum every PE's output must hold: f32 sums in PE order, rounded to BF16, as the kernels add.
inline std::vector<bf16> allreduce_reference(size_t n, int pes) {
  std::vector<float> acc(n, 0.f);
  for (int pe = 0; pe < pes; ++pe) {
    std::vector<bf16> x = allreduce_input(n, pe);
    for (size_t i = 0; i < n; ++i) acc[i] = pe == 0 ? float(x[i]) : acc[i] + float(x[i]);
  }
  std::vector<bf16> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = bf16(acc[i]);
  return out;
}

/// Runs both shapes on this process's session and counts the elements that differ from the
/// reference in any bit: 0 is a pass.
inline size_t allreduce_mismatches(const nvshmem::Session& session, size_t n, int calls = 3) {
  AllReduce reduce(session);
  Buffer<bf16> x = session.alloc<bf16>(n), y = session.alloc<bf16>(n);
  x.upload(allreduce_input(n, session.my_pe()));
  const std::vector<bf16> want = allreduce_reference(n, session.n_pes());
  size_t wrong = 0;
  for (AllReduce::Shape shape : {AllReduce::Shape::one_shot, AllReduce::Shape::two_shot})
    for (int call = 0; call < calls; ++call) {
      y.fill(bf16(NAN));
      reduce(shape, x, y);
      session.device().synchronize();
      std::vector<bf16> got(n);
      y.download(got);
      for (size_t i = 0; i < n; ++i) wrong += std::memcmp(&got[i], &want[i], sizeof(bf16)) != 0;
    }
  return wrong;
}

inline Example allreduce_example(int64_t n = (1 << 20) + 8) {
  return {"allreduce_one_shot",
          [n](const Device& gpu) {
            nvshmem::Session session(gpu);  // one PE: this process alone
            return double(allreduce_mismatches(session, size_t(n)));
          },
          [n](const Target& t) {
            auto v = DeviceTensor<bf16>::make(0, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1});
            auto f = DeviceTensor<uint64_t>::make(0, std::array<int64_t, 1>{64}, std::array<int64_t, 1>{1});
            return allreduce::one_shot.compile(t, v, v, f, uint64_t(1), Constexpr<int>{1});
          },
          0};
}

}  // namespace examples
