#include "core/target_features.hpp"

#include <utility>

namespace cutejit::detail {

bool target_has(const Target& t, Feature f) {
  // The PTX ISA's target notes: an "a" target has its architecture's own instructions; an "f"
  // target (and every "a" target of its family) has what the family shares.
  const bool specific = t.arch_specific(), family_wide = t.arch_specific() || t.family();
  switch (f) {
    case Feature::baseline: return true;
    case Feature::fp8_convert:
    case Feature::fp8_mma: return t.sm >= 89;
    case Feature::sm90: return t.sm >= 90;
    case Feature::setmaxnreg: return (t.sm == 90 && specific) || (t.sm >= 100 && family_wide);
    case Feature::wgmma: return t.sm == 90 && specific;
    case Feature::tcgen05: return (t.sm == 100 || t.sm == 103 || t.sm == 110) && family_wide;
    case Feature::tcgen05_i8: return (t.sm == 100 || t.sm == 110) && specific;
    case Feature::cluster_launch_control: return t.sm >= 100;
    case Feature::narrow_convert: return t.sm >= 100 && family_wide;
    case Feature::mma_kinds: return (t.sm == 120 || t.sm == 121) && family_wide;
  }
  return false;
}

std::string_view targets_with(Feature f) {
  switch (f) {
    case Feature::baseline: return "every target";
    case Feature::fp8_convert:
    case Feature::fp8_mma: return "sm_89 and newer";
    case Feature::sm90: return "sm_90 and newer";
    case Feature::setmaxnreg: return "sm_90a and the Blackwell a and f targets (sm_100a/f, sm_103a/f, sm_110a/f, sm_120a/f, sm_121a/f)";
    case Feature::wgmma: return "sm_90a only";
    case Feature::tcgen05: return "sm_100a, sm_100f, sm_103a, sm_103f, sm_110a or sm_110f";
    case Feature::tcgen05_i8: return "sm_100a or sm_110a";
    case Feature::cluster_launch_control: return "sm_100 and newer (every Blackwell target)";
    case Feature::narrow_convert: return "a Blackwell a or f target (sm_100a/f, sm_103a/f, sm_110a/f, sm_120a/f, sm_121a/f)";
    case Feature::mma_kinds: return "sm_120a, sm_120f, sm_121a or sm_121f";
  }
  return "";
}

std::optional<Feature> nvvm_op_feature(std::string_view op) {
  // Every NVVM op cutejit emits, and the feature it needs. An op missing here is rejected by
  // the verifier rather than passed to LLVM unchecked.
  static constexpr std::pair<std::string_view, Feature> table[] = {
      {"nvvm.read.ptx.sreg.tid.x", Feature::baseline},
      {"nvvm.read.ptx.sreg.tid.y", Feature::baseline},
      {"nvvm.read.ptx.sreg.tid.z", Feature::baseline},
      {"nvvm.read.ptx.sreg.ctaid.x", Feature::baseline},
      {"nvvm.read.ptx.sreg.ctaid.y", Feature::baseline},
      {"nvvm.read.ptx.sreg.ctaid.z", Feature::baseline},
      {"nvvm.read.ptx.sreg.ntid.x", Feature::baseline},
      {"nvvm.read.ptx.sreg.ntid.y", Feature::baseline},
      {"nvvm.read.ptx.sreg.ntid.z", Feature::baseline},
      {"nvvm.read.ptx.sreg.nctaid.x", Feature::baseline},
      {"nvvm.read.ptx.sreg.nctaid.y", Feature::baseline},
      {"nvvm.read.ptx.sreg.nctaid.z", Feature::baseline},
      {"nvvm.read.ptx.sreg.laneid", Feature::baseline},
      {"nvvm.read.ptx.sreg.cluster.ctarank", Feature::sm90},
      {"nvvm.barrier0", Feature::baseline},
      {"nvvm.barrier", Feature::baseline},
      {"nvvm.bar.warp.sync", Feature::baseline},
      {"nvvm.memory.barrier", Feature::baseline},
      {"nvvm.shfl.sync", Feature::baseline},
      {"nvvm.vote.sync", Feature::baseline},
      {"nvvm.elect.sync", Feature::sm90},
      {"nvvm.cluster.arrive", Feature::sm90},
      {"nvvm.cluster.wait", Feature::sm90},
      {"nvvm.griddepcontrol", Feature::sm90},
      {"nvvm.mapa", Feature::sm90},
      {"nvvm.setmaxregister", Feature::setmaxnreg},
      {"nvvm.mbarrier.init", Feature::baseline},
      {"nvvm.mbarrier.arrive", Feature::baseline},
      {"nvvm.mbarrier.arrive.expect_tx", Feature::sm90},
      {"nvvm.mbarrier.try_wait", Feature::sm90},
      {"nvvm.fence.mbarrier.init", Feature::sm90},
      {"nvvm.fence.proxy", Feature::sm90},
      {"nvvm.barrier.arrive", Feature::baseline},
      {"nvvm.cp.async.bulk.tensor.shared.cluster.global", Feature::sm90},
      {"nvvm.cp.async.bulk.tensor.global.shared.cta", Feature::sm90},
      {"nvvm.cp.async.bulk.tensor.reduce", Feature::sm90},
      {"nvvm.stmatrix", Feature::sm90},
      {"nvvm.ldmatrix", Feature::baseline},
      {"nvvm.cp.async.shared.global", Feature::baseline},
      {"nvvm.cp.async.commit.group", Feature::baseline},
      {"nvvm.cp.async.mbarrier.arrive", Feature::baseline},
      {"nvvm.cp.async.wait.group", Feature::baseline},
      {"nvvm.cp.async.bulk.commit.group", Feature::sm90},
      {"nvvm.cp.async.bulk.wait_group", Feature::sm90},
      // cutejit emits nvvm.prefetch only in its tensormap form (prefetch.tensormap, sm_90).
      {"nvvm.prefetch", Feature::sm90},
      {"nvvm.wgmma.mma_async", Feature::wgmma},
      {"nvvm.wgmma.fence.aligned", Feature::wgmma},
      {"nvvm.wgmma.commit.group.sync.aligned", Feature::wgmma},
      {"nvvm.wgmma.wait.group.sync.aligned", Feature::wgmma},
  };
  for (const auto& [name, feature] : table)
    if (name == op) return feature;
  return std::nullopt;
}

}  // namespace cutejit::detail
