/** \file
 * The on-disk kernel cache: compiled specializations (cubin, PTX and JSON metadata) stored under
 * a strong hash of everything that decides the cubin, shared safely by every process and thread
 * that uses the same directory. The pipeline consults it on its own; this handle is for tools
 * (the `cutejit-cache` CLI, tests) that inspect, verify or trim a cache. docs/cache.md has the
 * key, the file format and the environment variables.
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutejit/core/compiled.hpp"

namespace cutejit {

/// One entry, as `list` and `show` report it.
struct CacheEntryInfo {
  std::string key;            ///< 32 hex digits (XXH3-128)
  std::string kernel;
  std::string target;
  uint64_t file_bytes = 0;
  int64_t created = 0;        ///< seconds since the Unix epoch
  int64_t last_used = 0;      ///< seconds since the Unix epoch (the file's modification time)
  std::string metadata_json;  ///< the entry's metadata, as stored
};

/// What `verify` found: the number of entries read and, for each bad one, why, and whether it
/// was removed.
struct CacheVerifyReport {
  struct Bad {
    std::string file;
    std::string problem;
    bool removed = false;
    std::string removal_error;  ///< why it could not be removed, when removal was asked for
  };
  size_t checked = 0;
  std::vector<Bad> bad;
};

/// What `prune` and `clear` removed, and what they could not.
struct CacheRemoval {
  size_t entries = 0;        ///< entries removed
  uint64_t bytes = 0;        ///< bytes removed: entries, abandoned temporary files, other debris
  size_t failed = 0;         ///< files that should have gone and could not be removed
  std::string first_error;   ///< why the first of those could not
};

/// One reading of the directory, for `stats`: what it holds, sorted by what each file is.
struct CacheStats {
  size_t entries = 0;        ///< readable entries
  uint64_t entry_bytes = 0;
  size_t unreadable = 0;     ///< entry files that fail their checks, or are not regular files
  uint64_t unreadable_bytes = 0;
  size_t temporary = 0;      ///< writers' temporary files
  uint64_t temporary_bytes = 0;
  size_t abandoned = 0;      ///< of those, older than an hour: left by writers that died
  std::vector<std::pair<std::string, size_t>> per_target;  ///< readable entries per target
};

class KernelCache {
 public:
  static constexpr uint64_t default_max_bytes = uint64_t(1) << 30;

  /// The cache the JIT uses: CUTEJIT_CACHE=off disables it; the directory is
  /// $CUTEJIT_CACHE_DIR, else $XDG_CACHE_HOME/cutejit, else ~/.cache/cutejit; the size limit is
  /// $CUTEJIT_CACHE_MAX_SIZE (e.g. "512M", "2G"; default 1 GiB). Reads the environment on
  /// every call, so a changed variable takes effect for the next compile. A setting it cannot
  /// use is reported once on stderr and replaced by its default; never throws.
  static KernelCache from_environment();
  /// The directory the environment names ($CUTEJIT_CACHE_DIR, else $XDG_CACHE_HOME/cutejit,
  /// else ~/.cache/cutejit), whether or not CUTEJIT_CACHE=off; empty when none is set. A
  /// relative XDG_CACHE_HOME is ignored with a warning, as the XDG specification says.
  static std::filesystem::path default_directory();
  /// A cache rooted at `directory`; nothing is created until the first store.
  explicit KernelCache(std::filesystem::path directory, uint64_t max_bytes = default_max_bytes);
  /// A disabled cache: every lookup misses, every store is dropped.
  static KernelCache disabled();

  bool enabled() const { return enabled_; }
  const std::filesystem::path& directory() const { return directory_; }
  uint64_t max_bytes() const { return max_bytes_; }
  /// Where the entries of the current format live: directory()/v1.
  std::filesystem::path entries_directory() const;

  /// The entry stored under `key`, or nothing. An entry that is unreadable, truncated, fails its
  /// checksum, was written by another format or version, holds a cubin for another target or
  /// kernel, or is owned by another user (not root) or writable by others is a miss: it is
  /// reported once per process on stderr and the caller recompiles and overwrites it. A cache
  /// directory owned by another user or writable by others is neither read nor written
  /// (docs/cache.md, "Threat model"). Never throws.
  std::optional<CompiledKernel> load(std::string_view key) const;
  /// The entry stored under `key` as it is, from any cutejit or toolchain version, without
  /// counting as a use (for inspection: `cutejit-cache show --ptx`); nothing when there is no
  /// sound entry. Never throws.
  std::optional<CompiledKernel> read(std::string_view key) const;
  /// Whether a regular file is stored under `key` (not read or checked: `load` does that).
  bool contains(std::string_view key) const;
  /// Stores atomically (temp file, then rename; whatever else occupies the entry's name is
  /// replaced), then removes temporary files abandoned by writers that died and evicts
  /// least-recently-used entries beyond the size limit. Returns an empty string when the entry
  /// was stored and kept, else why not (a directory that cannot be written, a full disk or
  /// file-size limit, a directory another user controls, an entry larger than the limit); a
  /// failed write is also reported once on stderr. Never throws.
  std::string store(std::string_view key, const CompiledKernel& kernel) const;

  // The inspection and maintenance calls below throw Error when the entries' directory exists
  // but cannot be read (not a directory, no permission, a symlink loop), or when it or the
  // cache directory is owned by another user or writable by others; a directory that does not
  // exist is an empty cache. Entries another user owns are not listed, and verify calls them bad.

  /// Every readable entry, most recently used first.
  std::vector<CacheEntryInfo> list() const;
  /// The entry whose key starts with `key_prefix`; throws Error when none or several match.
  CacheEntryInfo show(std::string_view key_prefix) const;
  /// Re-reads every entry and checks it (an entry's name holding a directory or any other
  /// non-regular file is bad too); with `remove_bad`, removes the bad ones.
  CacheVerifyReport verify(bool remove_bad) const;
  /// Removes abandoned temporary files, then least-recently-used entries until the cache holds
  /// at most `max_bytes`.
  CacheRemoval prune(uint64_t max_bytes) const;
  /// Removes every entry, everything else at an entry's name, and temporary files older than
  /// an hour (younger ones belong to writers still at work).
  CacheRemoval clear() const;
  /// Total bytes of the entry files the size limit counts: regular files (links are not
  /// followed) of at most an entry's largest size, owned by this user or root.
  uint64_t size_bytes() const;
  /// What the directory holds, from one reading of it.
  CacheStats stats() const;

  /// "1073741824", "512K", "512KiB", "100M", "1G", "1.5G": bytes, rounded down. Throws Error
  /// (and nothing else) on anything else, or on a size above 2^64 - 1 bytes.
  static uint64_t parse_size(std::string_view text);

 private:
  KernelCache() = default;
  bool enabled_ = false;
  std::filesystem::path directory_;
  uint64_t max_bytes_ = default_max_bytes;
};

}  // namespace cutejit
