#include "cache/trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace cutejit::detail {

std::string distrust(uid_t owner, mode_t mode) {
  const uid_t me = geteuid();
  if (owner != me && owner != 0)
    return "owned by uid " + std::to_string(owner) + ", not by you (uid " + std::to_string(me) + ") or root";
  // Group-writable is allowed: a team may share a cache through a group it chose.
  if (mode & S_IWOTH) return "writable by others";
  return {};
}

std::string distrust_directory(const std::filesystem::path& path) {
  struct stat st {};
  // Any other failure to stat it is the reader's to report, as a directory it cannot read.
  if (stat(path.c_str(), &st) != 0) return {};
  std::string why = distrust(st.st_uid, st.st_mode);
  return why.empty() ? why : "the cache directory " + path.string() + " is " + why;
}

}  // namespace cutejit::detail
