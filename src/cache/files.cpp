#include "cache/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace cutejit::detail {

namespace {

std::string describe(const std::string& what, const std::filesystem::path& path, int error) {
  return what + " " + path.string() + ": " + std::strerror(error);
}

/// Unique per process and call, so concurrent writers never share a temporary file.
std::string temporary_name(std::string_view name) {
  static std::atomic<uint64_t> counter{0};
  return std::string(temporary_prefix) + std::string(name) + "." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

}  // namespace

ReadResult read_whole_file(const std::filesystem::path& path, uint64_t max_bytes) {
  ReadResult r;
  // Non-blocking, so that a FIFO put where a file should be cannot stop the open (it is then
  // refused below, as everything but a regular file is).
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    // No directory is a miss like no file; the store that follows reports an unusable directory.
    if (errno == ENOENT || errno == ENOTDIR) r.missing = true;
    else r.error = describe("cannot open", path, errno);
    return r;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    r.error = describe("cannot stat", path, errno);
    close(fd);
    return r;
  }
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

std::string write_atomically(const std::filesystem::path& directory, std::string_view name, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) return "cannot create " + directory.string() + ": " + ec.message();
  std::filesystem::path temporary = directory / temporary_name(name);
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return describe("cannot create", temporary, errno);
  size_t done = 0;
  int error = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      break;
    }
    done += size_t(n);
  }
  // No fsync, on purpose: it costs milliseconds per entry, and an entry a crash leaves
  // half-written fails its checksum and is simply recompiled.
  if (close(fd) != 0 && error == 0) error = errno;
  const std::filesystem::path final_path = directory / name;
  if (error == 0 && rename(temporary.c_str(), final_path.c_str()) != 0) {
    error = errno;
    // Something a rename cannot replace holds the name (a directory): move it aside, remove
    // it, and try once more, so that one stray directory does not defeat the cache forever.
    if (error == EISDIR || error == ENOTEMPTY || error == EEXIST) {
      std::filesystem::path aside = directory / temporary_name(std::string(name) + ".obstacle");
      if (rename(final_path.c_str(), aside.c_str()) == 0) {
        remove_path(aside);
        error = rename(temporary.c_str(), final_path.c_str()) == 0 ? 0 : errno;
      }
    }
  }
  if (error == 0) return {};
  unlink(temporary.c_str());
  return describe("cannot write", directory / name, error);
}

DirectoryScan scan_directory(const std::filesystem::path& directory) {
  DirectoryScan out;
  std::error_code ec;
  std::filesystem::directory_iterator it(directory, ec);
  for (std::filesystem::directory_iterator end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    // A link is what it points to; a dangling one is debris. Another process may remove a
    // file between listing and stat: skip it.
    const bool followed = stat(it->path().c_str(), &st) == 0;
    if (!followed && lstat(it->path().c_str(), &st) != 0) continue;
    const bool regular = followed && S_ISREG(st.st_mode);
    out.files.push_back({it->path(), regular ? uint64_t(st.st_size) : 0, int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
                         it->path().filename().string().starts_with(temporary_prefix), regular});
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
