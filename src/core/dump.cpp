#include "core/dump.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

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
  directory_ = dir;
  // The first compile's files have plain names; later ones are numbered.
  std::string name = kernel + "." + target;
  int n = earlier_dumps(name);
  prefix_ = name + "." + (n ? std::to_string(n) + "." : "");
}

void DumpSink::write(std::string_view stage, std::string_view contents) const {
  if (!enabled()) return;
  // A dump is a debugging aid: failing to write one must not fail the compile.
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  std::ofstream out(std::filesystem::path(directory_) / (prefix_ + std::string(stage)), std::ios::binary);
  out.write(contents.data(), std::streamsize(contents.size()));
}

}  // namespace cutejit::detail
