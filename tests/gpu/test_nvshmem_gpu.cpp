// NVSHMEM on the GPUs of this machine: one PE in this process, then a job of one process per GPU
// (which on a one-GPU machine is one PE again, bootstrapped through the unique-id file). Every
// process makes one Session: NVSHMEM starts once per process.
#include <catch2/catch.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "collective_checks.hpp"

extern char** environ;

using namespace cutejit;
using Catch::Contains;

namespace {

/// Each PE sends its `mine` to the next PE's `theirs` with a signal, waits for the previous PE's,
/// then (after every PE's barrier) fetches the next PE's `mine` into `fetched` and writes its PE
/// number into the next PE's `stamp` through a plain store.
Kernel ring{"nvshmem_ring", [](Tensor<f32> mine, Tensor<f32> theirs, Tensor<f32> fetched, Tensor<uint64_t> signal,
                               Tensor<int32_t> stamp, Value<uint64_t> epoch) {
  Int me = nvshmem::my_pe();
  Int right = (me + 1) % nvshmem::n_pes();
  nvshmem::put_signal_nbi(theirs.data(), mine.data(), size(mine), signal.data(), epoch, nvshmem::SignalOp::set, right,
                          nvshmem::Scope::block);
  if_(thread_idx().x == 0, [&] { nvshmem::signal_wait_until(signal.data(), nvshmem::Compare::ge, epoch); });
  nvshmem::barrier_all(nvshmem::Scope::block);
  nvshmem::get(fetched.data(), mine.data(), size(mine), right, nvshmem::Scope::block);
  if_(thread_idx().x == 0, [&] {
    nvshmem::peer_of(stamp.data(), right)[0] = me;
    nvshmem::quiet();
  });
  nvshmem::barrier_all(nvshmem::Scope::block);
}};

std::vector<float> ring_input(int pe, int n) { return fixtures::random_floats(size_t(n), 500u + unsigned(pe)); }

/// The ring on this PE, checked against the neighbours' inputs; `epoch` counts the calls.
void check_ring(const nvshmem::Session& s, uint64_t epoch) {
  const int n = 4096, left = (s.my_pe() + s.n_pes() - 1) % s.n_pes(), right = (s.my_pe() + 1) % s.n_pes();
  Buffer<float> mine = s.alloc<float>(n), theirs = s.alloc<float>(n), fetched = s.alloc<float>(n);
  Buffer<uint64_t> signal = s.alloc<uint64_t>(1);
  Buffer<int32_t> stamp = s.alloc<int32_t>(1);
  mine.upload(ring_input(s.my_pe(), n));
  theirs.fill(NAN), fetched.fill(NAN), signal.zero(), stamp.fill(-1);
  s.barrier_all();  // every PE's buffers are set before any PE's kernel writes into them
  ring(s.device(), Launch{.grid = 1, .block = 256}, mine, theirs, fetched, signal, stamp, epoch);
  s.device().synchronize();
  CHECK(theirs.to_host() == ring_input(left, n));
  CHECK(fetched.to_host() == ring_input(right, n));
  CHECK(stamp.to_host() == std::vector<int32_t>{left});
  CHECK(signal.to_host() == std::vector<uint64_t>{epoch});
}

/// The all-gather GEMM at a few shapes (M a multiple of 128 per PE), against a float64 product.
void check_allgather_gemm(const nvshmem::Session& s) {
  const int64_t p = s.n_pes();
  for (auto [m, n, k] : {std::array<int64_t, 3>{128 * p, 256, 512}, std::array<int64_t, 3>{512 * p, 1000, 1024},
                         std::array<int64_t, 3>{1024 * p, 2048, 512}}) {
    INFO("M = " << m << ", N = " << n << ", K = " << k << " on PE " << s.my_pe() << " of " << p);
    CHECK(fixtures::allgather_gemm_error(s, m, n, k) < 1e-2);
  }
}

/// Both all-reduce shapes at sizes from one vector to 32 MiB, bit for bit.
void check_allreduce(const nvshmem::Session& s) {
  for (size_t n : {size_t(8), size_t(4096 + 8), size_t(1 << 20) + 8, size_t(1) << 24}) {
    INFO("n = " << n << " on PE " << s.my_pe() << " of " << s.n_pes());
    CHECK(fixtures::allreduce_mismatches(s, n) == 0);
  }
}

}  // namespace

TEST_CASE("nvshmem: one PE in this process — puts, gets, signals, the all-reduces and the all-gather GEMM, and misuse refused", "[gpu][gpu_runtime]") {
  Device gpu;
  {
    nvshmem::UniqueId id;
    CHECK_THROWS_WITH(nvshmem::Session(gpu, 2, 2, id), Contains("rank 2 of 2 ranks"));
    CHECK_THROWS_WITH(nvshmem::Session(gpu, 0, 0, id), Contains("at least one rank"));
  }
  // A kernel that calls NVSHMEM, before there is a Session: refused at its first launch.
  {
    Buffer<float> a = gpu.alloc<float>(4096);
    Buffer<uint64_t> sig = gpu.alloc<uint64_t>(1);
    Buffer<int32_t> stamp = gpu.alloc<int32_t>(1);
    CHECK_THROWS_WITH(ring(gpu, Launch{.grid = 1, .block = 256}, a, a, a, sig, stamp, uint64_t(1)),
                      Contains("kernel 'nvshmem_ring' calls NVSHMEM, and this process has no nvshmem::Session"));
  }
  nvshmem::Session s(gpu);
  CHECK(s.my_pe() == 0);
  CHECK(s.n_pes() == 1);
  CHECK(s.node_pe() == 0);
  CHECK(s.node_pes() == 1);
  CHECK_THROWS_WITH(nvshmem::Session(gpu), Contains("this process has one already"));

  for (uint64_t epoch = 1; epoch <= 2; ++epoch) check_ring(s, epoch);
  check_allreduce(s);
  check_allgather_gemm(s);
  // The operators refuse memory outside the symmetric heap and sizes they cannot take, at this
  // file's lines, before any launch.
  {
    kernels::AllReduce reduce(s);
    Buffer<bf16> sym = s.alloc<bf16>(64), plain16 = gpu.alloc<bf16>(64);
    const auto one_shot = kernels::AllReduce::Shape::one_shot;
    CHECK_THROWS_WITH(reduce(one_shot, plain16.view({64}), sym.view({64})),
                      Contains("test_nvshmem_gpu.cpp:") && Contains("x is not in NVSHMEM's symmetric heap"));
    CHECK_THROWS_WITH(reduce(one_shot, sym.view({60}), sym.view({60})),
                      Contains("test_nvshmem_gpu.cpp:") && Contains("a positive multiple of 8 elements"));
    CHECK_THROWS_WITH(kernels::AllGatherGemm(s, 100, 64), Contains("test_nvshmem_gpu.cpp:") && Contains("M must be a positive multiple of 128"));
  }

  Buffer<float> x = s.alloc<float>(1000);
  CHECK(s.peer_address(x, 0) == x.data());
  CHECK_THROWS_WITH(s.peer_address(x, 1), Contains("PE 1 is outside [0, 1)"));
  // Memory from cuMemAlloc is not symmetric: NVSHMEM has no peer address for it.
  Buffer<float> plain = gpu.alloc<float>(1000);
  CHECK(s.peer_address(plain, 0) == 0);
}

// One PE of the job below, in a process of its own (CUTEJIT_TEST_NVSHMEM_RANK, _RANKS, _ID_FILE).
TEST_CASE("nvshmem: one PE of a job of processes", "[.nvshmem_rank]") {
  const char* rank_text = std::getenv("CUTEJIT_TEST_NVSHMEM_RANK");
  const char* ranks_text = std::getenv("CUTEJIT_TEST_NVSHMEM_RANKS");
  const char* id_file = std::getenv("CUTEJIT_TEST_NVSHMEM_ID_FILE");
  INFO("started by the job test below, which sets CUTEJIT_TEST_NVSHMEM_RANK, _RANKS and _ID_FILE");
  REQUIRE((rank_text && ranks_text && id_file));
  const int rank = std::atoi(rank_text), ranks = std::atoi(ranks_text);
  Device gpu(rank);
  nvshmem::UniqueId id = nvshmem::exchange_unique_id(id_file, rank);
  nvshmem::Session s(gpu, rank, ranks, id);
  CHECK(s.my_pe() == rank);
  CHECK(s.n_pes() == ranks);
  CHECK(s.node_pes() == ranks);
  check_ring(s, 1);
  check_allreduce(s);
  check_allgather_gemm(s);
  // Every PE asks for a different size: each is told, and nothing is allocated. (With one PE
  // there is nothing to disagree with: that run does not check this.)
  if (ranks > 1) CHECK_THROWS_WITH(s.alloc<float>(size_t(1000 + rank)), Contains("the PEs' requests range from 4000 to"));
}

TEST_CASE("nvshmem: a job of one process per GPU, bootstrapped by unique id", "[gpu][gpu_runtime]") {
  const int ranks = Device::count();
  const auto file = std::filesystem::temp_directory_path() / ("cutejit_nvshmem_job_" + std::to_string(getpid()));
  std::filesystem::remove(file);
  std::vector<pid_t> pids;
  for (int rank = 0; rank < ranks; ++rank) {
    // The parent's environment (NVSHMEM's settings among it) and the rank's three variables.
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    env.push_back("CUTEJIT_TEST_NVSHMEM_RANK=" + std::to_string(rank));
    env.push_back("CUTEJIT_TEST_NVSHMEM_RANKS=" + std::to_string(ranks));
    env.push_back("CUTEJIT_TEST_NVSHMEM_ID_FILE=" + file.string());
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string self = std::filesystem::read_symlink("/proc/self/exe").string(), filter = "[.nvshmem_rank]";
    char* argv[] = {self.data(), filter.data(), nullptr};
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, argv, envp.data()) == 0);
    pids.push_back(pid);
  }
  // Each rank must finish, and pass, within the limit; a rank that hangs is killed, not waited on.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  for (pid_t pid : pids) {
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        for (pid_t p : pids) kill(p, SIGKILL);
        waitpid(pid, &status, 0);
        FAIL("a rank of the NVSHMEM job did not finish within 240 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  std::filesystem::remove(file);
}
