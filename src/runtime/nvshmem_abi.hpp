/** \file
 * The part of NVSHMEM 3's host ABI cutejit calls, declared here so that cutejit builds without
 * NVSHMEM's headers (the library is found at run time). The structures are NVSHMEM's versioned
 * ones: each starts with a version word, `(v << 16) + sizeof`, which the library checks.
 * tests/unit/runtime/test_nvshmem_abi.cpp compiles these against NVSHMEM's own headers and
 * checks every size, offset, version word and constant.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace cutejit::detail::nvshmem_abi {

struct UniqueId {  ///< nvshmemx_uniqueid_v1
  int version;
  char internal[124];
};
struct UniqueIdArgs {  ///< nvshmemx_uniqueid_args_v1
  int version;
  UniqueId* id;
  int myrank;
  int nranks;
};
struct InitArgs {  ///< nvshmemx_init_args_v2
  int version;
  UniqueIdArgs uid_args;
  int cuda_device_id;
  char content[92];
};
struct InitAttr {  ///< nvshmemx_init_attr_v2
  int version;
  void* mpi_comm;
  InitArgs args;
};
static_assert(sizeof(UniqueId) == 128 && sizeof(UniqueIdArgs) == 24 && sizeof(InitArgs) == 128 && sizeof(InitAttr) == 144);

inline constexpr int unique_id_version = (1 << 16) + int(sizeof(UniqueId));
inline constexpr int unique_id_args_version = (1 << 16) + int(sizeof(UniqueIdArgs));
inline constexpr int init_args_version = (2 << 16) + int(sizeof(InitArgs));
inline constexpr int init_attr_version = (2 << 16) + int(sizeof(InitAttr));

inline constexpr unsigned init_with_unique_id = 1u << 3;  ///< NVSHMEMX_INIT_WITH_UNIQUEID
inline constexpr int team_world = 0;                      ///< NVSHMEM_TEAM_WORLD
inline constexpr int team_node = 2;                       ///< NVSHMEMX_TEAM_NODE
inline constexpr int status_initialized = 2;              ///< NVSHMEM_STATUS_IS_INITIALIZED

/// The attributes NVSHMEMX_INIT_ATTR_INITIALIZER gives, before the unique-id arguments are set.
inline InitAttr default_init_attr() {
  InitAttr a{};
  a.version = init_attr_version;
  a.mpi_comm = nullptr;
  a.args.version = init_args_version;
  a.args.uid_args = {unique_id_args_version, nullptr, -1, -1};
  a.args.cuda_device_id = -1;
  return a;
}

}  // namespace cutejit::detail::nvshmem_abi
