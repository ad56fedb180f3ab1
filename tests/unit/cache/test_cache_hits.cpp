// A compiled specialization is stored once and served from disk afterwards; its key changes
// exactly when something that decides the cubin changes.
#include <catch2/catch.hpp>

#include "block_reduce.hpp"
#include "cache_test_support.hpp"

using namespace cache_test;

TEST_CASE("a kernel compiled twice is read from the disk cache the second time", "[cache]") {
  TempCache tmp;
  cutejit::CompiledKernel first = compile_vector_add();
  CHECK_FALSE(first.from_cache);
  REQUIRE(first.cache_key.size() == 32);
  REQUIRE(std::filesystem::exists(tmp.entry(first.cache_key)));

  // Every compile asks a fresh cache object, as a new process would.
  cutejit::CompiledKernel second = compile_vector_add();
  CHECK(second.from_cache);
  CHECK(second.cache_key == first.cache_key);
  CHECK(second.cubin == first.cubin);
  CHECK(second.ptx == first.ptx);
  CHECK(second.name == "vector_add");
  CHECK(second.target == cutejit::Target::parse("sm_90a"));
  CHECK(second.assembler == first.assembler);
  // A hit runs no lowering, LLVM or assembler, and its times say so.
  CHECK(second.times.lower_ms == 0);
  CHECK(second.times.codegen_ms == 0);
  CHECK(second.times.assemble_ms == 0);
  CHECK(second.times.cache_ms > 0);
}

TEST_CASE("the cache's metadata describes the kernel", "[cache]") {
  TempCache tmp;
  cutejit::CompiledKernel k = compile_vector_add("sm_100a");
  cutejit::CacheEntryInfo info = tmp.cache().show(k.cache_key.substr(0, 8));
  CHECK(info.key == k.cache_key);
  CHECK(info.kernel == "vector_add");
  CHECK(info.target == "sm_100a");
  CHECK(info.file_bytes > k.cubin.size());
  for (const char* field : {"\"llvm\"", "\"cutejit\"", "\"assembler\"", "\"compile_ms\"", "\"cubin_xxh3_128\"", "\"created\""})
    CHECK(info.metadata_json.find(field) != std::string::npos);
  CHECK_THROWS_WITH(tmp.cache().show("zz"), Catch::Contains("no cache entry has a key starting with 'zz'"));
}

TEST_CASE("the key changes with the target and with a static parameter, and only then", "[cache]") {
  TempCache tmp;
  std::string sm90 = compile_vector_add("sm_90a").cache_key;
  CHECK(compile_vector_add("sm_90a").cache_key == sm90);
  CHECK(compile_vector_add("sm_100a").cache_key != sm90);
  CHECK(compile_vector_add("sm_90").cache_key != sm90);

  auto v = cutejit::DeviceTensor<cutejit::f32>::make(0, std::array<int64_t, 1>{4096}, std::array<int64_t, 1>{1});
  cutejit::Target t = cutejit::Target::parse("sm_90a");
  std::string block128 = fixtures::block_reduce.compile(t, v, v, 128).cache_key;
  std::string block256 = fixtures::block_reduce.compile(t, v, v, 256).cache_key;
  CHECK(block128 != block256);
  CHECK(fixtures::block_reduce.compile(t, v, v, 128).cache_key == block128);
  // A different kernel never shares a key.
  CHECK(block128 != sm90);
}

TEST_CASE("cache child: print the key of vector_add for sm_90a", "[.cache_child_key]") {
  std::ofstream(std::getenv("CUTEJIT_TEST_OUT")) << compile_vector_add().cache_key;
}

TEST_CASE("the same kernel traced in two processes has the same key", "[cache]") {
  TempCache tmp;
  std::filesystem::path out = tmp.path() / "child_key.txt";
  ScopedEnv where("CUTEJIT_TEST_OUT", out.string());
  REQUIRE(exited_cleanly(spawn_self({"[.cache_child_key]"})));
  CHECK(read_text(out) == compile_vector_add().cache_key);
}

TEST_CASE("CUTEJIT_CACHE=off compiles without touching the disk", "[cache]") {
  TempCache tmp;
  ScopedEnv off("CUTEJIT_CACHE", "off");
  cutejit::CompiledKernel k = compile_vector_add();
  CHECK_FALSE(k.from_cache);
  CHECK(k.cache_key.empty());
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "v1"));
  CHECK_FALSE(cutejit::KernelCache::from_environment().enabled());
}

TEST_CASE("the cache directory comes from the environment", "[cache]") {
  ScopedEnv dir("CUTEJIT_CACHE_DIR", std::nullopt), xdg("XDG_CACHE_HOME", "/x/cache"), home("HOME", "/home/u");
  CHECK(cutejit::KernelCache::from_environment().directory() == "/x/cache/cutejit");
  {
    ScopedEnv no_xdg("XDG_CACHE_HOME", std::nullopt);
    CHECK(cutejit::KernelCache::from_environment().directory() == "/home/u/.cache/cutejit");
  }
  ScopedEnv chosen("CUTEJIT_CACHE_DIR", "/chosen");
  ScopedEnv size("CUTEJIT_CACHE_MAX_SIZE", "3M");
  cutejit::KernelCache c = cutejit::KernelCache::from_environment();
  CHECK(c.directory() == "/chosen");
  CHECK(c.max_bytes() == 3u << 20);
}

TEST_CASE("sizes are read with binary units", "[cache]") {
  using cutejit::KernelCache;
  CHECK(KernelCache::parse_size("1000") == 1000);
  CHECK(KernelCache::parse_size("512K") == 512u << 10);
  CHECK(KernelCache::parse_size("512KiB") == 512u << 10);
  CHECK(KernelCache::parse_size("100M") == 100u << 20);
  CHECK(KernelCache::parse_size("1G") == uint64_t(1) << 30);
  CHECK(KernelCache::parse_size("1.5g") == uint64_t(3) << 29);
  CHECK_THROWS_WITH(KernelCache::parse_size("lots"), Catch::Contains("is not a size"));
  CHECK_THROWS_WITH(KernelCache::parse_size("-1G"), Catch::Contains("is not a size"));
  CHECK_THROWS_WITH(KernelCache::parse_size("5 parsecs"), Catch::Contains("is not a size"));
  CHECK(KernelCache::parse_size("5KB") == 5u << 10);
  CHECK(KernelCache::parse_size("2GiB") == uint64_t(2) << 30);
  CHECK(KernelCache::parse_size("7b") == 7);
  CHECK(KernelCache::parse_size("1T") == uint64_t(1) << 40);
  // One grammar: digits, an optional fraction, an optional unit; nothing strtod would also take.
  for (const char* bad : {"0x10", "5iB", "5bb", "1e3", " 5", "5 ", "+5", "inf", "nan", "5.", ".5", "5KiBB", "20000000000000000000", "16E"}) {
    INFO(bad);
    CHECK_THROWS_WITH(KernelCache::parse_size(bad), Catch::Contains("is not a size"));
  }
}

TEST_CASE("with CUTEJIT_DUMP set every stage runs and is dumped, and the entry is still stored", "[cache]") {
  TempCache tmp;
  std::string key = compile_vector_add().cache_key;
  ScopedEnv dump("CUTEJIT_DUMP", (tmp.path() / "dump").string());
  cutejit::CompiledKernel k = compile_vector_add();
  CHECK_FALSE(k.from_cache);
  CHECK(k.cache_key == key);
  // vector_add.sm_90a.ptx, or .<n>.ptx when this process dumped vector_add before.
  int ptx_files = 0;
  for (const auto& f : std::filesystem::directory_iterator(tmp.path() / "dump")) {
    std::string name = f.path().filename().string();
    ptx_files += name.starts_with("vector_add.sm_90a.") && name.ends_with(".ptx");
  }
  CHECK(ptx_files == 1);
}

TEST_CASE("CUTEJIT_DUMP keeps the files of every specialization of a kernel", "[cache]") {
  TempCache tmp;
  ScopedEnv dump("CUTEJIT_DUMP", (tmp.path() / "dump").string());
  auto v = [](int64_t n) { return cutejit::DeviceTensor<float>::make(256, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1}); };
  cutejit::CompiledKernel a = fixtures::vector_add.compile(cutejit::Target::parse("sm_100a"), v(1024), v(1024), v(1024));
  cutejit::CompiledKernel b = fixtures::vector_add.compile(cutejit::Target::parse("sm_100a"), v(1001), v(1001), v(1001));
  std::vector<std::string> ptx;
  for (const auto& f : std::filesystem::directory_iterator(tmp.path() / "dump"))
    if (f.path().extension() == ".ptx") ptx.push_back(read_text(f.path()));
  REQUIRE(ptx.size() == 2);
  CHECK(ptx[0] != ptx[1]);  // two specializations, two files, neither overwritten
  CHECK(((ptx[0] == a.ptx && ptx[1] == b.ptx) || (ptx[0] == b.ptx && ptx[1] == a.ptx)));
}
