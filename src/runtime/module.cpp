#include "cutejit/runtime/module.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "cutejit/runtime/device.hpp"
#include "driver/driver.hpp"
#include "driver/emulated_driver.hpp"
#include "runtime/nvshmem_module.hpp"

namespace cutejit::detail {

namespace {
void make_current(const Device& device) {
  thread_local void* current = nullptr;
  if (current != device.context()) {
    const Driver& d = Driver::of(device.context());
    d.check(d.cuCtxSetCurrent(static_cast<CUcontext>(device.context())), "cuCtxSetCurrent");
    current = device.context();
  }
}

std::string dims(const Dim3& d) { return fmt::format("({}, {}, {})", d.x, d.y, d.z); }

/// The block shape a kernel's PTX requires (`.reqntid x, y, z` after its entry), or 0 x 0 x 0.
/// The driver has no attribute for it, and a cached kernel carries its PTX.
Dim3 required_block(const std::string& ptx) {
  size_t at = ptx.find(".reqntid");
  if (at == std::string::npos) return {0, 0, 0};
  unsigned extent[3] = {1, 1, 1};
  std::sscanf(ptx.c_str() + at + 8, " %u , %u , %u", &extent[0], &extent[1], &extent[2]);
  return {extent[0], extent[1], extent[2]};
}
}  // namespace

LoadedFunction load_function(const CompiledKernel& compiled, const Device& device) {
  const Driver& d = Driver::of(device.context());
  make_current(device);
  CUmodule module = nullptr;
  if (device.is_emulated()) {
    // The emulated device runs the PTX the assembler was given: the kernel's and what it linked.
    std::vector<std::string_view> ptx = {compiled.ptx};
    ptx.insert(ptx.end(), compiled.linked_ptx.begin(), compiled.linked_ptx.end());
    d.check(load_emulated_module(&module, ptx), "cuModuleLoadData");
  } else {
    d.check(d.cuModuleLoadData(&module, compiled.cubin.data()), "cuModuleLoadData");
    init_nvshmem_module(module, device.context(), compiled.cubin, compiled.name);
  }
  CUfunction function = nullptr;
  d.check(d.cuModuleGetFunction(&function, module, compiled.name.c_str()), "cuModuleGetFunction");
  LoadedFunction f;
  f.function = function;
  f.required_block = required_block(compiled.ptx);
  d.check(d.cuFuncGetAttribute(&f.static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function), "cuFuncGetAttribute");
  d.check(d.cuFuncGetAttribute(&f.max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function),
          "cuFuncGetAttribute");
  if (device.target().sm >= 90) {
    int x = 0, y = 0, z = 0;
    d.check(d.cuFuncGetAttribute(&x, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, function), "cuFuncGetAttribute");
    d.check(d.cuFuncGetAttribute(&y, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, function), "cuFuncGetAttribute");
    d.check(d.cuFuncGetAttribute(&z, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, function), "cuFuncGetAttribute");
    f.required_cluster = Dim3{uint32_t(x), uint32_t(y), uint32_t(z)};
  }
  return f;
}

void launch_function(const std::string& kernel, const LoadedFunction& f, const Device& device, const Launch& cfg,
                     const ParamBuffer& params) {
  const Driver& d = Driver::of(device.context());
  auto fail = [&](const std::string& what) { throw Error("error: cannot launch kernel '" + kernel + "': " + what, cfg.where); };
  if (cfg.grid.count() == 0 || cfg.block.count() == 0) fail(fmt::format("grid {} and block {} must not be empty", dims(cfg.grid), dims(cfg.block)));
  if (const Dim3 b = f.required_block; b.count() > 0 && (cfg.block.x != b.x || cfg.block.y != b.y || cfg.block.z != b.z))
    fail(fmt::format("the kernel declares blocks of {} (block_shape) but the launch asks for {}", dims(b), dims(cfg.block)));
  // The grid's limits on every target since sm_30; past them the driver says only "invalid
  // argument".
  if (cfg.grid.x > 0x7fffffffu || cfg.grid.y > 65535 || cfg.grid.z > 65535)
    fail(fmt::format("the grid {} is over the limits of 2^31 - 1 blocks in x and 65535 in y and z; put the largest extent in x",
                     dims(cfg.grid)));
  if (cfg.block.count() > uint64_t(f.max_threads_per_block))
    fail(fmt::format("a block of {} threads is more than this kernel allows ({})", cfg.block.count(), f.max_threads_per_block));
  if (cfg.block.x > 1024 || cfg.block.y > 1024 || cfg.block.z > 64)
    fail(fmt::format("the block {} is over the limits of 1024 threads in x and y and 64 in z", dims(cfg.block)));
  uint64_t shared = uint64_t(f.static_shared_bytes) + cfg.shared_bytes;
  if (shared > uint64_t(device.max_shared_per_block()))
    fail(fmt::format("it needs {} bytes of shared memory per block ({} static + {} dynamic) but {} allows at most {}", shared,
                     f.static_shared_bytes, cfg.shared_bytes, device.name(), device.max_shared_per_block()));
  make_current(device);
  if (int(cfg.shared_bytes) > f.dynamic_shared_limit_set && cfg.shared_bytes > 48 * 1024) {
    d.check(d.cuFuncSetAttribute(static_cast<CUfunction>(f.function), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 int(cfg.shared_bytes)),
            "cuFuncSetAttribute");
    f.dynamic_shared_limit_set = int(cfg.shared_bytes);
  }

  // A kernel that declared its cluster shape launches in it; a launch may repeat the shape but
  // not name another.
  const Dim3 required = f.required_cluster;
  if (required.count() > 0) {
    if (cfg.cluster.count() > 1 && (cfg.cluster.x != required.x || cfg.cluster.y != required.y || cfg.cluster.z != required.z))
      fail(fmt::format("the kernel declares clusters of {} (cluster_shape) but the launch asks for {}", dims(required), dims(cfg.cluster)));
    if (cfg.grid.x % required.x || cfg.grid.y % required.y || cfg.grid.z % required.z)
      fail(fmt::format("the grid {} is not a multiple of the kernel's cluster shape {} (cluster_shape)", dims(cfg.grid), dims(required)));
  }
  CUlaunchConfig config{};
  config.gridDimX = cfg.grid.x, config.gridDimY = cfg.grid.y, config.gridDimZ = cfg.grid.z;
  config.blockDimX = cfg.block.x, config.blockDimY = cfg.block.y, config.blockDimZ = cfg.block.z;
  config.sharedMemBytes = cfg.shared_bytes;
  config.hStream = static_cast<CUstream>(cfg.stream);
  CUlaunchAttribute attributes[2]{};
  config.attrs = attributes;
  if (cfg.cluster.count() > 1 && required.count() == 0) {
    if (device.target().sm < 90) fail(fmt::format("thread-block clusters need sm_90 or newer; {} is {}", device.name(), device.target().name()));
    if (cfg.cluster.count() > 8) fail(fmt::format("a cluster of {} blocks is over the portable limit of 8", cfg.cluster.count()));
    if (cfg.grid.x % cfg.cluster.x || cfg.grid.y % cfg.cluster.y || cfg.grid.z % cfg.cluster.z)
      fail(fmt::format("the grid {} is not a multiple of the cluster shape {}", dims(cfg.grid), dims(cfg.cluster)));
    CUlaunchAttribute& cluster = attributes[config.numAttrs++];
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = cfg.cluster.x, cluster.value.clusterDim.y = cfg.cluster.y, cluster.value.clusterDim.z = cfg.cluster.z;
  }
  if (cfg.programmatic_dependent_launch) {
    if (device.target().sm < 90)
      fail(fmt::format("programmatic dependent launch needs sm_90 or newer; {} is {}", device.name(), device.target().name()));
    CUlaunchAttribute& pdl = attributes[config.numAttrs++];
    pdl.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    pdl.value.programmaticStreamSerializationAllowed = 1;
  }
  void* args[ParamBuffer::max_params];
  for (uint32_t i = 0; i < params.count; ++i) args[i] = const_cast<unsigned char*>(params.bytes) + params.offsets[i];
  d.check(d.cuLaunchKernelEx(&config, static_cast<CUfunction>(f.function), args, nullptr), "cuLaunchKernelEx");
}

}  // namespace cutejit::detail
