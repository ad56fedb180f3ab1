/** \file
 * How cutejit writes a file another process may read: a fresh temporary file beside it, created
 * exclusively under an unpredictable name and never through a link, then renamed over the
 * file's name. Cache entries, tuning records, dumps and the CLI's exports all go through here,
 * so a link or file planted at a name cutejit would use can neither redirect a write (as root,
 * into a file of root's) nor block it; and a file-size limit (`ulimit -f`) fails the write
 * instead of killing the process.
 */
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace cutejit::detail {

/// Temporary files start with this; nothing else cutejit writes does.
inline constexpr std::string_view temporary_prefix = ".tmp.";

struct AtomicWrite {
  bool create_directory = false;  ///< create the directory (and its parents, 0775 less the umask) when missing
  bool sync = false;              ///< fsync before the rename: a crash then leaves the old file or the whole new one
  unsigned mode = 0644;           ///< the new file's permissions, less the umask
};

/// Writes `bytes` to `directory`/`name` through a temporary file and a rename: a reader sees the
/// old file, none, or the whole new one. A directory (or anything else a rename cannot replace)
/// at `name` is moved aside and removed first; a link at `name` is replaced, not followed.
/// Returns an empty string on success, else what failed (the temporary file is then gone).
std::string write_atomically(const std::filesystem::path& directory, std::string_view name, std::string_view bytes,
                             const AtomicWrite& how = {});

/// Writes all of `bytes` to `fd`, finishing writes a signal cut short. Returns 0 or the errno
/// that stopped it (ENOSPC for a write that made no progress). A file-size limit fails it with
/// EFBIG: the SIGXFSZ the kernel sends this thread is blocked for the write and discarded, so
/// that it is a full disk, not the end of the process.
int write_all(int fd, std::string_view bytes);

}  // namespace cutejit::detail
