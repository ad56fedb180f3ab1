/** \file
 * One cache entry as bytes: a fixed header (magic, format, section sizes, XXH3-128 checksum),
 * then the JSON metadata, the PTX and the cubin. One file holds all of it, so one atomic rename
 * publishes a whole entry. docs/cache.md draws the layout.
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cutejit/core/compiled.hpp"

namespace cutejit::detail {

inline constexpr uint32_t entry_format_version = 1;

/// The file name of the entry stored under `key`.
std::string entry_file_name(std::string_view key);

/// The bytes of the entry for `kernel` stored under `key`, created at `created_unix`.
std::string encode_entry(std::string_view key, const CompiledKernel& kernel, int64_t created_unix);

struct DecodedEntry {
  std::string problem;       ///< empty when the entry is sound; else why it is not
  std::string metadata_json;
  CompiledKernel kernel;     ///< name, target, ptx, cubin, assembler, cache_key; from_cache set
  int64_t created = 0;
};

/// Checks the header, sizes, checksum, metadata, that the entry is stored under `key` and that
/// the cubin is an ELF file; with `same_toolchain`, also that this cutejit, LLVM and assembler
/// wrote it (an entry that passes with it is safe to load).
DecodedEntry decode_entry(std::string_view bytes, std::string_view key, bool same_toolchain);

}  // namespace cutejit::detail
