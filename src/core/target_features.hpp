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
  setmaxnreg,  ///< sm_90a and every Blackwell "a" and "f" target
  wgmma,       ///< sm_90a only
  tcgen05,     ///< the sm_100 and sm_110 families: sm_100a/f, sm_103a/f, sm_110a/f
  tcgen05_i8,  ///< tcgen05.mma .kind::i8: sm_100a and sm_110a only
  cluster_launch_control,  ///< clusterlaunchcontrol.try_cancel / query_cancel: sm_100 and newer, every variant
  narrow_convert,        ///< cvt to and from e2m1x2, e2m3x2, e3m2x2, ue8m0x2: every Blackwell "a" and "f" target
  mma_kinds,   ///< mma.sync with a .kind (f8f6f4, the block-scaled kinds) and FP6/FP4 operands: sm_120a/f, sm_121a/f
};

bool target_has(const Target& target, Feature f);
/// The targets that have a feature, for error messages ("sm_90a only").
std::string_view targets_with(Feature f);
/// The feature an NVVM op needs, or nothing when the op is not on the allow-list.
std::optional<Feature> nvvm_op_feature(std::string_view op_name);

}  // namespace cutejit::detail
