/** \file
 * The step of loading a module that NVSHMEM needs: a kernel that calls NVSHMEM carries NVSHMEM's
 * device state (nvshmemi_device_state_d), which the host library fills in for each module.
 */
#pragma once

#include <string>
#include <vector>

namespace cutejit::detail {

/// Sets a just-loaded module up for this process's nvshmem::Session when it calls NVSHMEM
/// (nvshmemx_cumodule_init); leaves any other module alone. `context` is the one it was loaded in,
/// `cubin` its image. Throws cutejit::Error when it calls NVSHMEM and there is no Session, or it
/// is on another GPU.
void init_nvshmem_module(void* module, void* context, const std::vector<char>& cubin, const std::string& kernel);

}  // namespace cutejit::detail
