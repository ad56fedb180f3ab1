// Start-up with every kernel already in the disk cache: time from process start to the first
// kernel launched and finished, next to the process's own CUDA context creation. Runs itself
// as child processes: once into an empty cache directory (cold JIT), then several times warm.
// peers_startup.py measures Triton the same way in the same device call.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gemm_bf16.hpp"
#include "vector_add.hpp"

extern char** environ;

using namespace cutejit;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since_spawn(int64_t spawned_ns) {
  // steady_clock is CLOCK_MONOTONIC: the same clock in parent and child.
  return double(Clock::now().time_since_epoch().count() - spawned_ns) / 1e6;
}

/// One fresh process: create the context, launch `which` once, report the times.
int child(const std::string& which, int64_t spawned_ns) {
  double at_main = ms_since_spawn(spawned_ns);
  Device gpu;
  double at_context = ms_since_spawn(spawned_ns);
  if (which == "vector_add") {
    auto a = gpu.alloc<float>(1 << 20), b = gpu.alloc<float>(1 << 20), c = gpu.alloc<float>(1 << 20);
    fixtures::vector_add(gpu, fixtures::vector_add_launch(1 << 20), a, b, c);
    gpu.synchronize();
  } else {
    const int64_t n = 1024;
    auto a = gpu.alloc<bf16>(n * n), b = gpu.alloc<bf16>(n * n), c = gpu.alloc<bf16>(n * n);
    fixtures::gemm_bf16_run(gpu, a, b, c, n, n, n);
    gpu.synchronize();
  }
  double at_first = ms_since_spawn(spawned_ns);
  // Where a cache hit's time goes: the same specialization compiled again reads the disk cache.
  const int64_t n = which == "vector_add" ? 1 << 20 : 1024;
  auto v = DeviceTensor<f32>::make(256, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1});
  CompiledKernel hit =
      which == "vector_add" ? fixtures::vector_add.compile(gpu.target(), v, v, v) : fixtures::gemm_bf16_check(n, n, n).compile(gpu.target());
  std::printf("%s %.2f %.2f %.2f %.2f %.2f %.2f %d\n", which.c_str(), at_main, at_context, at_first, hit.times.trace_ms,
              hit.times.verify_ms, hit.times.cache_ms, int(hit.from_cache));
  return 0;
}

struct Times {
  double main, context, first;
  double trace, verify, cache;  ///< a disk-cache hit of the same kernel, in the child
  int hit;
};

Times run_child(const std::string& self, const std::string& which) {
  std::string spawned = std::to_string(Clock::now().time_since_epoch().count());
  std::vector<std::string> words{self, "--child", which, spawned};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ) != 0) std::exit(1);
  close(fds[1]);
  char text[256] = {};
  ssize_t got = read(fds[0], text, sizeof text - 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  Times t{};
  char name[64];
  if (got <= 0 || std::sscanf(text, "%63s %lf %lf %lf %lf %lf %lf %d", name, &t.main, &t.context, &t.first, &t.trace, &t.verify,
                              &t.cache, &t.hit) != 8) {
    std::fprintf(stderr, "startup child failed: %s\n", text);
    std::exit(1);
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--child") return child(argv[2], std::stoll(argv[3]));
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string dir = (std::filesystem::temp_directory_path() / ("cutejit-startup-" + std::to_string(getpid()))).string();
  setenv("CUTEJIT_CACHE_DIR", dir.c_str(), 1);
  unsetenv("CUTEJIT_CACHE");
  for (const char* which : {"vector_add", "gemm_bf16"}) {
    Times cold = run_child(self, which);
    std::vector<Times> warm;
    for (int i = 0; i < 7; ++i) warm.push_back(run_child(self, which));
    std::sort(warm.begin(), warm.end(), [](const Times& a, const Times& b) { return a.first - a.context < b.first - b.context; });
    const Times& m = warm[warm.size() / 2];
    std::printf("startup_%s: cold cache: context %.1f ms, first launch done %.1f ms later | warm cache (median of 7): "
                "main at %.1f ms, context at %.1f ms, first launch done %.2f ms after the context (%.1f ms from spawn); "
                "a hit costs trace %.2f + verify %.2f + print, hash and read %.2f ms%s\n",
                which, cold.context, cold.first - cold.context, m.main, m.context, m.first - m.context, m.first, m.trace, m.verify, m.cache,
                m.hit ? "" : " (NOT a cache hit)");
  }
  std::filesystem::remove_all(dir);
  return 0;
}
