// A shared machine's hostile user against the cache (issue 35, part 2): entries another user
// planted or could change, entries forged to pass every checksum, files that would make the
// size limit evict everything, and metadata built to crash the CLI.
#include <catch2/catch.hpp>

#include <chrono>

#include "entry_forgery.hpp"
#include "saxpy.hpp"

using namespace cache_test;

namespace {

cutejit::CompiledKernel compile_saxpy(const char* target) {
  auto v = cutejit::DeviceTensor<cutejit::f32>::make(0, std::array<int64_t, 1>{1024}, std::array<int64_t, 1>{1});
  return fixtures::saxpy.compile(cutejit::Target::parse(target), 2.0f, v, v);
}

}  // namespace

TEST_CASE("an entry another user owns, or others may write, is not loaded, and verify calls it bad", "[cache]") {
  TempCache tmp;
  std::string key = compile_vector_add().cache_key;
  REQUIRE(compile_vector_add().from_cache);

  // Writable by others: anyone could have replaced it.
  std::filesystem::permissions(tmp.entry(key), std::filesystem::perms::others_write, std::filesystem::perm_options::add);
  CHECK_FALSE(tmp.cache().load(key));
  cutejit::CacheVerifyReport report = tmp.cache().verify(/*remove_bad=*/false);
  REQUIRE(report.bad.size() == 1);
  CHECK_THAT(report.bad[0].problem, Catch::Contains("writable by others"));
  CHECK_FALSE(compile_vector_add().from_cache);  // recompiled, and the entry replaced by a sound one
  CHECK(compile_vector_add().from_cache);

  if (!give_to_other_user(tmp.entry(key))) return;
  CHECK_FALSE(tmp.cache().load(key));
  Run verify = cli(tmp, "verify --keep");
  CHECK(verify.exit_code == 1);
  CHECK_THAT(verify.output, Catch::Contains("owned by uid 65534"));
  CHECK_FALSE(compile_vector_add().from_cache);
  CHECK(compile_vector_add().from_cache);
}

TEST_CASE("a cache directory another user owns, or others may write, is neither read nor written", "[cache]") {
  TempCache tmp;
  std::string key = compile_vector_add().cache_key;
  REQUIRE(compile_vector_add().from_cache);

  // The entries' directory open to everyone: whoever can write it chose what is in it.
  std::filesystem::permissions(tmp.path() / "v1", std::filesystem::perms::all);
  CHECK_FALSE(compile_vector_add().from_cache);
  CHECK_FALSE(tmp.cache().load(key));
  cutejit::CompiledKernel other = compile_vector_add("sm_100a");
  CHECK_FALSE(std::filesystem::exists(tmp.entry(other.cache_key)));  // nothing stored there either
  Run list = cli(tmp, "list");
  CHECK(list.exit_code == 1);
  CHECK_THAT(list.output, Catch::Contains("writable by others"));
  std::filesystem::permissions(tmp.path() / "v1", std::filesystem::perms::others_write, std::filesystem::perm_options::remove);
  CHECK(compile_vector_add().from_cache);

  // A world-writable cache root owned by another user, as in /tmp/shared-cache.
  if (!give_to_other_user(tmp.path())) return;
  std::filesystem::permissions(tmp.path(), std::filesystem::perms::all);
  CHECK_FALSE(compile_vector_add().from_cache);
  Run verify = cli(tmp, "verify");
  CHECK(verify.exit_code == 1);
  CHECK_THAT(verify.output, Catch::Contains("owned by uid 65534"));
  CHECK(std::filesystem::exists(tmp.entry(key)));  // not touched
}

TEST_CASE("a forged entry whose cubin is for another architecture or another kernel is not loaded", "[cache]") {
  TempCache tmp;
  cutejit::CompiledKernel hopper = compile_vector_add("sm_90a");
  cutejit::CompiledKernel blackwell = compile_vector_add("sm_100a");
  cutejit::CompiledKernel plain = compile_vector_add("sm_90");
  cutejit::CompiledKernel other_kernel = compile_saxpy("sm_90a");
  const std::string sound = read_text(tmp.entry(hopper.cache_key));

  struct Forgery {
    const char* what;
    std::string cubin;
    std::string ptx_suffix;
    const char* problem;
  };
  auto bytes = [](const cutejit::CompiledKernel& k) { return std::string(k.cubin.data(), k.cubin.size()); };
  for (const Forgery& f : {Forgery{"an sm_100a cubin", bytes(blackwell), "", "sm_100"},
                           Forgery{"an sm_90 cubin (the same ELF flags as sm_90a)", bytes(plain), "", "sm_90,"},
                           // saxpy's cubin, with the PTX check satisfied by a comment
                           Forgery{"another kernel's cubin", bytes(other_kernel), "// .entry vector_add(\n", "vector_add"}}) {
    INFO(f.what);
    EntryParts parts = EntryParts::of(sound);
    parts.cubin = f.cubin;
    parts.ptx += f.ptx_suffix;
    write_bytes(tmp.entry(hopper.cache_key), parts.seal());
    CHECK_FALSE(tmp.cache().load(hopper.cache_key));
    cutejit::CacheVerifyReport report = tmp.cache().verify(/*remove_bad=*/false);
    REQUIRE(report.bad.size() == 1);
    CHECK_THAT(report.bad[0].problem, Catch::Contains("cubin") && Catch::Contains(f.problem));
  }
  // The untouched entry, sealed again the same way, is sound: the forgeries failed on their cubins.
  write_bytes(tmp.entry(hopper.cache_key), EntryParts::of(sound).seal());
  CHECK(tmp.cache().load(hopper.cache_key));
}

TEST_CASE("only sound regular entry files count toward the size limit", "[cache]") {
  TempCache tmp;
  std::vector<std::string> keys;
  for (const char* target : {"sm_80", "sm_86", "sm_89", "sm_90a"}) keys.push_back(compile_vector_add(target).cache_key);
  const std::filesystem::path v1 = tmp.path() / "v1";
  // A 2 GiB junk file at an entry's name (sparse: it costs nothing), which no load reads.
  const std::filesystem::path junk = v1 / (std::string(32, 'f') + ".entry");
  write_bytes(junk, "junk");
  std::filesystem::resize_file(junk, uint64_t(2) << 30);
  // A link at an entry's name to a big file, newer than everything.
  const std::filesystem::path big = tmp.path() / "big";
  write_bytes(big, "");
  std::filesystem::resize_file(big, uint64_t(1) << 30);
  const std::filesystem::path link = v1 / (std::string(32, 'e') + ".entry");
  std::filesystem::create_symlink(big, link);
  std::filesystem::last_write_time(big, std::filesystem::file_time_type::clock::now() + std::chrono::hours(1));

  ScopedEnv limit("CUTEJIT_CACHE_MAX_SIZE", "16M");
  std::string newest = compile_vector_add("sm_100a").cache_key;
  for (const std::string& key : keys) CHECK(std::filesystem::exists(tmp.entry(key)));
  CHECK(std::filesystem::exists(tmp.entry(newest)));
  CHECK(tmp.cache().size_bytes() < (uint64_t(1) << 20));
  CHECK(std::filesystem::exists(big));  // a link's target is never touched
}

TEST_CASE("metadata nested 100,000 deep neither crashes the CLI nor passes verify", "[cache]") {
  TempCache tmp;
  std::string key = compile_vector_add().cache_key;
  const std::string sound = read_text(tmp.entry(key));
  // 100,000 deep crashed show and list --json; 20,000 deep fits the metadata's size bound, so
  // the depth bound is what refuses it.
  for (size_t depth : {size_t(100'000), size_t(20'000)}) {
    INFO(depth);
    EntryParts parts = EntryParts::of(sound);
    std::string text = parts.metadata.dump(1);
    text.insert(text.size() - 1, ",\"extra\":" + std::string(depth, '[') + std::string(depth, ']'));
    write_bytes(tmp.entry(key), parts.seal(text));
    for (const std::string& command : {"show " + key.substr(0, 8), std::string("list --json"), std::string("stats"), std::string("verify --keep")}) {
      INFO(command);
      Run run = cli(tmp, command);
      CHECK(run.exit_code >= 0);  // not killed by a signal
      CHECK(run.output.size() < (size_t(1) << 20));
    }
    Run verify = cli(tmp, "verify --keep");
    CHECK(verify.exit_code == 1);
    CHECK_THAT(verify.output, Catch::Contains(depth > 50'000 ? "more than the 65536 allowed" : "nested more than 16 levels deep"));
    CHECK_FALSE(tmp.cache().load(key));
  }

  // Large metadata is refused too, so that no entry can make `show` print gigabytes.
  EntryParts parts = EntryParts::of(sound);
  parts.metadata["extra"] = std::vector<int>(100'000, 0);
  write_bytes(tmp.entry(key), parts.seal());
  Run large = cli(tmp, "verify --keep");
  CHECK(large.exit_code == 1);
  CHECK_THAT(large.output, Catch::Contains("metadata is"));
}
