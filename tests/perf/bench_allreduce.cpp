// The NVSHMEM all-reduces (examples/allreduce.hpp) over every GPU of this machine, one process
// each, as nccl-tests reports them: for BF16 messages of 1 MiB to 1 GiB, the median time of one
// all-reduce, its algorithm bandwidth (bytes / time) and bus bandwidth (algbw x 2(P-1)/P).
// peers_allreduce.py measures NCCL's all-reduce the same way in the same device call.
//   cutejit_bench_allreduce [ranks]      (default: every GPU)
// With one GPU the "all-reduce" is one PE reading its own memory: a copy, not a collective.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "allreduce.hpp"

extern char** environ;

using namespace cutejit;
using examples::AllReduce;

namespace {

int rank_main(int rank, int ranks, const char* id_file) {
  Device gpu(rank);
  nvshmem::Session session(gpu, rank, ranks, nvshmem::exchange_unique_id(id_file, rank));
  AllReduce reduce(session);
  const size_t largest = size_t(1) << 29;  // 1 GiB of bf16
  Buffer<bf16> x = session.alloc<bf16>(largest), y = session.alloc<bf16>(largest);
  x.upload(examples::allreduce_input(largest, rank));  // full-entropy random floats
  if (rank == 0)
    std::printf("cutejit NVSHMEM all-reduce, bf16, %d PEs on %s\n%10s %10s %12s %12s %12s %12s\n", ranks, gpu.name().c_str(), "bytes",
                "shape", "time_us", "algbw_GB/s", "busbw_GB/s", "max_us");
  for (size_t bytes = size_t(1) << 20; bytes <= largest * sizeof(bf16); bytes *= 2) {
    const size_t n = bytes / sizeof(bf16);
    const DeviceTensor<bf16> xs = x.view({int64_t(n)}, {1}), ys = y.view({int64_t(n)}, {1});
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
    if (const char* rank = std::getenv("CUTEJIT_BENCH_RANK"))
      return rank_main(std::atoi(rank), std::atoi(std::getenv("CUTEJIT_BENCH_RANKS")), std::getenv("CUTEJIT_BENCH_ID_FILE"));
    const int ranks = argc > 1 ? std::atoi(argv[1]) : Device::count();
    if (ranks < 1 || ranks > Device::count()) throw Error("cutejit_bench_allreduce: " + std::to_string(ranks) + " ranks, but this machine has " +
                                                          std::to_string(Device::count()) + " GPUs");
    const std::string id_file = (std::filesystem::temp_directory_path() / ("cutejit_bench_allreduce_" + std::to_string(getpid()))).string();
    std::vector<pid_t> pids;
    for (int rank = 0; rank < ranks; ++rank) {
      // The environment as given (NVSHMEM's settings among it), the rank's variables, and a
      // symmetric heap for two 1 GiB buffers unless one is set.
      std::vector<std::string> env;
      for (char** e = environ; *e; ++e) env.emplace_back(*e);
      env.push_back("CUTEJIT_BENCH_RANK=" + std::to_string(rank));
      env.push_back("CUTEJIT_BENCH_RANKS=" + std::to_string(ranks));
      env.push_back("CUTEJIT_BENCH_ID_FILE=" + id_file);
      if (!std::getenv("NVSHMEM_SYMMETRIC_SIZE")) env.push_back("NVSHMEM_SYMMETRIC_SIZE=3G");
      std::vector<char*> envp;
      for (auto& e : env) envp.push_back(e.data());
      envp.push_back(nullptr);
      pid_t pid = 0;
      if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()) != 0) throw Error("cannot start rank " + std::to_string(rank));
      pids.push_back(pid);
    }
    int failed = 0;
    for (pid_t pid : pids) {
      int status = 0;
      waitpid(pid, &status, 0);
      failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    std::filesystem::remove(id_file);
    return failed ? 1 : 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "cutejit_bench_allreduce: %s\n", e.what());
    return 1;
  }
}
