// CUTEJIT_RECORD=FILE: every specialization a process loads for launching is appended to FILE,
// a manifest that `cutejit-cache warm` and `export` read.
#pragma once

#include <string>

#include "cutejit/jit/kernel_core.hpp"

namespace cutejit::detail {

/// Appends the specialization to $CUTEJIT_RECORD, if set. A file that cannot be written is
/// reported once on stderr; the launch goes on.
void record_launch(const std::string& kernel, const Key& key, const Target& target);

}  // namespace cutejit::detail
