/** \file
 * What a layer above the runtime may start when a Device is made, without the runtime knowing
 * it: the JIT uses it to load the assembler in the background while the driver creates the
 * context, so that the process's first compile does not pay for it.
 */
#pragma once

#include "cutejit/core/target.hpp"

namespace cutejit::detail {

using DeviceCreatedHook = void (*)(const Target& target);
/// Called by every Device constructor, before it creates its context; one hook per process.
void on_device_created(DeviceCreatedHook hook);

}  // namespace cutejit::detail
