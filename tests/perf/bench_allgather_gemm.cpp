// The all-gather fused with the Hopper BF16 GEMM (kernels/collective.hpp) over every GPU of
// this machine, one process each, at the tensor-parallel shapes M = 8192, N = 8192 / P, K = 8192
// (and 4096, 16384): the median time of one call on PE 0, and its TFLOP/s (2 M N K / time).
// peers_allgather_gemm.py times NCCL's all-gather followed by cuBLAS in the same device call.
//   cutejit_bench_allgather_gemm [ranks]      (default: every GPU)
// With one GPU nothing is gathered: it is the GEMM alone.
#include <cstdio>

#include "collective_checks.hpp"
#include "ranks.hpp"

using namespace cutejit;

namespace {

int rank_main(const nvshmem::Session& session) {
  const Device& gpu = session.device();
  const int rank = session.my_pe(), ranks = session.n_pes();
  if (rank == 0)
    std::printf("cutejit all-gather + GEMM, bf16, %d PEs on %s\n%6s %6s %6s %12s %10s %12s\n", ranks, gpu.name().c_str(), "M", "N", "K",
                "time_us", "TFLOP/s", "max_us");
  for (int64_t size : {4096, 8192, 16384}) {
    const int64_t m = size, n = size / ranks, k = size;
    kernels::AllGatherGemm gemm(session, m, k);
    gemm.upload_shard(fixtures::allgather_gemm_shard(m / ranks, k, rank));  // full-entropy random floats
    Buffer<bf16> b = gpu.upload(fixtures::allgather_gemm_b(n, k, rank)), c = gpu.alloc<bf16>(size_t(m * n));
    session.barrier_all();
    // Each call starts after a barrier of every PE, as a layer's would after the one before.
    BenchResult r = bench(gpu, [&](int) {
      session.barrier_all();
      gemm(b.view({n, k}), c.view({m, n}));
    }, {.warmup = 3, .reps = 15});
    if (rank == 0)
      std::printf("%6ld %6ld %6ld %12.1f %10.1f %12.1f\n", long(m), long(n), long(k), r.median_ms * 1e3,
                  2.0 * double(m) * double(n) * double(k) / (r.median_ms * 1e-3) / 1e12, r.max_ms * 1e3);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::unique_ptr<Device> gpu;
    if (auto session = job::rank_session(gpu)) return rank_main(*session);
    return job::run_ranks(job::ranks_wanted(argc, argv), argv) ? 1 : 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "cutejit_bench_allgather_gemm: %s\n", e.what());
    return 1;
  }
}
