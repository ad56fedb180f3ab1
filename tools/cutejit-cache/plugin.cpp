// Loading the user's plugin (--plugin): first in a child process, so that a plugin whose static
// initialisers throw, crash or call exit() is reported by name instead of taking the CLI down
// with it (or, with exit(0), ending it quietly as if it had succeeded).
#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>

#include <cutejit/core/error.hpp>
#include <cutejit/jit/autotune.hpp>

#include "work_list.hpp"

extern char** environ;

namespace cli {

namespace {

/// What the child prints on stdout when the plugin loaded: the parent's proof that the child
/// ended by returning, not by a plugin's exit().
constexpr std::string_view loaded_marker = "cutejit-cache: plugin loaded\n";

/// A path without a slash would be searched for in the library path; the user means the file.
std::string as_file(const std::string& path) { return path.find('/') == std::string::npos ? "./" + path : path; }

std::string describe_current_exception() {
  try {
    throw;
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what();
  } catch (...) {
    return "threw an exception that is not a std::exception";
  }
}

const char* plugin_being_probed = nullptr;

/// Runs the child's side; what it reports goes to stdout, for the parent to pass on.
[[noreturn]] void report_and_exit(const std::string& message, int code) {
  std::fputs(message.c_str(), stdout);
  std::fflush(stdout);
  _exit(code);
}

/// Runs `cutejit-cache --probe-plugin FILE` and returns its stdout and wait status.
std::pair<std::string, int> run_probe(const std::string& file) {
  int out[2];
  if (pipe(out) != 0) throw cutejit::Error(std::string("error: cannot start a process to load the plugin in: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string(), flag = probe_flag;
  std::string plugin = file;
  char* argv[] = {self.data(), flag.data(), plugin.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) != 0;)
    if (n > 0) output.append(buffer, size_t(n));
    else if (errno != EINTR) break;
  close(out[0]);
  if (rc != 0) throw cutejit::Error(std::string("error: cannot start a process to load the plugin in: ") + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {output, status};
}

}  // namespace

void probe_plugin(const char* file) {
  plugin_being_probed = file;
  // An exception out of a static initialiser may not cross dlopen: it then ends here.
  std::set_terminate([] {
    report_and_exit("error: the plugin " + std::string(plugin_being_probed) + " " + describe_current_exception() +
                        " while it was being loaded (in its static initialisers)\n",
                    3);
  });
  try {
    if (!dlopen(file, RTLD_NOW | RTLD_LOCAL)) report_and_exit(std::string("error: cannot load the plugin ") + file + ": " + dlerror() + "\n", 3);
  } catch (...) {
    report_and_exit("error: the plugin " + std::string(file) + " " + describe_current_exception() +
                        " while it was being loaded (in its static initialisers)\n",
                    3);
  }
  report_and_exit(std::string(loaded_marker), 0);
}

void load_plugin(const std::string& path) {
  const std::string file = as_file(path);
  auto [output, status] = run_probe(file);
  if (WIFSIGNALED(status)) {
    const char* abbreviation = sigabbrev_np(WTERMSIG(status));
    throw cutejit::Error("error: the plugin " + path + " crashed while it was being loaded (SIG" + (abbreviation ? abbreviation : "?") + ", " +
                         strsignal(WTERMSIG(status)) + ", in its static initialisers); nothing was compiled");
  }
  if (output.ends_with(loaded_marker) && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    // Loaded in the child: now here, where the kernels it registers are compiled.
  } else if (size_t at = output.rfind("error: "); at != std::string::npos) {  // after anything the plugin printed
    throw cutejit::Error(output.substr(at, output.find_last_not_of('\n') + 1 - at));
  } else {
    throw cutejit::Error("error: the plugin " + path + " ended the process with exit(" + std::to_string(WEXITSTATUS(status)) +
                         ") while it was being loaded (in its static initialisers); a plugin must only define and register "
                         "kernels. Nothing was compiled");
  }

  auto registered = [] { return cutejit::registered_kernels().size() + cutejit::registered_tunings().size(); };
  size_t before = registered();
  if (!dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL))
    throw cutejit::Error("error: cannot load the plugin " + path + ": " + dlerror());
  if (registered() == before)
    throw cutejit::Error("error: the plugin " + path +
                         " registers no kernels; put CUTEJIT_REGISTER(kernel) next to each kernel it defines (and "
                         "CUTEJIT_REGISTER_TUNING for tuning questions), and link it "
                         "against the same libcutejit as this tool");
}

}  // namespace cli
