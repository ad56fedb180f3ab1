#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace cutejit::detail {

namespace {

std::string describe(const std::string& what, const std::filesystem::path& path, int error) {
  return what + " " + path.string() + ": " + std::strerror(error);
}

/// 64 random bits as hex: a name no other user can guess and plant a file at beforehand.
/// Without getrandom (a seccomp filter, an old kernel) the bits come from the clock, the
/// process and a counter: still unique, and O_EXCL still refuses whatever was planted.
std::string random_suffix() {
  uint64_t bits = 0;
  if (getrandom(&bits, sizeof bits, GRND_NONBLOCK) != ssize_t(sizeof bits)) {
    static std::atomic<uint64_t> counter{0};
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    bits = (uint64_t(now.tv_nsec) << 32) ^ uint64_t(now.tv_sec) ^ (uint64_t(getpid()) << 16) ^ (counter++ * 0x9e3779b97f4a7c15ull);
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

/// Creates a file that did not exist, never through a link, under a fresh name in `directory`;
/// -1 with errno set when it cannot.
int create_temporary(const std::filesystem::path& directory, std::string_view name, unsigned mode, std::filesystem::path& temporary) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    temporary = directory / (std::string(temporary_prefix) + std::string(name) + "." + random_suffix());
    int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

/// Like create_directories, with the mode a shared cache needs (group-writable if the umask
/// allows, never more): a directory others may write is one cutejit then refuses to trust.
std::string make_directories(const std::filesystem::path& directory) {
  std::filesystem::path partial;
  for (const std::filesystem::path& part : directory) {
    partial /= part;
    if (mkdir(partial.c_str(), 0775) != 0 && errno != EEXIST) return describe("cannot create", partial, errno);
  }
  struct stat st {};
  if (stat(directory.c_str(), &st) != 0) return describe("cannot create", directory, errno);
  if (!S_ISDIR(st.st_mode)) return describe("cannot create", directory, ENOTDIR);
  return {};
}

}  // namespace

int write_all(int fd, std::string_view bytes) {
  sigset_t xfsz, previous;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  // Blocked for this thread only: other threads of the program keep their own disposition.
  pthread_sigmask(SIG_BLOCK, &xfsz, &previous);
  int error = 0;
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      break;
    }
    done += size_t(n);
  }
  if (error == EFBIG) {
    // The signal the limit raised is pending on this thread: take it, so that unblocking does
    // not deliver it.
    const timespec now{0, 0};
    while (sigtimedwait(&xfsz, nullptr, &now) == SIGXFSZ) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return error;
}

std::string write_atomically(const std::filesystem::path& directory, std::string_view name, std::string_view bytes, const AtomicWrite& how) {
  if (how.create_directory)
    if (std::string error = make_directories(directory); !error.empty()) return error;
  std::filesystem::path temporary;
  int fd = create_temporary(directory, name, how.mode, temporary);
  if (fd < 0) return describe("cannot create a temporary file in", directory, errno);
  int error = write_all(fd, bytes);
  if (error == 0 && how.sync && fsync(fd) != 0) error = errno;
  if (close(fd) != 0 && error == 0) error = errno;
  const std::filesystem::path final_path = directory / name;
  if (error == 0 && rename(temporary.c_str(), final_path.c_str()) != 0) {
    error = errno;
    // Something a rename cannot replace holds the name (a directory): move it aside, remove
    // it, and try once more, so that one stray directory does not defeat the cache forever.
    if (error == EISDIR || error == ENOTEMPTY || error == EEXIST) {
      std::filesystem::path aside = directory / (std::string(temporary_prefix) + std::string(name) + ".obstacle." + random_suffix());
      if (rename(final_path.c_str(), aside.c_str()) == 0) {
        std::error_code ec;
        std::filesystem::remove_all(aside, ec);
        error = rename(temporary.c_str(), final_path.c_str()) == 0 ? 0 : errno;
      }
    }
  }
  if (error == 0) return {};
  unlink(temporary.c_str());
  return describe("cannot write", final_path, error);
}

}  // namespace cutejit::detail
