// The NVSHMEM all-reduces (kernels/collective.hpp) over every GPU of this machine, one process
// each, as nccl-tests reports them: for BF16 messages of 1 MiB to 1 GiB, the median time of one
// all-reduce, its algorithm bandwidth (bytes / time) and bus bandwidth (algbw x 2(P-1)/P).
// peers_allreduce.py measures NCCL's all-reduce the same way in the same device call.
//   cutejit_bench_allreduce [ranks]      (default: every GPU)
// With one GPU the "all-reduce" is one PE reading its own memory: a copy, not a collective.
#include <cstdio>

#include "collective_checks.hpp"
#include "ranks.hpp"

using namespace cutejit;
using kernels::AllReduce;

namespace {

int rank_main(const nvshmem::Session& session) {
  const Device& gpu = session.device();
  const int rank = session.my_pe(), ranks = session.n_pes();
  AllReduce reduce(session);
  const size_t largest = size_t(1) << 29;  // 1 GiB of bf16
  Buffer<bf16> x = session.alloc<bf16>(largest), y = session.alloc<bf16>(largest);
  x.upload(fixtures::allreduce_input(largest, rank));  // full-entropy random floats
  if (rank == 0)
    std::printf("cutejit NVSHMEM all-reduce, bf16, %d PEs on %s\n%10s %10s %12s %12s %12s %12s\n", ranks, gpu.name().c_str(), "bytes",
                "shape", "time_us", "algbw_GB/s", "busbw_GB/s", "max_us");
  for (size_t bytes = size_t(1) << 20; bytes <= largest * sizeof(bf16); bytes *= 2) {
    const int64_t n = int64_t(bytes / sizeof(bf16));
    const DeviceTensor<bf16> xs = x.view({n}, {1}), ys = y.view({n}, {1});
    for (AllReduce::Shape shape : {AllReduce::Shape::one_shot, AllReduce::Shape::two_shot}) {
      session.barrier_all();
      BenchResult r = bench(gpu, [&](int) { reduce(shape, xs, ys); }, {.warmup = 5, .reps = 25});
      // PE 0's times: the PEs meet twice in every call, so none runs ahead of the others.
      if (rank == 0) {
        const double us = r.median_ms * 1e3, algbw = double(bytes) / (r.median_ms * 1e-3) / 1e9;
        std::printf("%10zu %10s %12.1f %12.1f %12.1f %12.1f\n", bytes, shape == AllReduce::Shape::one_shot ? "one-shot" : "two-shot", us,
                    algbw, algbw * 2.0 * (ranks - 1) / ranks, r.max_ms * 1e3);
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::unique_ptr<Device> gpu;
    if (auto session = job::rank_session(gpu)) return rank_main(*session);
    // Two 1 GiB buffers in the symmetric heap.
    return job::run_ranks(job::ranks_wanted(argc, argv), argv, {"NVSHMEM_SYMMETRIC_SIZE=3G"}) ? 1 : 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "cutejit_bench_allreduce: %s\n", e.what());
    return 1;
  }
}
