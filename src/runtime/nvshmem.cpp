#include "cutejit/runtime/nvshmem.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "cutejit/core/error.hpp"
#include "driver/driver.hpp"
#include "runtime/nvshmem_abi.hpp"
#include "runtime/nvshmem_module.hpp"
#include "support/cuda_toolkit.hpp"
#include "support/nvshmem_home.hpp"

namespace cutejit {

namespace detail {

namespace {

namespace abi = nvshmem_abi;

/// NVSHMEM's host API, resolved once with dlopen.
struct HostLibrary {
  nvshmem::Library info;
  int (*get_uniqueid)(abi::UniqueId*) = nullptr;
  int (*set_attr_uniqueid_args)(int, int, const abi::UniqueId*, abi::InitAttr*) = nullptr;
  int (*hostlib_init_attr)(unsigned, abi::InitAttr*) = nullptr;
  void (*hostlib_finalize)() = nullptr;
  void (*version)(int*, int*, int*) = nullptr;
  int (*my_pe)() = nullptr;
  int (*n_pes)() = nullptr;
  int (*team_my_pe)(int) = nullptr;
  int (*team_n_pes)(int) = nullptr;
  void* (*malloc)(size_t) = nullptr;
  void (*free)(void*) = nullptr;
  void* (*ptr)(const void*, int) = nullptr;
  void (*barrier_all_on_stream)(CUstream) = nullptr;
  int (*cumodule_init)(CUmodule) = nullptr;
  int (*int64_max_reduce)(int, int64_t*, const int64_t*, size_t) = nullptr;

  /// The library, loaded once per file (where it is found depends on the environment);
  /// throws saying what is missing or wrong.
  static const HostLibrary& get() {
    const std::filesystem::path dir = nvshmem_library_dir();
    const std::filesystem::path file = dir / "libnvshmem_host.so.3";
    std::error_code ec;
    if (dir.empty() || !std::filesystem::exists(file, ec))
      throw Error("NVSHMEM's host library (libnvshmem_host.so.3) was not found: " + nvshmem_searched());
    // Never destroyed: NVSHMEM may still be finalising while the process exits.
    static std::mutex& mutex = *new std::mutex;
    static std::map<std::string, HostLibrary>& loaded = *new std::map<std::string, HostLibrary>;
    std::lock_guard lock(mutex);
    auto it = loaded.find(file.string());
    if (it == loaded.end()) it = loaded.emplace(file.string(), load(file)).first;
    return it->second;
  }

 private:
  static HostLibrary load(const std::filesystem::path& file) {
    // Its bootstrap and transport plugins sit beside it; it finds them through its RPATH.
    void* so = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!so) throw Error("NVSHMEM's host library " + file.string() + " could not be loaded: " + dlerror());
    HostLibrary l;
    l.info.path = file.string();
    std::string missing;
    auto sym = [&](auto& fn, const char* name) {
      load_symbol(so, fn, name);
      if (!fn) missing += std::string(" ") + name;
    };
    sym(l.version, "nvshmemx_vendor_get_version_info");
    sym(l.get_uniqueid, "nvshmemx_get_uniqueid");
    sym(l.set_attr_uniqueid_args, "nvshmemx_set_attr_uniqueid_args");
    sym(l.hostlib_init_attr, "nvshmemx_hostlib_init_attr");
    sym(l.hostlib_finalize, "nvshmemx_hostlib_finalize");
    sym(l.my_pe, "nvshmem_my_pe");
    sym(l.n_pes, "nvshmem_n_pes");
    sym(l.team_my_pe, "nvshmem_team_my_pe");
    sym(l.team_n_pes, "nvshmem_team_n_pes");
    sym(l.malloc, "nvshmem_malloc");
    sym(l.free, "nvshmem_free");
    sym(l.ptr, "nvshmem_ptr");
    sym(l.barrier_all_on_stream, "nvshmemx_barrier_all_on_stream");
    sym(l.cumodule_init, "nvshmemx_cumodule_init");
    sym(l.int64_max_reduce, "nvshmem_int64_max_reduce");
    if (l.version) l.version(&l.info.major, &l.info.minor, &l.info.patch);
    if (l.info.major != 3)
      throw Error(fmt::format("{} is NVSHMEM {}; cutejit needs release 3 (pip install nvidia-nvshmem-cu13, or set CUTEJIT_NVSHMEM_HOME)",
                              file.string(), l.version ? l.info.version() : "of an unknown release"));
    if (!missing.empty()) throw Error(file.string() + " (NVSHMEM " + l.info.version() + ") lacks" + missing);
    return l;
  }
};

/// The process's Session: NVSHMEM is one per process.
std::atomic<const nvshmem::Session*> active_session{nullptr};

void make_current(void* context) {
  const Driver& d = Driver::get();
  d.check(d.cuCtxSetCurrent(static_cast<CUcontext>(context)), "cuCtxSetCurrent");
}

}  // namespace

void init_nvshmem_module(void* module, void* context, const std::vector<char>& cubin, const std::string& kernel) {
  // Only a cubin linked with NVSHMEM's device library names its state. The driver is asked only
  // then: asking it of every module fails (harmlessly) in each, which compute-sanitizer reports.
  constexpr std::string_view state_symbol = "nvshmemi_device_state_d";
  if (std::string_view(cubin.data(), cubin.size()).find(state_symbol) == std::string_view::npos) return;
  const Driver& d = Driver::get();
  CUdeviceptr state = 0;
  size_t bytes = 0;
  if (d.cuModuleGetGlobal(&state, &bytes, static_cast<CUmodule>(module), state_symbol.data()) != CUDA_SUCCESS) return;
  const nvshmem::Session* session = active_session.load();
  if (!session)
    throw Error("kernel '" + kernel + "' calls NVSHMEM, and this process has no nvshmem::Session; make one (cutejit/runtime/nvshmem.hpp) "
                "before the kernel's first launch");
  if (session->device().context() != context)
    throw Error(fmt::format("kernel '{}' calls NVSHMEM and is launched on another GPU than the one NVSHMEM runs on (GPU {}); launch it on "
                            "the Session's device",
                            kernel, session->device().ordinal()));
  if (int rc = HostLibrary::get().cumodule_init(static_cast<CUmodule>(module)); rc != 0)
    throw Error(fmt::format("NVSHMEM could not set up kernel '{}' (nvshmemx_cumodule_init returned {}): the kernel was compiled "
                            "against another NVSHMEM release than the host library {} ({}); NVSHMEM's message above says which",
                            kernel, rc, HostLibrary::get().info.path, HostLibrary::get().info.version()));
}

}  // namespace detail

namespace nvshmem {

namespace abi = detail::nvshmem_abi;
using detail::Driver;
using detail::HostLibrary;

Library library() { return HostLibrary::get().info; }

UniqueId UniqueId::create() {
  const HostLibrary& lib = HostLibrary::get();
  abi::UniqueId id{};
  id.version = abi::unique_id_version;
  if (int rc = lib.get_uniqueid(&id); rc != 0) throw Error(fmt::format("NVSHMEM could not make a unique id (nvshmemx_get_uniqueid returned {})", rc));
  UniqueId out;
  std::memcpy(out.bytes.data(), &id, sizeof id);
  return out;
}

UniqueId exchange_unique_id(const std::filesystem::path& file, int rank, std::chrono::milliseconds timeout) {
  std::error_code ec;
  UniqueId id;
  if (rank == 0) {
    if (std::filesystem::exists(file, ec))
      throw Error("nvshmem::exchange_unique_id: " + file.string() +
                  " exists already; a file left by an earlier job would send the other ranks to it: remove it before the job starts");
    id = UniqueId::create();
    const std::filesystem::path partial = file.string() + ".partial." + std::to_string(getpid());
    {
      std::ofstream out(partial, std::ios::binary);
      out.write(reinterpret_cast<const char*>(id.bytes.data()), std::streamsize(id.bytes.size()));
      if (!out) throw Error("nvshmem::exchange_unique_id: could not write " + partial.string());
    }
    std::filesystem::rename(partial, file, ec);
    if (ec) throw Error("nvshmem::exchange_unique_id: could not rename " + partial.string() + " to " + file.string() + ": " + ec.message());
    return id;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(file, std::ios::binary);
    if (in && in.read(reinterpret_cast<char*>(id.bytes.data()), std::streamsize(id.bytes.size())) && in.peek() == EOF) return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw Error(fmt::format("nvshmem::exchange_unique_id: rank {} waited {} ms for rank 0's id in {}, and it did not come", rank,
                          timeout.count(), file.string()));
}

Session::Session(const Device& gpu) : gpu_(&gpu) { start(0, 1, UniqueId::create()); }

Session::Session(const Device& gpu, int rank, int ranks, const UniqueId& id) : gpu_(&gpu) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw Error(fmt::format("nvshmem::Session: rank {} of {} ranks; a job has at least one rank, numbered from 0 to ranks - 1", rank, ranks));
  start(rank, ranks, id);
}

void Session::start(int rank, int ranks, const UniqueId& id) {
  const HostLibrary& lib = HostLibrary::get();
  const Session* none = nullptr;
  if (!detail::active_session.compare_exchange_strong(none, this))
    throw Error("nvshmem::Session: this process has one already; NVSHMEM runs once per process, on one GPU");
  try {
    detail::make_current(gpu_->context());
    abi::UniqueId uid;
    std::memcpy(&uid, id.bytes.data(), sizeof uid);
    abi::InitAttr attr = abi::default_init_attr();
    attr.args.cuda_device_id = gpu_->ordinal();
    if (int rc = lib.set_attr_uniqueid_args(rank, ranks, &uid, &attr); rc != 0)
      throw Error(fmt::format("nvshmem::Session: NVSHMEM refused rank {} of {} with this id (nvshmemx_set_attr_uniqueid_args returned {})",
                              rank, ranks, rc));
    if (int rc = lib.hostlib_init_attr(abi::init_with_unique_id, &attr); rc != 0)
      throw Error(fmt::format("nvshmem::Session: NVSHMEM {} did not start as rank {} of {} on GPU {} (code {}); its messages above say "
                              "why, and NVSHMEM_DEBUG=INFO makes them fuller",
                              lib.info.version(), rank, ranks, gpu_->ordinal(), rc));
    my_pe_ = lib.my_pe(), n_pes_ = lib.n_pes();
    node_pe_ = lib.team_my_pe(abi::team_node), node_pes_ = lib.team_n_pes(abi::team_node);
    scratch_ = reinterpret_cast<uint64_t>(lib.malloc(4 * sizeof(int64_t)));
    if (!scratch_) throw Error("nvshmem::Session: NVSHMEM's symmetric heap has no room for 32 bytes");
  } catch (...) {
    detail::active_session.store(nullptr);
    throw;
  }
}

Session::~Session() {
  const HostLibrary& lib = HostLibrary::get();
  if (Driver::available()) detail::make_current(gpu_->context());
  if (scratch_) lib.free(reinterpret_cast<void*>(scratch_));
  lib.hostlib_finalize();
  detail::active_session.store(nullptr);
}

uint64_t Session::allocate_bytes(size_t bytes) const {
  const HostLibrary& lib = HostLibrary::get();
  detail::make_current(gpu_->context());
  // Every PE must ask for the same size. The largest request and the largest negated one,
  // reduced over all PEs, are equal to ours exactly when every PE asked for what we did.
  const int64_t mine[2] = {int64_t(bytes), -int64_t(bytes)};
  int64_t reduced[2] = {0, 0};
  const Driver& d = Driver::get();
  auto* src = reinterpret_cast<int64_t*>(scratch_);
  d.check(d.cuMemcpyHtoD(scratch_, mine, sizeof mine), "cuMemcpyHtoD");
  if (int rc = lib.int64_max_reduce(abi::team_world, src + 2, src, 2); rc != 0)
    throw Error(fmt::format("nvshmem::Session::alloc: NVSHMEM's size check across PEs failed (code {})", rc));
  d.check(d.cuCtxSynchronize(), "cuCtxSynchronize");
  d.check(d.cuMemcpyDtoH(reduced, scratch_ + 2 * sizeof(int64_t), sizeof reduced), "cuMemcpyDtoH");
  if (reduced[0] != int64_t(bytes) || -reduced[1] != int64_t(bytes))
    throw Error(fmt::format("nvshmem::Session::alloc: PE {} asked for {} bytes, but the PEs' requests range from {} to {} bytes; every PE "
                            "allocates the same symmetric memory, in the same order",
                            my_pe_, bytes, -reduced[1], reduced[0]));
  if (bytes == 0) return 0;
  void* p = lib.malloc(bytes);
  if (!p)
    throw Error(fmt::format("nvshmem::Session::alloc: NVSHMEM's symmetric heap has no room for {} more bytes; NVSHMEM_SYMMETRIC_SIZE sets "
                            "its size (default 1 GiB)",
                            bytes));
  return reinterpret_cast<uint64_t>(p);
}

uint64_t Session::peer_address_of(uint64_t ptr, int pe) const {
  if (pe < 0 || pe >= n_pes_) throw Error(fmt::format("nvshmem::Session::peer_address: PE {} is outside [0, {})", pe, n_pes_));
  return reinterpret_cast<uint64_t>(HostLibrary::get().ptr(reinterpret_cast<const void*>(ptr), pe));
}

void Session::barrier_all(StreamHandle stream) const {
  detail::make_current(gpu_->context());
  HostLibrary::get().barrier_all_on_stream(static_cast<CUstream>(stream));
}

void Session::release_symmetric(uint64_t ptr, void* context) noexcept {
  // Memory that outlives its Session went with NVSHMEM's heap.
  if (!detail::active_session.load() || !Driver::available()) return;
  Driver::get().cuCtxSetCurrent(static_cast<CUcontext>(context));
  HostLibrary::get().free(reinterpret_cast<void*>(ptr));
}

}  // namespace nvshmem

}  // namespace cutejit
