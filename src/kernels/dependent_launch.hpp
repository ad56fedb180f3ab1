// Whether a kernel of the library is traced to wait for the kernel before it and launched with
// programmatic dependent launch: where the call asks for it and the target has griddepcontrol
// (the tracer's own rule, Feature::sm90). Elsewhere the option is ignored: the launch is as usual.
#pragma once

#include "core/target_features.hpp"

namespace cutejit::kernels::detail {

inline bool dependent_launch(const Target& target, bool asked) {
  return asked && cutejit::detail::target_has(target, cutejit::detail::Feature::sm90);
}

}  // namespace cutejit::kernels::detail
