// Where the cache lives and how big it may grow, as the environment says.
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "core/warnings.hpp"
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
  if (std::string xdg = variable("XDG_CACHE_HOME"); !xdg.empty()) {
    // The XDG specification: a relative path is invalid and to be ignored. Used, it would put
    // the cache wherever the program happens to run.
    if (std::filesystem::path(xdg).is_absolute()) return std::filesystem::path(xdg) / "cutejit";
    detail::warn_once("XDG_CACHE_HOME", "XDG_CACHE_HOME='" + xdg + "' is not an absolute path, so it is ignored (as the XDG specification says); " +
                                            "the cache is in $HOME/.cache/cutejit");
  }
  if (std::string home = variable("HOME"); !home.empty()) return std::filesystem::path(home) / ".cache" / "cutejit";
  return {};
}

KernelCache KernelCache::from_environment() {
  const std::string on = lowercase(detail::setting("CUTEJIT_CACHE"));
  if (on == "off" || on == "0" || on == "false" || on == "no") return disabled();
  if (!(on.empty() || on == "on" || on == "1" || on == "true" || on == "yes"))
    detail::warn_once("CUTEJIT_CACHE", "CUTEJIT_CACHE='" + on + "' is neither on (on, 1, true, yes) nor off (off, 0, false, no); the cache stays on");

  std::filesystem::path directory = default_directory();
  if (directory.empty()) {
    detail::warn_once("cache directory",
                      "the kernel cache is off: none of CUTEJIT_CACHE_DIR, XDG_CACHE_HOME and HOME is set");
    return disabled();
  }

  uint64_t max_bytes = default_max_bytes;
  if (std::string size = variable("CUTEJIT_CACHE_MAX_SIZE"); !size.empty()) {
    try {
      max_bytes = parse_size(size);
    } catch (const Error& e) {
      detail::warn_once("CUTEJIT_CACHE_MAX_SIZE", std::string("CUTEJIT_CACHE_MAX_SIZE ignored, using 1G: ") + e.what());
    }
  }
  return KernelCache(directory, max_bytes);
}

uint64_t KernelCache::parse_size(std::string_view text) {
  // DIGITS [. DIGITS] [UNIT], UNIT one of B, K, KB, KiB, M, MB, MiB, G, GB, GiB, T, TB, TiB in
  // any case, all powers of 1024. Nothing else: no sign, space, exponent, hex, inf or nan.
  auto fail = [&] {
    throw Error("error: '" + std::string(text) + "' is not a size; write bytes or a number with K, M, G or T (powers of 1024, " +
                "optionally followed by B or iB), e.g. 512M, 1.5G or 2GiB");
  };
  size_t at = 0;
  auto digits = [&] {
    size_t from = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    return text.substr(from, at - from);
  };
  std::string_view whole = digits(), fraction;
  if (whole.empty()) fail();
  if (at < text.size() && text[at] == '.') {
    ++at;
    fraction = digits();
    if (fraction.empty()) fail();
  }
  std::string unit = lowercase(std::string(text.substr(at)));
  uint64_t scale = 1;
  const char* prefixes = "kmgt";
  if (!unit.empty() && unit != "b") {
    const char* p = std::strchr(prefixes, unit[0]);
    std::string_view rest = std::string_view(unit).substr(1);
    if (!p || !(rest.empty() || rest == "b" || rest == "ib")) fail();
    for (const char* q = prefixes; q <= p; ++q) scale *= 1024;
  }
  // Integer arithmetic, exact: bytes = whole * scale + fraction * scale, rounded down. Fraction
  // digits past the 18th are worth less than a millionth of a byte (the scale is at most 2^40): dropped.
  if (whole.size() > 20) fail();
  unsigned __int128 bytes = 0;
  for (char c : whole) bytes = bytes * 10 + unsigned(c - '0');
  bytes *= scale;
  fraction = fraction.substr(0, 18);
  unsigned __int128 numerator = 0, denominator = 1;
  for (char c : fraction) numerator = numerator * 10 + unsigned(c - '0'), denominator *= 10;
  bytes += numerator * scale / denominator;
  if (bytes > std::numeric_limits<uint64_t>::max()) fail();
  return uint64_t(bytes);
}

}  // namespace cutejit
