/** \file
 * Which instructions each target has. LLVM aborts the whole process when it meets an
 * intrinsic the target lacks, and MLIR's verifier does not check every NVVM op, so cutejit
 * keeps its own allow-list: the tracer checks each target-specific op as it is traced (with
 * the user's line), and the verifier walks the finished module so nothing unchecked reaches LLVM.
 */
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cutejit/core/target.hpp"

namespace cutejit::detail {

enum class Feature {
  baseline,    ///< every supported target (sm_80 and newer)
  fp8_convert, ///< sm_89 and newer: cvt between f32/f16 and e4m3x2/e5m2x2
  fp8_mma,     ///< sm_89 and newer: mma.sync with e4m3/e5m2 operands
  sm90,        ///< sm_90 and newer: elect.sync, clusters, mbarrier tx counts, TMA
  setmaxnreg,  ///< sm_90a, sm_100a
  wgmma,       ///< sm_90a only
  tcgen05,     ///< sm_100a only
};

bool target_has(const Target& target, Feature f);
/// The targets that have a feature, for error messages ("sm_90a only").
std::string_view targets_with(Feature f);
/// The feature an NVVM op needs, or nothing when the op is not on the allow-list.
std::optional<Feature> nvvm_op_feature(std::string_view op_name);

}  // namespace cutejit::detail
