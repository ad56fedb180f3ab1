// A cache that cannot be written, disappears or fills up leaves the JIT working; the size
// limit evicts the least recently used entries.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <csignal>
#include <thread>

#include "cache_test_support.hpp"

using namespace cache_test;

TEST_CASE("a cache directory that cannot be created leaves the JIT working", "[cache]") {
  TempCache tmp;
  // A regular file where a directory should be: unwritable even for root.
  write_bytes(tmp.path() / "file", "not a directory");
  ScopedEnv dir("CUTEJIT_CACHE_DIR", (tmp.path() / "file" / "cache").string());
  cutejit::CompiledKernel first = compile_vector_add();
  CHECK_FALSE(first.from_cache);
  CHECK_FALSE(first.cubin.empty());
  cutejit::CompiledKernel second = compile_vector_add();
  CHECK_FALSE(second.from_cache);
  CHECK(second.cubin == first.cubin);
}

TEST_CASE("a read-only cache directory serves its entries and stores nothing", "[cache]") {
  TempCache tmp;
  cutejit::CompiledKernel stored = compile_vector_add("sm_90a");
  std::filesystem::permissions(tmp.path() / "v1", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  CHECK(compile_vector_add("sm_90a").from_cache);
  cutejit::CompiledKernel other = compile_vector_add("sm_100a");
  CHECK_FALSE(other.from_cache);
  CHECK_FALSE(other.cubin.empty());
  if (geteuid() == 0) WARN("running as root: permissions do not stop writes, so only the hit was checked");
  else CHECK_FALSE(std::filesystem::exists(tmp.entry(other.cache_key)));
}

TEST_CASE("a cache directory removed while the program runs is recreated", "[cache]") {
  TempCache tmp;
  compile_vector_add("sm_90a");
  std::filesystem::remove_all(tmp.path());
  cutejit::CompiledKernel k = compile_vector_add("sm_100a");
  CHECK_FALSE(k.from_cache);
  CHECK(std::filesystem::exists(tmp.entry(k.cache_key)));
  CHECK_FALSE(compile_vector_add("sm_90a").from_cache);
}

TEST_CASE("cache child: compile with a 4 KiB file size limit", "[.cache_child_full]") {
  // Every write beyond 4 KiB fails with EFBIG, as on a full disk.
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit limit{4096, 4096};
  REQUIRE(setrlimit(RLIMIT_FSIZE, &limit) == 0);
  cutejit::CompiledKernel k = compile_vector_add();
  REQUIRE_FALSE(k.cubin.empty());
  REQUIRE_FALSE(k.from_cache);
}

TEST_CASE("a full disk leaves the JIT working and no partial entry behind", "[cache]") {
  TempCache tmp;
  REQUIRE(exited_cleanly(spawn_self({"[.cache_child_full]"})));
  CHECK(tmp.cache().list().empty());
  CHECK(tmp.cache().verify(/*remove_bad=*/false).checked == 0);
  // Nothing at all is left behind, not even a temporary file.
  CHECK(std::filesystem::is_empty(tmp.path() / "v1"));
}

TEST_CASE("the size limit evicts the least recently used entries", "[cache]") {
  TempCache tmp;
  std::string a = compile_vector_add("sm_90a").cache_key;
  std::string b = compile_vector_add("sm_100a").cache_key;
  uint64_t two = tmp.cache().size_bytes();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(compile_vector_add("sm_90a").from_cache);  // a is now used more recently than b
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Room for two and a half entries: adding the third evicts exactly one, the least recently used.
  uint64_t one = std::filesystem::file_size(tmp.entry(a));  // about the size of any entry
  ScopedEnv limit("CUTEJIT_CACHE_MAX_SIZE", std::to_string(two + one / 2));
  std::string c = compile_vector_add("sm_120a").cache_key;
  CHECK(std::filesystem::exists(tmp.entry(a)));
  CHECK_FALSE(std::filesystem::exists(tmp.entry(b)));
  CHECK(std::filesystem::exists(tmp.entry(c)));

  CHECK(tmp.cache().prune(0).bytes > 0);
  CHECK(tmp.cache().list().empty());
  compile_vector_add("sm_90a");
  CHECK(tmp.cache().clear().entries == 1);
  CHECK(tmp.cache().size_bytes() == 0);
}
