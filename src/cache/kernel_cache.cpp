// Reading, writing and trimming the entries of one cache directory.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include <sys/stat.h>

#include "cache/entry_format.hpp"
#include "cache/files.hpp"
#include "cache/trust.hpp"
#include "core/warnings.hpp"
#include "cutejit/cache/kernel_cache.hpp"
#include "cutejit/core/error.hpp"

namespace cutejit {

namespace {

int64_t now_unix() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// A temporary file this old was left by a writer that died; a live one takes milliseconds.
constexpr int64_t abandoned_after_seconds = 3600;

std::string key_of(const std::filesystem::path& entry) { return entry.stem().string(); }

/// A file at an entry's name: a cache entry if it is a regular file, debris to remove if not.
bool at_entry_name(const detail::DirectoryEntry& e) { return !e.temporary && e.path.extension() == ".entry"; }
bool is_entry(const detail::DirectoryEntry& e) { return at_entry_name(e) && e.regular; }
/// An entry that counts toward the size limit and may be evicted for it: one a load could use.
/// A file too large to read or another user's must not make the cache evict its own entries.
bool counts(const detail::DirectoryEntry& e) {
  return is_entry(e) && e.bytes <= detail::max_entry_bytes && detail::distrust(e.owner, e.mode).empty();
}

/// Why the cache must neither read nor write `cache`'s directories; empty when it may.
std::string distrust_directories(const KernelCache& cache) {
  std::string why = detail::distrust_directory(cache.directory());
  return why.empty() ? detail::distrust_directory(cache.entries_directory()) : why;
}
std::string use_your_own(const std::string& why) {
  return why + "; cutejit neither reads nor writes a cache another user controls. Use a directory of your own "
               "(CUTEJIT_CACHE_DIR), or make it yours (chown, chmod o-w)";
}
bool abandoned(const detail::DirectoryEntry& e, int64_t now) {
  return e.temporary && now - e.modified_ns / 1'000'000'000 > abandoned_after_seconds;
}

/// The directory's files; a directory that exists but cannot be read is an error for the
/// inspection and maintenance calls (the JIT's own calls treat it as empty).
std::vector<detail::DirectoryEntry> files_or_throw(const KernelCache& cache) {
  if (std::string why = distrust_directories(cache); !why.empty()) throw Error("error: " + use_your_own(why));
  detail::DirectoryScan scan = detail::scan_directory(cache.entries_directory());
  if (!scan.error.empty()) throw Error(scan.error);
  return std::move(scan.files);
}

/// Removes `f`, counting what went and what would not.
void remove_counted(const detail::DirectoryEntry& f, CacheRemoval& r) {
  std::string error = detail::remove_path(f.path);
  if (!error.empty()) {
    if (r.failed++ == 0) r.first_error = error;
    return;
  }
  r.bytes += f.bytes;
  r.entries += is_entry(f);
}

CacheEntryInfo info_of(const detail::DirectoryEntry& file, const detail::DecodedEntry& d) {
  return {key_of(file.path), d.kernel.name, d.kernel.target.name(), file.bytes, d.created, file.modified_ns / 1'000'000'000, d.metadata_json};
}

/// Abandoned temporaries, then least-recently-used entries down to `limit`.
CacheRemoval prune_files(const std::vector<detail::DirectoryEntry>& files, uint64_t limit) {
  CacheRemoval r;
  uint64_t total = 0;
  const int64_t now = now_unix();
  std::vector<detail::DirectoryEntry> entries;
  for (const detail::DirectoryEntry& f : files) {
    if (abandoned(f, now)) remove_counted(f, r);
    else if (counts(f)) entries.push_back(f), total += f.bytes;
  }
  // Least recently used first; a hit refreshes an entry's modification time.
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.modified_ns < b.modified_ns; });
  for (const detail::DirectoryEntry& e : entries) {
    if (total <= limit) break;
    size_t failed = r.failed;
    remove_counted(e, r);
    if (r.failed == failed) total -= e.bytes;
  }
  return r;
}

}  // namespace

std::optional<CompiledKernel> KernelCache::load(std::string_view key) const {
  if (!enabled_) return std::nullopt;
  if (std::string why = distrust_directories(*this); !why.empty()) {
    detail::warn_once("cache trust", use_your_own(why) + "; compiling instead");
    return std::nullopt;
  }
  std::filesystem::path path = entries_directory() / detail::entry_file_name(key);
  detail::ReadResult read = detail::read_whole_file(path);
  if (read.missing) return std::nullopt;
  if (read.bytes)
    if (std::string why = detail::distrust(read.owner, read.mode); !why.empty()) {
      detail::warn_once("cache entry", "the kernel cache entry " + path.string() + " is " + why + "; it is not loaded: recompiling and replacing it");
      return std::nullopt;
    }
  if (read.refused) {
    detail::warn_once("cache entry", "the kernel cache entry is unusable (" + read.error + "); recompiling and replacing it");
    return std::nullopt;
  }
  if (!read.bytes) {
    detail::warn_once("cache read", "the kernel cache cannot be read (" + read.error + "); compiling instead");
    return std::nullopt;
  }
  detail::DecodedEntry d = detail::decode_entry(*read.bytes, key, /*same_toolchain=*/true);
  if (!d.problem.empty()) {
    detail::warn_once("cache entry",
                      "the kernel cache entry " + path.string() + " is unusable (" + d.problem + "); recompiling and replacing it");
    return std::nullopt;
  }
  detail::mark_used(path);
  return std::move(d.kernel);
}

std::optional<CompiledKernel> KernelCache::read(std::string_view key) const {
  if (!distrust_directories(*this).empty()) return std::nullopt;
  detail::ReadResult read = detail::read_whole_file(entries_directory() / detail::entry_file_name(key));
  if (!read.bytes || !detail::distrust(read.owner, read.mode).empty()) return std::nullopt;
  detail::DecodedEntry d = detail::decode_entry(*read.bytes, key, /*same_toolchain=*/false);
  if (!d.problem.empty()) return std::nullopt;
  return std::move(d.kernel);
}

bool KernelCache::contains(std::string_view key) const {
  struct stat st {};
  const std::filesystem::path path = entries_directory() / detail::entry_file_name(key);
  return enabled_ && lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && detail::distrust(st.st_uid, st.st_mode).empty() &&
         distrust_directories(*this).empty();
}

std::string KernelCache::store(std::string_view key, const CompiledKernel& kernel) const {
  if (!enabled_) return "the disk cache is off";
  if (std::string why = distrust_directories(*this); !why.empty()) {
    detail::warn_once("cache trust", use_your_own(why) + "; compiling instead");
    return use_your_own(why);
  }
  std::string bytes = detail::encode_entry(key, kernel, now_unix());
  const std::string name = detail::entry_file_name(key);
  std::string error = detail::write_atomically(entries_directory(), name, bytes, {.create_directory = true});
  if (!error.empty()) {
    detail::warn_once("cache write",
                      "kernels are compiled but not cached: " + error +
                          ". Set CUTEJIT_CACHE_DIR to a writable directory, or CUTEJIT_CACHE=off");
    return error;
  }
  // One reading of the directory serves both: abandoned temporaries never linger until a
  // manual prune, and the size limit holds. A directory this process cannot read is left alone.
  detail::DirectoryScan scan = detail::scan_directory(entries_directory());
  uint64_t total = 0;
  bool debris = false;
  const int64_t now = now_unix();
  for (const detail::DirectoryEntry& f : scan.files) {
    if (counts(f)) total += f.bytes;
    debris |= abandoned(f, now);
  }
  if (total > max_bytes_ || debris) prune_files(scan.files, max_bytes_);
  if (bytes.size() > max_bytes_)
    return "the entry (" + std::to_string(bytes.size()) + " bytes) is larger than the cache's size limit (" + std::to_string(max_bytes_) +
           " bytes, CUTEJIT_CACHE_MAX_SIZE): it was evicted as soon as it was stored";
  return {};
}

std::vector<CacheEntryInfo> KernelCache::list() const {
  std::vector<CacheEntryInfo> out;
  for (const detail::DirectoryEntry& file : files_or_throw(*this)) {
    if (!is_entry(file)) continue;
    detail::ReadResult read = detail::read_whole_file(file.path);
    if (!read.bytes || !detail::distrust(read.owner, read.mode).empty()) continue;
    detail::DecodedEntry d = detail::decode_entry(*read.bytes, key_of(file.path), /*same_toolchain=*/false);
    if (d.problem.empty()) out.push_back(info_of(file, d));
  }
  std::sort(out.begin(), out.end(), [](const CacheEntryInfo& a, const CacheEntryInfo& b) {
    return a.last_used != b.last_used ? a.last_used > b.last_used : a.key < b.key;
  });
  return out;
}

CacheEntryInfo KernelCache::show(std::string_view key_prefix) const {
  if (key_prefix.empty()) throw Error("error: give a key (or the first few hex digits of one); `cutejit-cache list` shows them");
  std::vector<detail::DirectoryEntry> matches;
  for (const detail::DirectoryEntry& file : files_or_throw(*this))
    if (is_entry(file) && key_of(file.path).starts_with(key_prefix)) matches.push_back(file);
  if (matches.empty()) throw Error("error: no cache entry has a key starting with '" + std::string(key_prefix) + "' in " + entries_directory().string());
  if (matches.size() > 1)
    throw Error("error: " + std::to_string(matches.size()) + " cache entries have keys starting with '" + std::string(key_prefix) +
                "'; give more digits");
  detail::ReadResult read = detail::read_whole_file(matches[0].path);
  if (!read.bytes) throw Error("error: " + read.error);
  if (std::string why = detail::distrust(read.owner, read.mode); !why.empty())
    throw Error("error: the entry " + matches[0].path.string() + " is " + why + "; the JIT does not load it, and `cutejit-cache verify` removes it");
  detail::DecodedEntry d = detail::decode_entry(*read.bytes, key_of(matches[0].path), /*same_toolchain=*/false);
  if (!d.problem.empty())
    throw Error("error: the entry " + matches[0].path.string() + " is unusable (" + d.problem + "); `cutejit-cache verify` removes it");
  return info_of(matches[0], d);
}

CacheVerifyReport KernelCache::verify(bool remove_bad) const {
  CacheVerifyReport report;
  for (const detail::DirectoryEntry& file : files_or_throw(*this)) {
    if (!at_entry_name(file)) continue;
    ++report.checked;
    std::string problem = "not a regular file (a directory, FIFO, socket, device or symbolic link)";
    if (file.regular) {
      detail::ReadResult read = detail::read_whole_file(file.path);
      if (read.missing) continue;  // removed by another process meanwhile
      problem = !read.bytes ? read.error : detail::distrust(read.owner, read.mode);
      if (read.bytes && problem.empty()) problem = detail::decode_entry(*read.bytes, key_of(file.path), /*same_toolchain=*/false).problem;
    }
    if (problem.empty()) continue;
    CacheVerifyReport::Bad& bad = report.bad.emplace_back(CacheVerifyReport::Bad{file.path.filename().string(), problem});
    if (remove_bad) {
      bad.removal_error = detail::remove_path(file.path);
      bad.removed = bad.removal_error.empty();
    }
  }
  return report;
}

CacheRemoval KernelCache::prune(uint64_t limit) const { return prune_files(files_or_throw(*this), limit); }

CacheRemoval KernelCache::clear() const {
  CacheRemoval r;
  const int64_t now = now_unix();
  for (const detail::DirectoryEntry& f : files_or_throw(*this))
    if (!f.temporary || abandoned(f, now)) remove_counted(f, r);
  return r;
}

uint64_t KernelCache::size_bytes() const {
  uint64_t total = 0;
  for (const detail::DirectoryEntry& f : files_or_throw(*this))
    if (counts(f)) total += f.bytes;
  return total;
}

CacheStats KernelCache::stats() const {
  CacheStats s;
  std::map<std::string, size_t> per_target;
  const int64_t now = now_unix();
  for (const detail::DirectoryEntry& f : files_or_throw(*this)) {
    if (f.temporary) {
      ++s.temporary, s.temporary_bytes += f.bytes, s.abandoned += abandoned(f, now);
      continue;
    }
    if (!at_entry_name(f)) continue;
    detail::ReadResult read = f.regular ? detail::read_whole_file(f.path) : detail::ReadResult{};
    if (read.missing) continue;  // removed meanwhile
    detail::DecodedEntry d;
    if (read.bytes) d = detail::decode_entry(*read.bytes, key_of(f.path), /*same_toolchain=*/false);
    if (read.bytes && d.problem.empty()) d.problem = detail::distrust(read.owner, read.mode);
    if (read.bytes && d.problem.empty()) {
      ++s.entries, s.entry_bytes += f.bytes, ++per_target[d.kernel.target.name()];
    } else {
      ++s.unreadable, s.unreadable_bytes += f.bytes;
    }
  }
  s.per_target.assign(per_target.begin(), per_target.end());
  return s;
}

}  // namespace cutejit
