// What a hostile user of a shared machine does to a cache: take entries apart and put them back
// together with every checksum right, and plant files as another user.
#pragma once

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "cache_test_support.hpp"

namespace cache_test {

/// An entry's three sections (docs/cache.md), and how to seal them back into an entry whose
/// header sizes, checksum and metadata hash agree with what they hold.
struct EntryParts {
  nlohmann::json metadata;
  std::string ptx, cubin;

  static EntryParts of(const std::string& entry) {
    constexpr size_t header = 48;
    uint32_t metadata_bytes = 0;
    uint64_t ptx_bytes = 0;
    std::memcpy(&metadata_bytes, entry.data() + 12, 4);
    std::memcpy(&ptx_bytes, entry.data() + 16, 8);
    return {nlohmann::json::parse(entry.substr(header, metadata_bytes)), entry.substr(header + metadata_bytes, ptx_bytes),
            entry.substr(header + metadata_bytes + ptx_bytes)};
  }

  /// The entry, sealed; `metadata_text` replaces the metadata's JSON when given (for text no
  /// JSON library would write, such as nesting 100,000 deep).
  std::string seal(const std::string& metadata_text = "") {
    char hash[33];
    XXH128_hash_t h = XXH3_128bits(cubin.data(), cubin.size());
    std::snprintf(hash, sizeof hash, "%016llx%016llx", static_cast<unsigned long long>(h.high64), static_cast<unsigned long long>(h.low64));
    metadata["cubin_xxh3_128"] = hash;
    metadata["ptx_bytes"] = ptx.size();
    metadata["cubin_bytes"] = cubin.size();
    const std::string json = metadata_text.empty() ? metadata.dump(1) : metadata_text;
    std::string out(48, '\0');
    std::memcpy(out.data(), "CUTEJITK", 8);
    uint32_t format = 1, metadata_bytes = uint32_t(json.size());
    uint64_t ptx_bytes = ptx.size(), cubin_bytes = cubin.size();
    std::memcpy(out.data() + 8, &format, 4);
    std::memcpy(out.data() + 12, &metadata_bytes, 4);
    std::memcpy(out.data() + 16, &ptx_bytes, 8);
    std::memcpy(out.data() + 24, &cubin_bytes, 8);
    out += json + ptx + cubin;
    XXH128_canonical_t sum;
    XXH128_canonicalFromHash(&sum, XXH3_128bits(out.data() + 48, out.size() - 48));
    std::memcpy(out.data() + 32, sum.digest, 16);
    return out;
  }
};

/// The user a test plants files as, when it runs as root: nobody.
inline constexpr uid_t other_user = 65534;

/// Gives `path` to another user; false (and a WARN saying so) when this process may not.
inline bool give_to_other_user(const std::filesystem::path& path) {
  if (geteuid() != 0) {
    WARN("not running as root: files cannot be planted as another user, so that case was not checked");
    return false;
  }
  return ::lchown(path.c_str(), other_user, other_user) == 0;
}

}  // namespace cache_test
