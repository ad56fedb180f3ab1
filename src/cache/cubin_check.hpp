/** \file
 * What a cubin says it is, read from its ELF: the architecture it was assembled for and the
 * kernels it defines. An entry's checksum proves only that its bytes are as written; these
 * checks prove the cubin is the kernel and target the entry's metadata names, so that a cubin
 * for another GPU or another kernel, sealed under a correct checksum, is never loaded.
 */
#pragma once

#include <string>
#include <string_view>

#include "cutejit/core/target.hpp"

namespace cutejit::detail {

/// Why `cubin` is not the kernel `kernel` assembled for `target`; empty when it is. Checks: a
/// 64-bit little-endian ELF for CUDA whose section headers lie inside it; the SM number its
/// flags record; the variant (sm_90 / sm_90a / sm_100f) where the toolkit's note
/// `.note.nv.tkinfo` records the `-arch` it was assembled with (CUDA 12.8 and later); and a
/// defined global function symbol named exactly `kernel`.
std::string cubin_problem(std::string_view cubin, const Target& target, std::string_view kernel);

}  // namespace cutejit::detail
