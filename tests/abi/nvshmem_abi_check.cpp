// The part of NVSHMEM's host ABI cutejit declares (src/runtime/nvshmem_abi.hpp), checked against
// NVSHMEM's own headers: sizes, offsets, version words and constants. A mismatch fails the build.
#include <cstddef>
#include <cstdio>

#include <host/nvshmemx_api.h>

#include "runtime/nvshmem_abi.hpp"

namespace ours = cutejit::detail::nvshmem_abi;

#define SAME_LAYOUT(OURS, THEIRS, FIELD) static_assert(offsetof(OURS, FIELD) == offsetof(THEIRS, FIELD), #OURS "::" #FIELD)

static_assert(sizeof(ours::UniqueId) == sizeof(nvshmemx_uniqueid_t));
SAME_LAYOUT(ours::UniqueId, nvshmemx_uniqueid_t, version);
SAME_LAYOUT(ours::UniqueId, nvshmemx_uniqueid_t, internal);
static_assert(sizeof(ours::UniqueIdArgs) == sizeof(nvshmemx_uniqueid_args_t));
SAME_LAYOUT(ours::UniqueIdArgs, nvshmemx_uniqueid_args_t, id);
SAME_LAYOUT(ours::UniqueIdArgs, nvshmemx_uniqueid_args_t, myrank);
SAME_LAYOUT(ours::UniqueIdArgs, nvshmemx_uniqueid_args_t, nranks);
static_assert(sizeof(ours::InitArgs) == sizeof(nvshmemx_init_args_t));
SAME_LAYOUT(ours::InitArgs, nvshmemx_init_args_t, uid_args);
SAME_LAYOUT(ours::InitArgs, nvshmemx_init_args_t, cuda_device_id);
SAME_LAYOUT(ours::InitArgs, nvshmemx_init_args_t, content);
static_assert(sizeof(ours::InitAttr) == sizeof(nvshmemx_init_attr_t));
SAME_LAYOUT(ours::InitAttr, nvshmemx_init_attr_t, mpi_comm);
SAME_LAYOUT(ours::InitAttr, nvshmemx_init_attr_t, args);

static_assert(ours::init_with_unique_id == NVSHMEMX_INIT_WITH_UNIQUEID);
static_assert(ours::team_world == NVSHMEM_TEAM_WORLD);
static_assert(ours::team_node == NVSHMEMX_TEAM_NODE);
static_assert(ours::status_initialized == NVSHMEM_STATUS_IS_INITIALIZED);
static_assert(NVSHMEM_VENDOR_MAJOR_VERSION == 3, "cutejit declares NVSHMEM 3's ABI");

int main() {
  // The initializers are values, not types: compared at run time.
  const nvshmemx_init_attr_t theirs = NVSHMEMX_INIT_ATTR_INITIALIZER;
  const ours::InitAttr mine = ours::default_init_attr();
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  int bad = 0;
  auto expect = [&](bool ok, const char* what) {
    if (!ok) std::printf("differs from NVSHMEM's headers: %s\n", what), ++bad;
  };
  expect(mine.version == theirs.version, "the attributes' version");
  expect(mine.args.version == theirs.args.version, "the arguments' version");
  expect(mine.args.uid_args.version == theirs.args.uid_args.version, "the unique-id arguments' version");
  expect(mine.args.uid_args.myrank == theirs.args.uid_args.myrank && mine.args.uid_args.nranks == theirs.args.uid_args.nranks,
         "the unique-id arguments' rank and ranks");
  expect(mine.args.cuda_device_id == theirs.args.cuda_device_id, "the default CUDA device");
  expect(ours::unique_id_version == id.version, "the unique id's version");
  std::printf("%s: NVSHMEM %d.%d.%d's host ABI\n", bad ? "FAILED" : "OK", NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION,
              NVSHMEM_VENDOR_PATCH_VERSION);
  return bad ? 1 : 0;
}
