// Reading, writing and trimming the entries of one cache directory.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cache/entry_format.hpp"
#include "cache/files.hpp"
#include "cache/warnings.hpp"
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

bool is_entry(const detail::DirectoryEntry& e) { return !e.temporary && e.path.extension() == ".entry"; }

/// Removes a file if it can; whether it did (what a report may count).
bool remove_quietly(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::remove(p, ec) && !ec;
}

CacheEntryInfo info_of(const detail::DirectoryEntry& file, const detail::DecodedEntry& d) {
  return {key_of(file.path), d.kernel.name, d.kernel.target.name(), file.bytes, d.created, file.modified_ns / 1'000'000'000, d.metadata_json};
}

}  // namespace

std::optional<CompiledKernel> KernelCache::load(std::string_view key) const {
  if (!enabled_) return std::nullopt;
  std::filesystem::path path = entries_directory() / detail::entry_file_name(key);
  detail::ReadResult read = detail::read_whole_file(path);
  if (read.missing) return std::nullopt;
  if (read.refused) {
    detail::warn_once(detail::CacheProblem::bad_entry, "the kernel cache entry is unusable (" + read.error + "); recompiling and replacing it");
    return std::nullopt;
  }
  if (!read.bytes) {
    detail::warn_once(detail::CacheProblem::unreadable, "the kernel cache cannot be read (" + read.error + "); compiling instead");
    return std::nullopt;
  }
  detail::DecodedEntry d = detail::decode_entry(*read.bytes, key, /*same_toolchain=*/true);
  if (!d.problem.empty()) {
    detail::warn_once(detail::CacheProblem::bad_entry,
                      "the kernel cache entry " + path.string() + " is unusable (" + d.problem + "); recompiling and replacing it");
    return std::nullopt;
  }
  detail::mark_used(path);
  return std::move(d.kernel);
}

bool KernelCache::contains(std::string_view key) const {
  std::error_code ec;
  return enabled_ && std::filesystem::exists(entries_directory() / detail::entry_file_name(key), ec);
}

void KernelCache::store(std::string_view key, const CompiledKernel& kernel) const {
  if (!enabled_) return;
  std::string bytes = detail::encode_entry(key, kernel, now_unix());
  std::string error = detail::write_atomically(entries_directory(), detail::entry_file_name(key), bytes);
  if (!error.empty()) {
    detail::warn_once(detail::CacheProblem::unwritable,
                      "kernels are compiled but not cached: " + error +
                          ". Set CUTEJIT_CACHE_DIR to a writable directory, or CUTEJIT_CACHE=off");
    return;
  }
  if (size_bytes() > max_bytes_) prune(max_bytes_);
}

std::vector<CacheEntryInfo> KernelCache::list() const {
  std::vector<CacheEntryInfo> out;
  for (const detail::DirectoryEntry& file : detail::scan_directory(entries_directory())) {
    if (!is_entry(file)) continue;
    detail::ReadResult read = detail::read_whole_file(file.path);
    if (!read.bytes) continue;
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
  for (const detail::DirectoryEntry& file : detail::scan_directory(entries_directory()))
    if (is_entry(file) && key_of(file.path).starts_with(key_prefix)) matches.push_back(file);
  if (matches.empty()) throw Error("error: no cache entry has a key starting with '" + std::string(key_prefix) + "' in " + entries_directory().string());
  if (matches.size() > 1)
    throw Error("error: " + std::to_string(matches.size()) + " cache entries have keys starting with '" + std::string(key_prefix) +
                "'; give more digits");
  detail::ReadResult read = detail::read_whole_file(matches[0].path);
  if (!read.bytes) throw Error("error: " + read.error);
  detail::DecodedEntry d = detail::decode_entry(*read.bytes, key_of(matches[0].path), /*same_toolchain=*/false);
  if (!d.problem.empty())
    throw Error("error: the entry " + matches[0].path.string() + " is unusable (" + d.problem + "); `cutejit-cache verify` removes it");
  return info_of(matches[0], d);
}

CacheVerifyReport KernelCache::verify(bool remove_bad) const {
  CacheVerifyReport report;
  for (const detail::DirectoryEntry& file : detail::scan_directory(entries_directory())) {
    if (!is_entry(file)) continue;
    ++report.checked;
    detail::ReadResult read = detail::read_whole_file(file.path);
    if (read.missing) continue;  // removed by another process meanwhile
    std::string problem = read.bytes ? detail::decode_entry(*read.bytes, key_of(file.path), /*same_toolchain=*/false).problem : read.error;
    if (problem.empty()) continue;
    report.bad.emplace_back(file.path.filename().string(), problem);
    if (remove_bad) remove_quietly(file.path);
  }
  return report;
}

uint64_t KernelCache::prune(uint64_t limit) const {
  std::vector<detail::DirectoryEntry> files = detail::scan_directory(entries_directory());
  uint64_t total = 0, removed = 0;
  int64_t now = now_unix();
  std::vector<detail::DirectoryEntry> entries;
  // Only what is really removed counts: an abandoned temporary file as much as an entry.
  for (const detail::DirectoryEntry& f : files) {
    if (f.temporary && now - f.modified_ns / 1'000'000'000 > abandoned_after_seconds) removed += remove_quietly(f.path) ? f.bytes : 0;
    else if (is_entry(f)) entries.push_back(f), total += f.bytes;
  }
  // Least recently used first; a hit refreshes an entry's modification time.
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.modified_ns < b.modified_ns; });
  for (const detail::DirectoryEntry& e : entries) {
    if (total <= limit) break;
    if (!remove_quietly(e.path)) continue;
    total -= e.bytes;
    removed += e.bytes;
  }
  return removed;
}

size_t KernelCache::clear() const {
  size_t removed = 0;
  for (const detail::DirectoryEntry& f : detail::scan_directory(entries_directory())) {
    bool gone = remove_quietly(f.path);
    removed += is_entry(f) && gone;
  }
  return removed;
}

uint64_t KernelCache::size_bytes() const {
  uint64_t total = 0;
  for (const detail::DirectoryEntry& f : detail::scan_directory(entries_directory()))
    if (is_entry(f)) total += f.bytes;
  return total;
}

}  // namespace cutejit
