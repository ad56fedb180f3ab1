// Where the cache lives and how big it may grow, as the environment says.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "cache/warnings.hpp"
#include "cutejit/cache/kernel_cache.hpp"
#include "cutejit/core/error.hpp"

namespace cutejit {

namespace {

std::string variable(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string lowercase(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

KernelCache::KernelCache(std::filesystem::path directory, uint64_t max_bytes)
    : enabled_(true), directory_(std::move(directory)), max_bytes_(max_bytes) {}

KernelCache KernelCache::disabled() { return KernelCache(); }

std::filesystem::path KernelCache::entries_directory() const { return directory_ / "v1"; }

std::filesystem::path KernelCache::default_directory() {
  if (std::string dir = variable("CUTEJIT_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = variable("XDG_CACHE_HOME"); !xdg.empty()) return std::filesystem::path(xdg) / "cutejit";
  if (std::string home = variable("HOME"); !home.empty()) return std::filesystem::path(home) / ".cache" / "cutejit";
  return {};
}

KernelCache KernelCache::from_environment() {
  std::string off = lowercase(variable("CUTEJIT_CACHE"));
  if (off == "off" || off == "0" || off == "false" || off == "no") return disabled();

  std::filesystem::path directory = default_directory();
  if (directory.empty()) {
    detail::warn_once(detail::CacheProblem::bad_setting,
                      "the kernel cache is off: none of CUTEJIT_CACHE_DIR, XDG_CACHE_HOME and HOME is set");
    return disabled();
  }

  uint64_t max_bytes = default_max_bytes;
  if (std::string size = variable("CUTEJIT_CACHE_MAX_SIZE"); !size.empty()) {
    try {
      max_bytes = parse_size(size);
    } catch (const Error& e) {
      detail::warn_once(detail::CacheProblem::bad_setting, std::string("CUTEJIT_CACHE_MAX_SIZE ignored, using 1G: ") + e.what());
    }
  }
  return KernelCache(directory, max_bytes);
}

uint64_t KernelCache::parse_size(std::string_view text) {
  auto fail = [&] {
    throw Error("error: '" + std::string(text) + "' is not a size; write bytes or a number with K, M, G or T (powers of 1024), e.g. 512M or 1.5G");
  };
  std::string s(text);
  size_t end = 0;
  double number = 0;
  try {
    number = std::stod(s, &end);
  } catch (const std::exception&) {
    fail();
  }
  if (!(number >= 0) || std::isinf(number)) fail();
  std::string unit = lowercase(s.substr(end));
  if (unit.ends_with("ib")) unit.resize(unit.size() - 2);
  else if (unit.size() == 2 && unit.back() == 'b') unit.pop_back();
  double scale = 1;
  if (unit == "k") scale = 1024.0;
  else if (unit == "m") scale = 1024.0 * 1024;
  else if (unit == "g") scale = 1024.0 * 1024 * 1024;
  else if (unit == "t") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty() && unit != "b") fail();
  double bytes = number * scale;
  if (bytes > 1.8e19) fail();
  return uint64_t(bytes);
}

}  // namespace cutejit
