/** \file
 * Where NVSHMEM lives: the folder holding its host library (libnvshmem_host.so.3) and its device
 * bitcode (libnvshmem_device_sm_XX.bc), as the PyPI wheel nvidia-nvshmem-cu13/-cu12 and NVIDIA's
 * packages lay them out. Both halves are taken from one folder, so that the device code a kernel
 * links and the host library that initialises it are of one release.
 */
#pragma once

#include <filesystem>
#include <string>

#include "cutejit/core/target.hpp"

namespace cutejit::detail {

/// The folder with NVSHMEM's libraries, or empty. $CUTEJIT_NVSHMEM_HOME alone when set (its
/// lib/ or itself); otherwise $NVSHMEM_HOME, the folder of a libnvshmem_host.so.3 this process
/// has loaded already, the Python wheels' nvidia/nvshmem in the site folders of the active
/// environments ($VIRTUAL_ENV, $CONDA_PREFIX, those whose bin/ is on PATH) and the usual
/// prefixes, and the system packages' folders.
std::filesystem::path nvshmem_library_dir();

/// The device bitcode a kernel for `target` links: the newest one NVSHMEM ships for an
/// architecture the target runs (sm_100 for the Blackwell targets, sm_90 for sm_90a, sm_89,
/// sm_80 for sm_80 and sm_86), else the one libnvshmem_device.bc of earlier releases. Empty
/// when there is none.
std::filesystem::path nvshmem_device_bitcode(const Target& target);

/// Where NVSHMEM was looked for, as a clause for an error message, with how to point cutejit at it.
std::string nvshmem_searched();

}  // namespace cutejit::detail
