#include "cache/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cutejit::detail {

namespace {

std::string describe(const std::string& what, const std::filesystem::path& path, int error) {
  return what + " " + path.string() + ": " + std::strerror(error);
}

}  // namespace

ReadResult read_whole_file(const std::filesystem::path& path, uint64_t max_bytes, bool follow_links) {
  ReadResult r;
  // Non-blocking, so that a FIFO put where a file should be cannot stop the open (it is then
  // refused below, as everything but a regular file is).
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow_links ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    // No directory is a miss like no file; the store that follows reports an unusable directory.
    if (errno == ENOENT || errno == ENOTDIR) r.missing = true;
    else if (errno == ELOOP && !follow_links) r.refused = true, r.error = path.string() + " is a symbolic link, not a file";
    else r.error = describe("cannot open", path, errno);
    return r;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    r.error = describe("cannot stat", path, errno);
    close(fd);
    return r;
  }
  r.owner = st.st_uid;
  r.mode = st.st_mode;
  if (!S_ISREG(st.st_mode)) {
    r.error = path.string() + " is not a regular file (a directory, FIFO, socket or device)";
    r.refused = true;
    close(fd);
    return r;
  }
  // The size is checked before anything is allocated: a huge (or sparse) file must not exhaust memory.
  if (uint64_t(st.st_size) > max_bytes) {
    r.error = path.string() + " is " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(max_bytes) + " allowed";
    r.refused = true;
    close(fd);
    return r;
  }
  std::string bytes(size_t(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += size_t(n);
  }
  int read_errno = errno;
  close(fd);
  if (done != bytes.size()) r.error = describe("short read of", path, read_errno);
  else r.bytes = std::move(bytes);
  return r;
}

DirectoryScan scan_directory(const std::filesystem::path& directory) {
  DirectoryScan out;
  std::error_code ec;
  std::filesystem::directory_iterator it(directory, ec);
  for (std::filesystem::directory_iterator end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    // A link is never followed: what it points to is not the cache's, and its size and time
    // must not count. Another process may remove a file between listing and lstat: skip it.
    if (lstat(it->path().c_str(), &st) != 0) continue;
    const bool regular = S_ISREG(st.st_mode);
    out.files.push_back({it->path(), regular ? uint64_t(st.st_size) : 0, int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
                         it->path().filename().string().starts_with(temporary_prefix), regular, st.st_uid, st.st_mode});
  }
  if (ec && ec != std::errc::no_such_file_or_directory) out.error = "cannot read " + directory.string() + ": " + ec.message();
  return out;
}

std::string remove_path(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) return "cannot remove " + path.string() + ": " + ec.message();
  return {};
}

void mark_used(const std::filesystem::path& path) { utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

}  // namespace cutejit::detail
