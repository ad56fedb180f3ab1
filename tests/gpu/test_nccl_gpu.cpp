// NCCL beside cutejit: a kernel's output all-reduced by NCCL on the same stream, straight from the
// kernel's buffer, and read by the next kernel, with no copy and no synchronisation in between. NCCL is loaded from
// CUTEJIT_TEST_NCCL (scripts/run_gpu.sh points it at the GPU machine's libnccl.so.2); one rank
// per GPU of this process (ncclCommInitAll).
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <nccl.h>

#include <cstdlib>
#include <vector>

#include "kernel_check.hpp"

using namespace cutejit;

namespace {

Kernel scale_shift{"nccl_scale_shift", [](Tensor<f32> y, Tensor<f32> x, F32 a, F32 b) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(x), [&] { y(i) = a * x(i) + b; });
}};

template <class Fn>
Fn* symbol(void* so, const char* name) {
  auto* fn = reinterpret_cast<Fn*>(dlsym(so, name));
  INFO(name);
  REQUIRE(fn != nullptr);
  return fn;
}

}  // namespace

TEST_CASE("NCCL: a cutejit kernel's output is all-reduced by NCCL on the kernel's stream, and read by the next", "[gpu][gpu_runtime]") {
  const char* path = std::getenv("CUTEJIT_TEST_NCCL");
  INFO("CUTEJIT_TEST_NCCL must name libnccl.so.2");
  REQUIRE(path != nullptr);
  void* so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  INFO(dlerror());
  REQUIRE(so != nullptr);
  auto* comm_init_all = symbol<ncclResult_t(ncclComm_t*, int, const int*)>(so, "ncclCommInitAll");
  auto* all_reduce = symbol<ncclResult_t(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t)>(so, "ncclAllReduce");
  auto* comm_destroy = symbol<ncclResult_t(ncclComm_t)>(so, "ncclCommDestroy");

  Device gpu;
  Stream stream(gpu);
  ncclComm_t comm = nullptr;
  const int device = gpu.ordinal();
  REQUIRE(comm_init_all(&comm, 1, &device) == ncclSuccess);

  const int n = (1 << 20) + 5;
  std::vector<float> hx = fixtures::random_floats(n, 31);
  Buffer<float> x = gpu.upload(hx), y = gpu.alloc<float>(n), w = gpu.alloc<float>(n), z = gpu.alloc<float>(n);
  w.fill(NAN), z.fill(NAN);
  gpu.synchronize();
  const Launch launch{.grid = ceil_div(n, 256), .block = 256, .stream = stream};
  // y = 2x; NCCL sums y over the job's one rank into w; z = w / 2 must be x again, bit for bit
  // (both scalings are exact). Had NCCL not run between the kernels, z would be w's NaN.
  scale_shift(gpu, launch, y, x, 2.0f, 0.0f);
  REQUIRE(all_reduce(reinterpret_cast<const void*>(y.data()), reinterpret_cast<void*>(w.data()), size_t(n), ncclFloat32, ncclSum, comm,
                     static_cast<cudaStream_t>(stream.handle())) == ncclSuccess);
  scale_shift(gpu, launch, z, w, 0.5f, 0.0f);
  stream.synchronize();
  CHECK(z.to_host() == hx);
  CHECK(comm_destroy(comm) == ncclSuccess);
}
