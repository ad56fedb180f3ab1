/** \file
 * The file operations the cache is made of, each reporting failure as a message instead of
 * throwing: a cache that cannot read or write must leave the JIT working.
 */
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/atomic_file.hpp"

namespace cutejit::detail {

struct ReadResult {
  std::optional<std::string> bytes;  ///< the contents, when the file was read whole
  bool missing = false;              ///< there is no such file or directory: a plain miss, not a problem
  bool refused = false;              ///< something is there, but not a regular file or too large to be an entry
  std::string error;                 ///< otherwise, why it could not be read
  uid_t owner = 0;                   ///< of the file read (for trust.hpp)
  mode_t mode = 0;
};
/// The largest entry the cache reads: far above any kernel's cubin and PTX, far below a file
/// that could exhaust memory.
inline constexpr uint64_t max_entry_bytes = uint64_t(256) << 20;
/// Reads a regular file of at most `max_bytes`; anything else (a directory, a FIFO, a larger
/// file; with `follow_links` false, a symbolic link) is refused, found before anything blocks
/// or is allocated.
ReadResult read_whole_file(const std::filesystem::path& path, uint64_t max_bytes = max_entry_bytes, bool follow_links = false);

struct DirectoryEntry {
  std::filesystem::path path;
  uint64_t bytes = 0;
  int64_t modified_ns = 0;  ///< nanoseconds since the epoch: orders entries written in the same second
  bool temporary = false;
  bool regular = true;      ///< false: a directory, FIFO, socket, device or symbolic link (never followed)
  uid_t owner = 0;
  mode_t mode = 0;
};
struct DirectoryScan {
  std::vector<DirectoryEntry> files;
  std::string error;  ///< why the directory could not be read; empty when it was, or does not exist
};
/// Everything in `directory`, each file with what it is.
DirectoryScan scan_directory(const std::filesystem::path& directory);

/// Removes a file, or a directory with what it holds; empty on success, else why not.
std::string remove_path(const std::filesystem::path& path);

/// Sets the modification time to now: it is the entry's last use, for LRU eviction. Best effort.
void mark_used(const std::filesystem::path& path);

}  // namespace cutejit::detail
