// NVSHMEM without a GPU: kernels that call its device API, with its bitcode linked, for every
// target; the device checks they carry; the host library found, refused and missing; the
// unique-id exchange; the all-reduce example compiled. CUTEJIT_NVSHMEM_HOME points at the copy
// scripts/setup.sh fetches. The [gpu] tests (test_nvshmem_gpu.cpp) run the kernels.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "collective_checks.hpp"
#include "cutejit/atom/nvshmem.hpp"
#include "cutejit/runtime/nvshmem.hpp"
#include "unit/cache/cache_test_support.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::contains;

namespace {

/// Every device function cutejit offers, once.
Kernel every_call{"nvshmem_every_call", [](Tensor<f32> x, Tensor<f32> y, Tensor<uint64_t> signals) {
  Int right = (nvshmem::my_pe() + 1) % nvshmem::n_pes();
  nvshmem::put(y.data(), x.data(), 256, right, nvshmem::Scope::block);
  nvshmem::put_nbi(y.data() + 256, x.data(), 32, right, nvshmem::Scope::warp);
  nvshmem::get(y.data() + 512, x.data(), 4, right);
  nvshmem::get_nbi(y.data() + 768, x.data(), 256, right, nvshmem::Scope::block);
  nvshmem::put_signal(y.data(), x.data(), 8, signals.data(), uint64_t(1), nvshmem::SignalOp::set, right);
  nvshmem::put_signal_nbi(y.data(), x.data(), 64, signals.data() + 1, uint64_t(1), nvshmem::SignalOp::add, right,
                          nvshmem::Scope::warp);
  nvshmem::signal_op(signals.data() + 2, uint64_t(7), nvshmem::SignalOp::set, right);
  nvshmem::signal_wait_until(signals.data() + 2, nvshmem::Compare::ge, uint64_t(7));
  nvshmem::fence();
  nvshmem::quiet();
  nvshmem::barrier_all(nvshmem::Scope::block);
  Pointer<f32> theirs = nvshmem::peer_of(y.data(), right);
  theirs[thread_idx().x] = x(thread_idx().x);
}};

CompiledKernel compile_every_call(const Target& t) {
  return every_call.compile(t, test::vector_arg<float>(), test::vector_arg<float>(), test::vector_arg<uint64_t>(8));
}

std::string ptx_bytes(const std::string& text) {
  std::string bytes;
  for (char c : text) bytes += (bytes.empty() ? "" : ", ") + std::to_string(int(c));
  return bytes;
}

}  // namespace

TEST_CASE("nvshmem: a kernel calling NVSHMEM links its bitcode, on every target", "[unit][nvshmem]") {
  for (const char* name : {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(name);
    CompiledKernel c = compile_every_call(Target::parse(name));
    // Every NVSHMEM function is defined in the module: none is left for a device-side link.
    CHECK_FALSE(contains(c.ptx, ".extern .func nvshmem"));
    CHECK_FALSE(contains(c.ptx, ".extern .func  nvshmem"));
    // The state the host library fills in for each module, and the version it checks first.
    CHECK(contains(c.ptx, ".visible .const .align 8 .b8 nvshmemi_device_state_d["));
    CHECK(contains(c.ptx, "nvshmemi_device_lib_version_d"));
    // No NVLink multicast instruction: the device code takes the path NVSHMEM_DISABLE_NVLS leaves.
    CHECK_FALSE(contains(c.ptx, "multimem."));
    CHECK(contains(test::disassemble(c.cubin, "-sass"), "MEMBAR"));
  }
}

TEST_CASE("nvshmem: the device checks of PEs and symmetric addresses are in the code", "[unit][nvshmem]") {
  CompiledKernel c = compile_every_call(Target::parse("sm_90a"));
  CHECK(contains(c.ptx, ptx_bytes("nvshmem::put: the PE is outside [0, nvshmem::n_pes())")));
  CHECK(contains(c.ptx, ptx_bytes("nvshmem::put: the destination is not in NVSHMEM's symmetric heap")));
  CHECK(contains(c.ptx, ptx_bytes("nvshmem::get: the source is not in NVSHMEM's symmetric heap")));
  CHECK(contains(c.ptx, ptx_bytes("nvshmem::signal_op: the signal is not in NVSHMEM's symmetric heap")));
  CHECK(contains(c.ptx, ptx_bytes("nvshmem::peer_of: the pointer is not symmetric, or that PE is not reachable")));
  // Each names the user's line: this file's.
  CHECK(contains(c.ptx, ptx_bytes("test_nvshmem.cpp:")));
  CHECK(contains(test::disassemble(c.cubin, "-sass"), "BPT.TRAP"));
}

TEST_CASE("nvshmem: the all-reduce example compiles, with 16-byte peer loads and stores", "[unit][nvshmem]") {
  for (const char* name : {"sm_80", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(name);
    CompiledKernel c = fixtures::allreduce_check().compile(Target::parse(name));
    CHECK(contains(c.ptx, "ld.global.v4."));
    CHECK(contains(c.ptx, "st.global.v4."));
    CHECK(contains(c.ptx, "membar.sys"));
    CHECK(test::resource_usage(c.cubin, c.name, "LOCAL") == 0);
  }
}

TEST_CASE("nvshmem: the bitcode a kernel links is part of its cache key", "[unit][nvshmem]") {
  const char* home = std::getenv("CUTEJIT_NVSHMEM_HOME");
  REQUIRE(home != nullptr);
  // The same NVSHMEM reached by another path reads as another installation: another key. (The
  // all-reduce, which links the library too, compiles in a tenth of every_call's time.)
  auto other = std::filesystem::temp_directory_path() / ("cutejit_nvshmem_link_" + std::to_string(getpid()));
  std::filesystem::remove_all(other);
  std::filesystem::create_directory_symlink(home, other);
  const CompiledKernel linked = fixtures::allreduce_check().compile(Target::parse("sm_90a"));
  REQUIRE(contains(linked.ptx, "nvshmemi_device_state_d"));  // it links the library
  const std::string key = linked.cache_key;
  std::string other_key;
  {
    cache_test::ScopedEnv env("CUTEJIT_NVSHMEM_HOME", other.string());
    other_key = fixtures::allreduce_check().compile(Target::parse("sm_90a")).cache_key;
  }
  std::filesystem::remove(other);
  CHECK_FALSE(key.empty());
  CHECK(key != other_key);
}

TEST_CASE("nvshmem: a kernel calling NVSHMEM without NVSHMEM installed is an error at its line", "[unit][nvshmem][error]") {
  cache_test::ScopedEnv env("CUTEJIT_NVSHMEM_HOME", "/nonexistent/nvshmem");
  try {
    compile_every_call(Target::parse("sm_90a"));
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Contains("test_nvshmem.cpp:"));
    CHECK_THAT(e.what(), Contains("NVSHMEM's device library for sm_90a"));
    CHECK_THAT(e.what(), Contains("CUTEJIT_NVSHMEM_HOME"));
  }
  CHECK_THROWS_WITH(nvshmem::library(), Contains("libnvshmem_host.so.3) was not found") && Contains("/nonexistent/nvshmem"));
}

TEST_CASE("nvshmem: the host library is found, and one of another release refused", "[unit][nvshmem][error]") {
  nvshmem::Library lib = nvshmem::library();
  CHECK(lib.major == 3);
  CHECK_THAT(lib.path, Contains("libnvshmem_host.so.3"));

  const char* fake = std::getenv("CUTEJIT_TEST_FAKE_NVSHMEM");
  REQUIRE(fake != nullptr);
  cache_test::ScopedEnv env("CUTEJIT_NVSHMEM_HOME", fake);
  CHECK_THROWS_WITH(nvshmem::library(), Contains("is NVSHMEM 2.11.0; cutejit needs release 3"));
  CHECK_THROWS_WITH(nvshmem::UniqueId::create(), Contains("is NVSHMEM 2.11.0"));
}

TEST_CASE("nvshmem: rank 0's unique id reaches the other ranks through a file", "[unit][nvshmem]") {
  auto file = std::filesystem::temp_directory_path() / ("cutejit_nvshmem_id_" + std::to_string(getpid()));
  std::filesystem::remove(file);
  nvshmem::UniqueId received;
  std::string failure;
  std::thread rank1([&] {
    try {
      received = nvshmem::exchange_unique_id(file, 1, std::chrono::seconds(20));
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  nvshmem::UniqueId sent = nvshmem::exchange_unique_id(file, 0);
  rank1.join();
  CHECK(failure.empty());
  CHECK(received.bytes == sent.bytes);
  // The id is NVSHMEM's: its first word is the structure's version, (1 << 16) + 128.
  int version = 0;
  std::memcpy(&version, sent.bytes.data(), sizeof version);
  CHECK(version == (1 << 16) + 128);

  // A file left over is refused by rank 0, and a rank whose id never comes stops waiting.
  CHECK_THROWS_WITH(nvshmem::exchange_unique_id(file, 0), Contains("exists already"));
  std::filesystem::remove(file);
  CHECK_THROWS_WITH(nvshmem::exchange_unique_id(file, 2, std::chrono::milliseconds(50)), Contains("rank 2 waited 50 ms"));
}

TEST_CASE("nvshmem: the all-gather GEMM compiles: HGMMA fed by TMA loads that wait for their tile's flag", "[unit][nvshmem]") {
  // The 256-wide tile's kernel, first of the three, for a job of two PEs.
  CompiledKernel c = kernels::all_gather_gemm_compile(Target::parse("sm_90a"), 2, 1024, 1024).at(0);
  const std::string sass = test::disassemble(c.cubin, "-sass");
  CHECK(contains(sass, "HGMMA.64x256x16.F32.BF16"));
  CHECK(contains(sass, "UTMALDG"));
  CHECK(contains(c.ptx, "fence.proxy.async.global"));
  CHECK(contains(c.ptx, "st.global.v4."));  // the pushes into the other PEs' copies of A
  CHECK(test::resource_usage(c.cubin, c.name, "LOCAL") == 0);
  // Its compile form refuses what it cannot build, at this file's line.
  CHECK_THROWS_WITH(kernels::all_gather_gemm_compile(Target::parse("sm_80"), 2, 1024, 1024),
                    Contains("test_nvshmem.cpp:") && Contains("not sm_80"));
  CHECK_THROWS_WITH(kernels::all_gather_gemm_compile(Target::parse("sm_90a"), 2, 1000, 1024),
                    Contains("test_nvshmem.cpp:") && Contains("M must be a positive multiple of 128 x the PEs (256)"));
  CHECK_THROWS_WITH(kernels::all_reduce_compile(Target::parse("sm_90a"), 0, DeviceTensor<bf16>::for_compile({64}), 132),
                    Contains("test_nvshmem.cpp:") && Contains("at least one PE"));
}
