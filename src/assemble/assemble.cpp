#include "assemble/assemble.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>

#include <nvJitLink.h>

#include "cutejit/core/error.hpp"
#include "support/cuda_toolkit.hpp"
#include "core/warnings.hpp"

extern char** environ;

namespace cutejit::detail {

namespace {

enum class Choice { automatic, nvjitlink, ptxas };

/// CUTEJIT_ASSEMBLER: empty or "auto" (nvJitLink, else ptxas), "nvjitlink" or "ptxas"; any
/// other value is reported once and read as "auto".
Choice assembler_choice() {
  std::string v = setting("CUTEJIT_ASSEMBLER");
  for (char& c : v) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (v == "ptxas") return Choice::ptxas;
  if (v == "nvjitlink") return Choice::nvjitlink;
  if (!v.empty() && v != "auto")
    warn_once("CUTEJIT_ASSEMBLER", "CUTEJIT_ASSEMBLER='" + v + "' is not one of auto, nvjitlink and ptxas; using auto (nvJitLink, else ptxas)");
  return Choice::automatic;
}

/// The nvJitLink library cutejit would use: the toolkit's own first, then the library path.
/// Found without loading it, so that a disk-cache hit (whose key names the assembler) never
/// pays for the dlopen.
std::string nvjitlink_path() {
  if (assembler_choice() == Choice::ptxas) return "";
  return toolkit_library({"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"}, /*probe_by_loading=*/false);
}

/// nvJitLink's C API, resolved once with dlopen.
struct NvJitLink {
  using Handle = void*;
  int (*create)(Handle*, uint32_t, const char**) = nullptr;
  int (*destroy)(Handle*) = nullptr;
  int (*add_data)(Handle, int, const void*, size_t, const char*) = nullptr;
  int (*complete)(Handle) = nullptr;
  int (*cubin_size)(Handle, size_t*) = nullptr;
  int (*cubin)(Handle, void*) = nullptr;
  int (*error_log_size)(Handle, size_t*) = nullptr;
  int (*error_log)(Handle, char*) = nullptr;
  bool loaded = false;

  /// Loaded once per toolkit location (the location can only change through the environment).
  static const NvJitLink& get() {
    // Never destroyed: the warm-up thread may still be here while the process exits.
    static std::mutex& mutex = *new std::mutex;
    static std::map<std::string, NvJitLink>& loaded = *new std::map<std::string, NvJitLink>;
    std::string key = std::to_string(int(assembler_choice()));
    for (const auto& root : cuda_roots()) key += "|" + root.string();
    std::lock_guard lock(mutex);
    auto it = loaded.find(key);
    if (it == loaded.end()) it = loaded.emplace(key, load()).first;
    return it->second;
  }

 private:
  static NvJitLink load() {
    NvJitLink l;
    std::string path = nvjitlink_path();
    if (path.empty()) return l;
    // Lazy binding: the library's thousands of symbols are resolved as they are first called,
    // not all at the dlopen (measured: 8-10 ms instead of 23-50 ms for libnvJitLink.so.13).
    void* so = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!so) return l;
    load_symbol(so, l.create, "nvJitLinkCreate");
    load_symbol(so, l.destroy, "nvJitLinkDestroy");
    load_symbol(so, l.add_data, "nvJitLinkAddData");
    load_symbol(so, l.complete, "nvJitLinkComplete");
    load_symbol(so, l.cubin_size, "nvJitLinkGetLinkedCubinSize");
    load_symbol(so, l.cubin, "nvJitLinkGetLinkedCubin");
    load_symbol(so, l.error_log_size, "nvJitLinkGetErrorLogSize");
    load_symbol(so, l.error_log, "nvJitLinkGetErrorLog");
    l.loaded = l.create && l.destroy && l.add_data && l.complete && l.cubin_size && l.cubin && l.error_log_size && l.error_log;
    return l;
  }
};

std::vector<char> with_nvjitlink(const NvJitLink& nv, const std::string& ptx, const Target& target, const std::string& kernel,
                                 const std::vector<LinkedPtx>& linked) {
  std::string arch = "-arch=" + target.name();
  const char* options[] = {arch.c_str()};
  NvJitLink::Handle h = nullptr;
  if (nv.create(&h, 1, options) != 0) throw Error("nvJitLink could not start for " + target.name());
  auto log = [&] {
    size_t n = 0;
    nv.error_log_size(h, &n);
    std::string s(n, '\0');
    if (n) nv.error_log(h, s.data());
    return s;
  };
  std::vector<char> cubin;
  // The terminating NUL is part of the input: without it nvJitLink intermittently rejects PTX.
  int rc = nv.add_data(h, NVJITLINK_INPUT_PTX, ptx.c_str(), ptx.size() + 1, kernel.c_str());
  for (size_t i = 0; i < linked.size() && rc == 0; ++i)
    rc = nv.add_data(h, NVJITLINK_INPUT_PTX, linked[i].ptx.c_str(), linked[i].ptx.size() + 1, linked[i].name.c_str());
  if (rc == 0) rc = nv.complete(h);
  if (rc != 0) {
    std::string text = log();
    nv.destroy(&h);
    throw Error("error: nvJitLink rejected the PTX of kernel '" + kernel + "' for " + target.name() + " (code " +
                std::to_string(rc) + "):\n" + text);
  }
  size_t size = 0;
  nv.cubin_size(h, &size);
  cubin.resize(size);
  nv.cubin(h, cubin.data());
  nv.destroy(&h);
  return cubin;
}

std::filesystem::path find_ptxas() {
  std::error_code ec;  // a folder that cannot be searched has no ptxas for us
  for (const auto& root : cuda_roots())
    if (auto p = root / "bin" / "ptxas"; std::filesystem::exists(p, ec)) return p;
  if (const char* path = std::getenv("PATH"); path && !std::getenv("CUTEJIT_CUDA_HOME")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (auto p = std::filesystem::path(dir) / "ptxas"; !dir.empty() && std::filesystem::exists(p, ec)) return p;
  }
  return {};
}

/// ptxas accepts a kernel whose wgmma it had to serialize, and says so only in its log (C7510,
/// with the reason: a function call in the kernel, such as device_printf's, is one); such a
/// kernel runs its tensor cores one instruction at a time, so the log line is passed on.
void warn_if_wgmma_serialized(const std::string& log, const std::string& kernel) {
  const size_t at = log.find("(C7510)");
  if (at == std::string::npos) return;
  const size_t end = log.find('\n', at);
  warn_once("C7510 " + kernel, "kernel '" + kernel + "': ptxas reports wgmma serialized, each waited for before the next issues:" +
                                   log.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7));
}

std::vector<char> with_ptxas(const std::filesystem::path& ptxas, const std::string& ptx, const Target& target,
                             const std::string& kernel) {
  char dir_template[] = "/tmp/cutejit-ptxas-XXXXXX";
  if (!mkdtemp(dir_template)) throw Error("could not create a temporary directory for ptxas");
  std::filesystem::path dir(dir_template);
  auto in = dir / "kernel.ptx", out = dir / "kernel.cubin", log = dir / "log.txt";
  std::ofstream(in) << ptx;
  std::string arch = "-arch=" + target.name();
  std::string cmd_out = "-o";
  std::vector<std::string> args{ptxas.string(), arch, cmd_out, out.string(), in.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (rc == 0) waitpid(pid, &status, 0);
  std::stringstream log_text;
  log_text << std::ifstream(log).rdbuf();
  std::vector<char> cubin;
  bool ok = rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (ok) {
    std::ifstream f(out, std::ios::binary);
    cubin.assign(std::istreambuf_iterator<char>(f), {});
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!ok || cubin.empty())
    throw Error("error: ptxas rejected the PTX of kernel '" + kernel + "' for " + target.name() + ":\n" + log_text.str());
  warn_if_wgmma_serialized(log_text.str(), kernel);
  return cubin;
}

/// Whether the kernel needs a whole-program compile. nvJitLink assembles each input as a separate
/// compilation unit, and ptxas then ignores setmaxnreg "to maintain compatibility across
/// compilation units" (C7504): a warp-specialised kernel keeps the entry's register cap in its
/// consumers, and one that needs more spills (measured with CUDA 13.0: the attention forward's
/// consumers, 168 registers and 184 bytes of stack through nvJitLink, none through ptxas).
bool needs_whole_program(const std::string& ptx) { return ptx.find("setmaxnreg") != std::string::npos; }

}  // namespace

Assembled assemble(const std::string& ptx, const Target& target, const std::string& kernel, const std::vector<LinkedPtx>& linked) {
  const Choice choice = assembler_choice();
  if (choice == Choice::automatic && linked.empty() && needs_whole_program(ptx)) {
    std::filesystem::path ptxas = find_ptxas();
    if (!ptxas.empty()) return {with_ptxas(ptxas, ptx, target, kernel), "ptxas"};
    warn_once("setmaxnreg without ptxas", "kernel '" + kernel +
                                              "' rebalances registers (setmaxnreg), which nvJitLink ignores; without the toolkit's "
                                              "ptxas (not found: " + searched_for({"bin"}, true) + ") it may spill");
  }
  const NvJitLink& nv = NvJitLink::get();
  if (nv.loaded) return {with_nvjitlink(nv, ptx, target, kernel, linked), "nvJitLink"};
  if (choice == Choice::nvjitlink)
    throw Error("CUTEJIT_ASSEMBLER=nvjitlink, but libnvJitLink.so (CUDA 12 or 13) could not be loaded: " + searched_for({"lib64"}, true));
  if (!linked.empty())
    throw Error("kernel '" + kernel + "' calls CUDA functions, and linking them needs libnvJitLink.so (CUDA 12 or 13)" +
                (choice == Choice::ptxas ? ", which CUTEJIT_ASSEMBLER=ptxas turns off" : ", which was not found: " + searched_for({"lib64"}, true)) +
                "; ptxas alone cannot link");
  std::filesystem::path ptxas = find_ptxas();
  if (!ptxas.empty()) return {with_ptxas(ptxas, ptx, target, kernel), "ptxas"};
  throw Error("cannot turn PTX into a cubin: neither libnvJitLink.so (CUDA 12 or 13) nor ptxas was found: " +
              searched_for({"lib64", "bin"}, true));
}

void warm_up_assembler() {
  // Only the dlopen, which maps and relocates the library (most of its start-up), holding none
  // of cutejit's locks: the compile that follows finds it loaded. No call into nvJitLink, whose
  // state a process that exits meanwhile may tear down; the loader serializes a dlopen with the
  // exit's unloading, so the thread is detached. The handle is kept: the library stays loaded.
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = nvjitlink_path();
    if (path.empty()) return;
    try {
      std::thread([path] { dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL); }).detach();
    } catch (const std::system_error&) {
      // No thread to spare: the first compile loads the library itself.
    }
  });
}

std::string assembler_version() {
  // The resolved file name (libnvJitLink.so.13, or libnvJitLink.so.13.0.88 where the toolkit
  // ships it so) and its size tell two toolkits apart.
  // In auto mode both can be in use (ptxas for the kernels that need a whole-program compile),
  // so both are named.
  std::error_code ec;
  std::string ptxas_version;
  if (assembler_choice() != Choice::nvjitlink) {
    if (std::filesystem::path ptxas = find_ptxas(); !ptxas.empty()) {
      auto size = std::filesystem::file_size(ptxas, ec);
      ptxas_version = "ptxas " + std::filesystem::canonical(ptxas, ec).string() + " " + std::to_string(ec ? 0 : size);
    }
  }
  if (std::string path = nvjitlink_path(); !path.empty()) {
    auto size = std::filesystem::file_size(path, ec);
    std::string version = "nvJitLink " + path + (ec ? "" : " " + std::to_string(size));
    return ptxas_version.empty() ? version : version + ", " + ptxas_version;
  }
  return ptxas_version.empty() ? "none" : ptxas_version;
}

}  // namespace cutejit::detail
