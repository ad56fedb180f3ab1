#include "jit/dump.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace cutejit::detail {

DumpSink::DumpSink(std::string kernel, std::string target) : prefix_(kernel + "." + target + ".") {
  if (const char* dir = std::getenv("CUTEJIT_DUMP"); dir && *dir) directory_ = dir;
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
