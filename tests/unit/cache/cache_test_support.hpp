// What the cache tests share: a fresh cache directory per test, a kernel to compile, and a way
// to run this test program again as a separate process.
#pragma once

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <cutejit/cutejit.hpp>
#include <cutejit/cache/kernel_cache.hpp>

#include "support.hpp"
#include "vector_add.hpp"

extern char** environ;

namespace cache_test {

using test::ScopedEnv;

/// A fresh, empty directory that CUTEJIT_CACHE_DIR points at for the test's duration.
class TempCache {
 public:
  TempCache() : path_(make()), dir_("CUTEJIT_CACHE_DIR", path_.string()), on_("CUTEJIT_CACHE", std::nullopt) {}
  ~TempCache() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  cutejit::KernelCache cache() const { return cutejit::KernelCache(path_); }
  std::filesystem::path entry(const std::string& key) const { return path_ / "v1" / (key + ".entry"); }

 private:
  static std::filesystem::path make() {
    std::string pattern = (std::filesystem::temp_directory_path() / "cutejit-cache-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    return pattern;
  }
  std::filesystem::path path_;
  ScopedEnv dir_, on_;
};

inline cutejit::CompiledKernel compile_vector_add(const char* target = "sm_90a") {
  auto v = cutejit::DeviceTensor<cutejit::f32>::make(0, std::array<int64_t, 1>{1024}, std::array<int64_t, 1>{1});
  return fixtures::vector_add.compile(cutejit::Target::parse(target), v, v, v);
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
}

/// Starts this test program again with `args` (e.g. a hidden test's tag); returns its pid.
/// `actions`, if given, rearranges its file descriptors (posix_spawn's file actions).
inline pid_t spawn_self(const std::vector<std::string>& args, const posix_spawn_file_actions_t* actions = nullptr) {
  std::vector<std::string> words{std::filesystem::read_symlink("/proc/self/exe").string()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], actions, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

/// What a run of this test program again said, and how it ended (waitpid's status).
struct SelfRun {
  int status = -1;
  std::string output;  ///< stdout and stderr
};

/// Runs this test program again with `args` and waits for it, its output through a pipe: a
/// child under a file-size limit must not write to an inherited stdout that is a file.
inline SelfRun run_self(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, "pipe failed"};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  const pid_t pid = spawn_self(args, &actions);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  SelfRun run;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n > 0) run.output.append(buffer, size_t(n));
    else if (errno != EINTR) break;
  }
  close(fds[0]);
  if (pid < 0) return {-1, "posix_spawn failed"};
  if (waitpid(pid, &run.status, 0) != pid) run.status = -1;
  return run;
}

/// Waits for `pid`; true when it exited with status 0.
inline bool exited_cleanly(pid_t pid) {
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// The built cutejit-cache next to this test program's build directory.
inline std::filesystem::path cli_path() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "tools" / "cutejit-cache" / "cutejit-cache";
}

/// The test plugin (tests/plugin): example kernels registered for `--plugin`.
inline std::filesystem::path plugin_path() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / "libcutejit_test_kernels.so";
}

struct Run {
  int exit_code;
  std::string output;  ///< stdout and stderr
};

/// Runs cutejit-cache with `args` (shell words, the cache directory among them if any), after
/// `prefix` (e.g. a command that changes the user it runs as).
inline Run cli_raw_prefixed(const std::string& prefix, const std::string& args) {
  std::string command = prefix + cli_path().string() + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}
/// Runs cutejit-cache with `args` (shell words, the cache directory among them if any).
inline Run cli_raw(const std::string& args) { return cli_raw_prefixed("", args); }

/// Runs cutejit-cache on the test's cache directory with `args` (shell words).
inline Run cli(const TempCache& tmp, const std::string& args) { return cli_raw("--dir " + tmp.path().string() + " " + args); }

}  // namespace cache_test
