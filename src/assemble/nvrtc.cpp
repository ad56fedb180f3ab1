#include "assemble/nvrtc.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include <nvrtc.h>

#include "cutejit/core/error.hpp"
#include "support/cuda_toolkit.hpp"

namespace cutejit::detail {

namespace {

/// The file names NVRTC's messages use for the user's source and for the generated wrappers.
constexpr const char* user_file = "cuda_function";
constexpr const char* wrapper_file = "cutejit_call";

/// NVRTC is looked for on the library path by loading it: it is loaded only when a kernel
/// calls CUDA code anyway, and so CUDA 12's soname is found as well as 13's.
std::string nvrtc_path() { return toolkit_library({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, /*probe_by_loading=*/true); }

/// NVRTC's C API, resolved once per toolkit location.
struct Nvrtc {
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
  std::string path;
  bool loaded = false;

  static const Nvrtc& get() {
    static std::mutex mutex;
    static std::map<std::string, Nvrtc> loaded;
    std::string path = nvrtc_path();
    std::lock_guard lock(mutex);
    auto it = loaded.find(path);
    if (it == loaded.end()) it = loaded.emplace(path, load(path)).first;
    return it->second;
  }

 private:
  static Nvrtc load(const std::string& path) {
    Nvrtc n;
    n.path = path;
    void* so = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!so) return n;
    load_symbol(so, n.create, "nvrtcCreateProgram");
    load_symbol(so, n.compile, "nvrtcCompileProgram");
    load_symbol(so, n.log_size, "nvrtcGetProgramLogSize");
    load_symbol(so, n.log, "nvrtcGetProgramLog");
    load_symbol(so, n.ptx_size, "nvrtcGetPTXSize");
    load_symbol(so, n.ptx, "nvrtcGetPTX");
    load_symbol(so, n.destroy, "nvrtcDestroyProgram");
    load_symbol(so, n.error_string, "nvrtcGetErrorString");
    n.loaded = n.create && n.compile && n.log_size && n.log && n.ptx_size && n.ptx && n.destroy;
    return n;
  }
};

std::string names_of(const CudaProgram& p) {
  std::string s;
  for (const auto& n : p.names) s += (s.empty() ? "\"" : ", \"") + n + "\"";
  return s;
}

/// The text NVRTC compiles: the headers the wrappers need, the user's source, the wrappers.
std::string full_source(const CudaProgram& p) {
  std::string wrappers;
  for (const auto& w : p.wrappers) wrappers += w + "\n";
  std::string s;
  if (wrappers.find("half") != std::string::npos) s += "#include <cuda_fp16.h>\n";
  if (wrappers.find("bfloat16") != std::string::npos) s += "#include <cuda_bf16.h>\n";
  s += "#line 1 \"" + std::string(user_file) + "\"\n" + p.source + "\n";
  s += "#line 1 \"" + std::string(wrapper_file) + "\"\n" + wrappers;
  return s;
}

std::string line_of(const std::string& text, int n) {
  std::istringstream in(text);
  std::string line;
  for (int i = 1; std::getline(in, line); ++i)
    if (i == n) return line;
  return "";
}

/// NVRTC's log with each message put on the user's line ("line 3: error: ..." and the line
/// itself), or on the generated call when the wrapper is what failed to compile.
std::string explain_log(const std::string& log, const CudaProgram& p) {
  std::string wrappers;
  for (const auto& w : p.wrappers) wrappers += w + "\n";
  // "file(N): message" -> N and the message, when the line is from `file`.
  auto located = [](const std::string& line, const char* file, int& n, std::string& message) {
    const std::string prefix = std::string(file) + "(";
    size_t close = line.find("): ");
    if (line.rfind(prefix, 0) != 0 || close == std::string::npos) return false;
    n = std::atoi(line.substr(prefix.size(), close - prefix.size()).c_str());
    message = line.substr(close + 3);
    return true;
  };
  std::istringstream in(log);
  std::string line, out;
  while (std::getline(in, line)) {
    int n = 0;
    std::string message;
    if (located(line, user_file, n, message))
      line = "line " + std::to_string(n) + ": " + message + "\n    | " + line_of(p.source, n);
    else if (located(line, wrapper_file, n, message))
      line = "in the call cutejit generates: " + message + "\n    | " + line_of(wrappers, n);
    if (!line.empty()) out += "  " + line + "\n";
  }
  return out;
}

}  // namespace

std::string compile_cuda_program(const CudaProgram& program, const Target& target, const std::string& kernel) {
  const Nvrtc& nv = Nvrtc::get();
  if (!nv.loaded)
    throw Error(program.declared_at + ": error: kernel '" + kernel + "' calls cuda_function " + names_of(program) +
                ", which needs NVRTC (libnvrtc.so from the CUDA toolkit, 12 or 13), and it could not be loaded: " +
                searched_for({"lib64"}, true));

  std::vector<std::string> options{"-arch=compute_" + target.name().substr(3), "-rdc=true", "-std=c++17"};
  for (const auto& root : cuda_roots())
    if (std::error_code ec; std::filesystem::exists(root / "include" / "cuda_fp16.h", ec)) options.push_back("-I" + (root / "include").string());
  options.insert(options.end(), program.options.begin(), program.options.end());
  const std::string source = full_source(program);

  static std::mutex mutex;
  static std::map<std::string, std::string> compiled;
  std::string memo_key = nv.path + '\0' + source;
  for (const auto& o : options) memo_key += '\0' + o;
  {
    std::lock_guard lock(mutex);
    if (auto it = compiled.find(memo_key); it != compiled.end()) return it->second;
  }

  auto why = [&](nvrtcResult rc) { return std::string(" (") + (nv.error_string ? nv.error_string(rc) : "NVRTC error") + ")"; };
  nvrtcProgram prog = nullptr;
  if (nvrtcResult rc = nv.create(&prog, source.c_str(), user_file, 0, nullptr, nullptr); rc != NVRTC_SUCCESS)
    throw Error(program.declared_at + ": error: NVRTC could not start a program for cuda_function " + names_of(program) + why(rc));
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  nvrtcResult rc = nv.compile(prog, int(argv.size()), argv.data());
  size_t log_size = 0;
  nv.log_size(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) nv.log(prog, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  if (rc != NVRTC_SUCCESS) {
    nv.destroy(&prog);
    throw Error(program.declared_at + ": error: NVRTC could not compile the CUDA source of cuda_function " + names_of(program) +
                " for " + target.name() + " (kernel '" + kernel + "')" + why(rc) + ":\n" + explain_log(log, program));
  }
  size_t size = 0;
  nv.ptx_size(prog, &size);
  std::string ptx(size, '\0');
  nv.ptx(prog, ptx.data());
  nv.destroy(&prog);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  std::lock_guard lock(mutex);
  compiled.emplace(memo_key, ptx);
  return ptx;
}

std::string nvrtc_version() {
  std::error_code ec;
  std::string path = nvrtc_path();
  if (path.empty() || !std::filesystem::exists(path, ec)) return "nvrtc " + path;
  auto size = std::filesystem::file_size(path, ec);
  return "nvrtc " + path + (ec ? "" : " " + std::to_string(size));
}

}  // namespace cutejit::detail
