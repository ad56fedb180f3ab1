/** \file
 * The disk-cache key of one compiled specialization: XXH3-128 over everything that decides the
 * cubin (docs/cache.md lists it), as 32 hex digits.
 */
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "cutejit/core/target.hpp"

namespace cutejit::detail {

/// The toolchain's identity as it enters the key: cutejit, LLVM and assembler versions.
struct ToolchainVersions {
  std::string cutejit;
  std::string llvm;
  std::string assembler;
};
/// Asked on every call: the assembler depends on the environment (CUTEJIT_ASSEMBLER, the CUDA
/// toolkit's location), which a program may change between compiles.
ToolchainVersions toolchain_versions();

/// `traced_module` is the traced module as MLIR bytecode with its locations: they become the
/// PTX's line info, so a kernel moved to another line is a different cubin. `options` is the
/// canonical text of the compile options.
std::string cache_key(std::string_view traced_module, const Target& target, std::string_view options);

/// XXH3-128 of `bytes` (big-endian: the hex digits' order), the entries' checksum.
std::array<unsigned char, 16> xxh3_128(std::string_view bytes);
/// The same, as 32 hex digits.
std::string xxh3_128_hex(std::string_view bytes);

}  // namespace cutejit::detail
