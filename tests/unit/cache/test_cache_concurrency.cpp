// Threads and processes compiling the same kernels into one empty directory at once: every
// one gets every kernel, and the directory ends with one sound entry per key.
#include <catch2/catch.hpp>

#include <thread>

#include "cache_test_support.hpp"

using namespace cache_test;

namespace {
const char* const targets[] = {"sm_90a", "sm_100a", "sm_120a"};

void check_directory_sound(const TempCache& tmp, size_t entries) {
  cutejit::CacheVerifyReport report = tmp.cache().verify(/*remove_bad=*/false);
  CHECK(report.bad.empty());
  CHECK(report.checked == entries);
  for (const auto& file : std::filesystem::directory_iterator(tmp.path() / "v1"))
    CHECK(file.path().extension() == ".entry");  // no temporary file left behind
}
}  // namespace

TEST_CASE("threads compiling the same kernel share one sound entry", "[cache]") {
  TempCache tmp;
  std::vector<cutejit::CompiledKernel> results(6);
  std::vector<std::string> errors(results.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        results[i] = compile_vector_add(targets[i % 3]);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < results.size(); ++i) {
    CHECK(errors[i].empty());
    CHECK(results[i].cubin == results[i % 3].cubin);
  }
  check_directory_sound(tmp, 3);
}

TEST_CASE("cache child: compile vector_add for three targets", "[.cache_child_compile]") {
  for (const char* t : targets) {
    cutejit::CompiledKernel k = compile_vector_add(t);
    REQUIRE(k.cubin.size() > 4);
    REQUIRE(std::memcmp(k.cubin.data(), "\x7f" "ELF", 4) == 0);
  }
}

TEST_CASE("8 processes compiling the same kernels into one empty directory", "[cache]") {
  TempCache tmp;
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) children.push_back(spawn_self({"[.cache_child_compile]"}));
  for (pid_t pid : children) CHECK(exited_cleanly(pid));
  check_directory_sound(tmp, 3);
  for (const char* t : targets) CHECK(compile_vector_add(t).from_cache);
}
