// What the multi-GPU benchmarks share: one process per GPU, each this same program started again
// with its rank in the environment (CUTEJIT_BENCH_RANK, _RANKS, _ID_FILE), and NVSHMEM's unique id
// handed over through a file.
#pragma once

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <cutejit/cutejit.hpp>

extern char** environ;

namespace job {

/// In a rank's process: its Session. Elsewhere: null.
inline std::unique_ptr<cutejit::nvshmem::Session> rank_session(std::unique_ptr<cutejit::Device>& gpu) {
  const char* rank = std::getenv("CUTEJIT_BENCH_RANK");
  if (!rank) return nullptr;
  const int r = std::atoi(rank);
  gpu = std::make_unique<cutejit::Device>(r);
  return std::make_unique<cutejit::nvshmem::Session>(*gpu, r, std::atoi(std::getenv("CUTEJIT_BENCH_RANKS")),
                                                     cutejit::nvshmem::exchange_unique_id(std::getenv("CUTEJIT_BENCH_ID_FILE"), r));
}

/// Starts `ranks` processes of this program with `argv` and the environment as given (NVSHMEM's
/// settings among it), plus each rank's variables and `extra` ("NAME=value", unless NAME is set);
/// waits for all and returns how many failed.
inline int run_ranks(int ranks, char** argv, const std::vector<std::string>& extra = {}) {
  const std::string id_file = (std::filesystem::temp_directory_path() / ("cutejit_bench_ranks_" + std::to_string(getpid()))).string();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < ranks; ++rank) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    env.push_back("CUTEJIT_BENCH_RANK=" + std::to_string(rank));
    env.push_back("CUTEJIT_BENCH_RANKS=" + std::to_string(ranks));
    env.push_back("CUTEJIT_BENCH_ID_FILE=" + id_file);
    for (const std::string& e : extra)
      if (!std::getenv(e.substr(0, e.find('=')).c_str())) env.push_back(e);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()) != 0)
      throw cutejit::Error("cannot start rank " + std::to_string(rank));
    pids.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::filesystem::remove(id_file);
  return failed;
}

/// The number of ranks a benchmark was asked for (argv[1], else every GPU), checked.
inline int ranks_wanted(int argc, char** argv) {
  const int gpus = cutejit::Device::count();
  const int ranks = argc > 1 ? std::atoi(argv[1]) : gpus;
  if (ranks < 1 || ranks > gpus)
    throw cutejit::Error(std::to_string(ranks) + " ranks asked for, but this machine has " + std::to_string(gpus) + " GPUs");
  return ranks;
}

}  // namespace job
