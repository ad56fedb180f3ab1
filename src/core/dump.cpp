#include "core/dump.hpp"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/atomic_file.hpp"
#include "core/warnings.hpp"

namespace cutejit::detail {

namespace {
/// How many compiles of this kernel for this target this process dumped before: several
/// specializations (or `cutejit-cache warm -j`) must not overwrite each other's files.
int earlier_dumps(const std::string& kernel_and_target) {
  static std::mutex mutex;
  static std::map<std::string, int> seen;
  std::lock_guard lock(mutex);
  return seen[kernel_and_target]++;
}
}  // namespace

DumpSink::DumpSink(std::string kernel, std::string target) {
  const char* dir = std::getenv("CUTEJIT_DUMP");
  if (!dir || !*dir) return;
  // A directory that cannot be made is said once, and nothing is dumped: the compile then
  // uses the disk cache as it would without CUTEJIT_DUMP.
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec)) {
    warn_once("CUTEJIT_DUMP", "CUTEJIT_DUMP=" + std::string(dir) + " is not a directory that can be made" + (ec ? " (" + ec.message() + ")" : "") +
                                  "; nothing is dumped");
    return;
  }
  directory_ = dir;
  // The first compile's files have plain names; later ones are numbered.
  std::string name = kernel + "." + target;
  int n = earlier_dumps(name);
  prefix_ = name + "." + (n ? std::to_string(n) + "." : "");
}

void DumpSink::write(std::string_view stage, std::string_view contents) const {
  if (!enabled()) return;
  // A dump is a debugging aid: failing to write one must not fail the compile, only say so.
  // Through a temporary file and a rename, so that a link planted at a dump's predictable name
  // (in a shared folder) is replaced, not followed.
  std::string error = write_atomically(directory_, prefix_ + std::string(stage), contents);
  if (!error.empty()) warn_once("CUTEJIT_DUMP", "CUTEJIT_DUMP: " + error + "; dumps may be incomplete");
}

}  // namespace cutejit::detail
