#include "cache/key.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>

#include <llvm/Config/llvm-config.h>
#include <xxhash.h>

#include "assemble/assemble.hpp"

namespace cutejit::detail {

namespace {

std::string hex(const XXH128_hash_t& h) {
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}

/// Feeds one field with its length in front, so that no two different field lists can
/// produce the same byte stream ("ab" + "c" vs "a" + "bc").
void feed(XXH3_state_t* state, std::string_view field) {
  uint64_t size = field.size();
  XXH3_128bits_update(state, &size, sizeof size);
  XXH3_128bits_update(state, field.data(), field.size());
}

}  // namespace

ToolchainVersions toolchain_versions() { return {CUTEJIT_VERSION, LLVM_VERSION_STRING, assembler_version()}; }

std::string cache_key(std::string_view traced_module, const Target& target, std::string_view options) {
  const ToolchainVersions v = toolchain_versions();
  const std::string target_name = target.name();
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  // The schema name changes whenever the list of fields below changes.
  for (std::string_view field : {std::string_view("cutejit-cache-key-3"), traced_module, std::string_view(target_name),
                                 options, std::string_view(v.cutejit), std::string_view(v.llvm), std::string_view(v.assembler)})
    feed(state, field);
  std::string key = hex(XXH3_128bits_digest(state));
  XXH3_freeState(state);
  return key;
}

std::array<unsigned char, 16> xxh3_128(std::string_view bytes) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(bytes.data(), bytes.size()));
  std::array<unsigned char, 16> out;
  std::memcpy(out.data(), canonical.digest, out.size());
  return out;
}

std::string xxh3_128_hex(std::string_view bytes) { return hex(XXH3_128bits(bytes.data(), bytes.size())); }

}  // namespace cutejit::detail
