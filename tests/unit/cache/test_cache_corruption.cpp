// A damaged entry is a miss: the kernel is recompiled and the entry rewritten, never loaded.
#include <catch2/catch.hpp>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <chrono>
#include <cstring>
#include <future>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_test_support.hpp"

using namespace cache_test;

namespace {

/// The entry header's layout (docs/cache.md): magic, format, metadata/PTX/cubin sizes, checksum.
constexpr size_t header_bytes = 48, format_at = 8, metadata_size_at = 12, checksum_at = 32;

/// Replaces `from` with `to` in the metadata and rewrites the header's metadata size and
/// checksum: an entry intact in every way but what its metadata says.
std::string with_metadata_changed(std::string entry, const std::string& from, const std::string& to) {
  uint32_t metadata_bytes = 0;
  std::memcpy(&metadata_bytes, entry.data() + metadata_size_at, 4);
  size_t at = entry.find(from, header_bytes);
  REQUIRE(at != std::string::npos);
  REQUIRE(at < header_bytes + metadata_bytes);
  entry.replace(at, from.size(), to);
  metadata_bytes = uint32_t(metadata_bytes + to.size() - from.size());
  std::memcpy(entry.data() + metadata_size_at, &metadata_bytes, 4);
  XXH128_canonical_t sum;
  XXH128_canonicalFromHash(&sum, XXH3_128bits(entry.data() + header_bytes, entry.size() - header_bytes));
  std::memcpy(entry.data() + checksum_at, sum.digest, 16);
  return entry;
}

}  // namespace

TEST_CASE("truncated, bit-flipped, empty and wrong-version entries are recompiled and replaced", "[cache]") {
  TempCache tmp;
  cutejit::CompiledKernel original = compile_vector_add();
  std::filesystem::path entry = tmp.entry(original.cache_key);
  const std::string good = read_text(entry);
  REQUIRE(good.size() > header_bytes + original.cubin.size());

  std::string flipped = good;
  flipped[good.size() - original.cubin.size() / 2] ^= 0x10;  // inside the cubin
  std::string flipped_metadata = good;
  flipped_metadata[header_bytes + 20] ^= 0x01;
  std::string wrong_format = good;
  wrong_format[format_at] = 2;
  std::string other_cutejit = with_metadata_changed(good, "\"cutejit\": \"", "\"cutejit\": \"9");
  std::string not_json = with_metadata_changed(good, "{", "[");
  // Sound bytes under a valid checksum whose metadata lies about them.
  std::string other_kernel = with_metadata_changed(good, "\"kernel\": \"vector_add\"", "\"kernel\": \"saxpy\"");
  std::string other_target = with_metadata_changed(good, "\"target\": \"sm_90a\"", "\"target\": \"sm_120a\"");
  std::string other_size = with_metadata_changed(good, "\"ptx_bytes\": ", "\"ptx_bytes\": 1");
  std::string other_hash = with_metadata_changed(good, "\"cubin_xxh3_128\": \"", "\"cubin_xxh3_128\": \"0");
  std::string linked_too_large = with_metadata_changed(good, "\"linked_ptx_bytes\": []", "\"linked_ptx_bytes\": [99999999]");
  std::string linked_not_a_list = with_metadata_changed(good, "\"linked_ptx_bytes\": []", "\"linked_ptx_bytes\": 3");

  const std::pair<const char*, std::string> damaged[] = {
      {"truncated to half", good.substr(0, good.size() / 2)},
      {"truncated inside the header", good.substr(0, 20)},
      {"one byte short", good.substr(0, good.size() - 1)},
      {"zero length", ""},
      {"a bit flipped in the cubin", flipped},
      {"a bit flipped in the metadata", flipped_metadata},
      {"another format version", wrong_format},
      {"written by another cutejit version", other_cutejit},
      {"metadata that is not an object", not_json},
      {"metadata naming another kernel", other_kernel},
      {"metadata naming another target", other_target},
      {"metadata with another PTX size", other_size},
      {"metadata with another cubin hash", other_hash},
      {"metadata with more linked PTX than the PTX section holds", linked_too_large},
      {"metadata whose linked PTX sizes are not a list", linked_not_a_list},
      {"not an entry at all", std::string(good.size(), 'x')},
  };
  for (const auto& [what, bytes] : damaged) {
    SECTION(what) {
      write_bytes(entry, bytes);
      CHECK_FALSE(tmp.cache().load(original.cache_key));
      // Only the version check can refuse this one: the entry itself is sound. Every other
      // damage is found by verify too, which needs no compile to know it.
      if (bytes == other_cutejit) CHECK(tmp.cache().verify(/*remove_bad=*/false).bad.empty());
      else CHECK(tmp.cache().verify(/*remove_bad=*/false).bad.size() == 1);
      cutejit::CompiledKernel again = compile_vector_add();
      CHECK_FALSE(again.from_cache);
      CHECK(again.cubin == original.cubin);
      // The recompiled kernel replaced the bad entry, and verify finds nothing wrong.
      CHECK(tmp.cache().load(original.cache_key));
      CHECK(compile_vector_add().from_cache);
      CHECK(tmp.cache().verify(/*remove_bad=*/false).bad.empty());
    }
  }
}

TEST_CASE("verify reports bad entries and removes them", "[cache]") {
  TempCache tmp;
  std::string good_key = compile_vector_add("sm_90a").cache_key;
  std::string bad_key = compile_vector_add("sm_100a").cache_key;
  std::string bytes = read_text(tmp.entry(bad_key));
  write_bytes(tmp.entry(bad_key), bytes.substr(0, bytes.size() - 7));

  cutejit::CacheVerifyReport kept = tmp.cache().verify(/*remove_bad=*/false);
  CHECK(kept.checked == 2);
  REQUIRE(kept.bad.size() == 1);
  CHECK(kept.bad[0].file == bad_key + ".entry");
  CHECK_THAT(kept.bad[0].problem, Catch::Contains("header says"));
  CHECK(std::filesystem::exists(tmp.entry(bad_key)));

  CHECK(tmp.cache().verify(/*remove_bad=*/true).bad.size() == 1);
  CHECK_FALSE(std::filesystem::exists(tmp.entry(bad_key)));
  CHECK(std::filesystem::exists(tmp.entry(good_key)));
  CHECK(tmp.cache().verify(/*remove_bad=*/true).bad.empty());
}

TEST_CASE("a huge sparse file at an entry's path is refused by its size, not read into memory", "[cache]") {
  TempCache tmp;
  cutejit::CompiledKernel original = compile_vector_add();
  std::filesystem::path entry = tmp.entry(original.cache_key);
  std::filesystem::resize_file(entry, uint64_t(100) << 30);  // 100 GiB, sparse
  auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(tmp.cache().load(original.cache_key));
  cutejit::CacheVerifyReport report = tmp.cache().verify(/*remove_bad=*/false);
  REQUIRE(report.bad.size() == 1);
  CHECK_THAT(report.bad[0].problem, Catch::Contains("is 107374182400 bytes, more than the 268435456 allowed"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  // Compiling replaces it with the real entry.
  CHECK_FALSE(compile_vector_add().from_cache);
  CHECK(std::filesystem::file_size(entry) < (uint64_t(1) << 20));
  CHECK(compile_vector_add().from_cache);
}

TEST_CASE("a FIFO at an entry's path neither hangs a load nor stops the kernel from compiling", "[cache]") {
  TempCache tmp;
  cutejit::CompiledKernel original = compile_vector_add();
  std::filesystem::path entry = tmp.entry(original.cache_key);
  std::filesystem::remove(entry);
  REQUIRE(mkfifo(entry.c_str(), 0644) == 0);
  auto load = std::async(std::launch::async, [&] { return tmp.cache().load(original.cache_key).has_value(); });
  if (load.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    // Release the blocked reader (a writer end opened and closed) so that the process can end.
    int fd = open(entry.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) close(fd);
    FAIL("loading an entry that is a FIFO blocked");
  }
  CHECK_FALSE(load.get());
  // The recompiled kernel's entry takes the FIFO's place.
  CHECK_FALSE(compile_vector_add().from_cache);
  CHECK(std::filesystem::is_regular_file(entry));
  CHECK(compile_vector_add().from_cache);
}

TEST_CASE("prune counts the abandoned temporary files it removes", "[cache]") {
  TempCache tmp;
  std::filesystem::path entry = tmp.entry(compile_vector_add().cache_key);
  std::filesystem::path stale = entry.parent_path() / ".tmp.abandoned.entry.1.0";
  write_bytes(stale, std::string(5 << 20, 'x'));
  std::filesystem::last_write_time(stale, std::filesystem::file_time_type::clock::now() - std::chrono::hours(2));
  // "removed 0 B" after deleting 5 MB was the old report.
  CHECK(tmp.cache().prune(uint64_t(1) << 30).bytes == uint64_t(5) << 20);
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(std::filesystem::exists(entry));  // under the limit: kept
}

TEST_CASE("a directory at an entry's name is replaced by the next store, and verify, stats and clear see it", "[cache]") {
  TempCache tmp;
  cutejit::CompiledKernel original = compile_vector_add();
  std::filesystem::path entry = tmp.entry(original.cache_key);
  auto plant = [&] {
    std::filesystem::remove_all(entry);
    std::filesystem::create_directories(entry / "inside");
    write_bytes(entry / "inside" / "file", "x");
  };
  plant();
  CHECK_FALSE(tmp.cache().contains(original.cache_key));
  // The compile replaces the directory: the process after it hits, instead of warning and
  // recompiling forever.
  CHECK_FALSE(compile_vector_add().from_cache);
  CHECK(std::filesystem::is_regular_file(entry));
  CHECK(compile_vector_add().from_cache);

  plant();
  cutejit::CacheStats st = tmp.cache().stats();
  CHECK(st.entries == 0);
  CHECK(st.unreadable == 1);
  Run verify = cli(tmp, "verify --keep");
  CHECK(verify.exit_code == 1);
  CHECK_THAT(verify.output, Catch::Contains("not a regular file") && Catch::Contains("1 entries checked, 1 bad"));
  Run removed = cli(tmp, "verify");
  CHECK_THAT(removed.output, Catch::Contains("(removed)") && Catch::Contains("1 removed"));
  CHECK_FALSE(std::filesystem::exists(entry));

  plant();
  Run clear = cli(tmp, "clear");
  CHECK(clear.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(entry));
}

TEST_CASE("a cache directory that cannot be read is an error in every command, not an empty cache", "[cache]") {
  TempCache tmp;
  std::filesystem::create_directories(tmp.path() / "file");
  write_bytes(tmp.path() / "file" / "v1", "a file where the entries' directory should be");
  std::filesystem::create_directories(tmp.path() / "loop");
  std::filesystem::create_directory_symlink(tmp.path() / "loop" / "v1", tmp.path() / "loop" / "v1");
  for (const char* dir : {"file", "loop"})
    for (const char* command : {"list", "stats", "verify", "prune --max-size 1G", "clear"}) {
      INFO(dir << ": " << command);
      Run run = cli_raw("--dir " + (tmp.path() / dir).string() + " " + command);
      CHECK(run.exit_code == 1);
      CHECK_THAT(run.output, Catch::Contains("cannot read " + (tmp.path() / dir / "v1").string()));
    }
  // A directory that does not exist yet is an empty cache, as before.
  Run missing = cli_raw("--dir " + (tmp.path() / "none").string() + " list");
  CHECK(missing.exit_code == 0);
  CHECK_THAT(missing.output, Catch::Contains("No entries"));
}

TEST_CASE("show --ptx prints an entry written by another cutejit without touching it", "[cache]") {
  TempCache tmp;
  cutejit::CompiledKernel original = compile_vector_add();
  std::filesystem::path entry = tmp.entry(original.cache_key);
  write_bytes(entry, with_metadata_changed(read_text(entry), "\"cutejit\": \"", "\"cutejit\": \"9"));
  auto before = std::filesystem::last_write_time(entry);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Run show = cli(tmp, "show " + original.cache_key + " --ptx");
  CHECK(show.exit_code == 0);
  CHECK_THAT(show.output, Catch::Contains(".entry vector_add") && !Catch::Contains("recompiling"));
  CHECK(std::filesystem::last_write_time(entry) == before);  // reading is not a use
}

TEST_CASE("temporary files: a store removes abandoned ones, clear spares live ones, stats counts both", "[cache]") {
  TempCache tmp;
  std::filesystem::path entry = tmp.entry(compile_vector_add("sm_90a").cache_key);
  std::filesystem::path stale = entry.parent_path() / ".tmp.abandoned.entry.1.0", live = entry.parent_path() / ".tmp.live.entry.2.0";
  write_bytes(stale, std::string(3 << 20, 'x'));
  write_bytes(live, "being written");
  std::filesystem::last_write_time(stale, std::filesystem::file_time_type::clock::now() - std::chrono::hours(3));
  cutejit::CacheStats st = tmp.cache().stats();
  CHECK(st.temporary == 2);
  CHECK(st.abandoned == 1);
  CHECK(st.unreadable == 0);  // temporaries are not unreadable entries
  CHECK_THAT(cli(tmp, "stats").output, Catch::Contains("temporary   2") && Catch::Contains("1 abandoned"));
  // Storing any entry removes the abandoned file, without a prune and under the size limit.
  compile_vector_add("sm_100a");
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(std::filesystem::exists(live));
  CHECK(tmp.cache().clear().entries == 2);
  CHECK(std::filesystem::exists(live));  // a writer at work keeps its file
}
