// Tuning questions in a manifest: CUTEJIT_RECORD=FILE appends one line per autotune call,
//   {"tune": "gemm_bf16", "values": [8192, 8192, 8192]}
// beside the specializations' lines, for `cutejit-cache tune` to answer ahead of deployment.
#pragma once

#include <string>

#include "cutejit/jit/autotune.hpp"

namespace cutejit {

std::string tuning_question_line(const TuneKey& key);

namespace detail {
/// Appends the question to $CUTEJIT_RECORD, if set; a file that cannot be written is said once.
void record_tuning_question(const TuneKey& key);
}  // namespace detail

}  // namespace cutejit
