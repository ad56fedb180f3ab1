// A program built against `cutejit-cache export` output: only cuda.h and libcuda. It runs the
// exported kernels and checks their results, and checks that arguments no exported
// specialization accepts are refused instead of launched.
#include <cuda.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "exported.hpp"

int exported_in_another_file();  // second_unit.cpp

namespace {
int failures = 0;
void check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  failures += !ok;
}
#define CU(call)                                                                 \
  do {                                                                           \
    CUresult r_ = (call);                                                        \
    if (r_ != CUDA_SUCCESS) {                                                    \
      const char* s_ = nullptr;                                                  \
      cuGetErrorString(r_, &s_);                                                 \
      std::printf("FAILED: %s: %s\n", #call, s_ ? s_ : "?");                     \
      return 1;                                                                  \
    }                                                                            \
  } while (0)
}  // namespace

int main() {
  if (cuInit(0) != CUDA_SUCCESS) {
    std::printf("no GPU: nothing to run\n");
    return 77;
  }
  CUdevice device;
  CUcontext context;
  CU(cuDeviceGet(&device, 0));
  CU(cuDevicePrimaryCtxRetain(&context, device));
  CU(cuCtxSetCurrent(context));
  exported::Module module;
  if (module.load() == CUDA_ERROR_NO_BINARY_FOR_GPU) {
    std::printf("export consumer: nothing was exported for this GPU's architecture: not run\n");
    return 77;
  }
  check(exported_in_another_file() == 3, "the header, included in two files, links as one");

  const int n = 1 << 20;
  std::vector<float> a(n), b(n), c(n, NAN);
  for (int i = 0; i < n; ++i) a[i] = float(i % 1000) * 0.5f, b[i] = 1.0f / float(1 + i % 7);
  CUdeviceptr da, db, dc, total;
  CU(cuMemAlloc(&da, n * 4));
  CU(cuMemAlloc(&db, n * 4));
  CU(cuMemAlloc(&dc, n * 4));
  CU(cuMemAlloc(&total, 4));
  CU(cuMemcpyHtoD(da, a.data(), n * 4));
  CU(cuMemcpyHtoD(db, b.data(), n * 4));
  CU(cuMemcpyHtoD(dc, c.data(), n * 4));
  auto tensor = [](CUdeviceptr p, int count) { return exported::Tensor<float, 1>{reinterpret_cast<float*>(p), {count}, {1}}; };

  exported::Launch launch;
  launch.grid[0] = n / (4 * 256);
  launch.block[0] = 256;
  CU(exported::vector_add(module, launch, tensor(da, n), tensor(db, n), tensor(dc, n)));
  CU(cuCtxSynchronize());
  CU(cuMemcpyDtoH(c.data(), dc, n * 4));
  bool same = true;
  for (int i = 0; i < n; ++i) same = same && c[i] == a[i] + b[i];
  check(same, "vector_add matches a + b exactly");

  launch.grid[0] = 132 * 4;
  CU(exported::saxpy(module, launch, 2.0f, tensor(da, n), tensor(db, n)));  // b = 2a + b
  CU(cuCtxSynchronize());
  std::vector<float> y(n);
  CU(cuMemcpyDtoH(y.data(), db, n * 4));
  bool close = true;
  for (int i = 0; i < n; ++i) close = close && std::fabs(y[i] - (2.0f * a[i] + b[i])) <= 1e-6f * std::fabs(2.0f * a[i] + b[i]);
  check(close, "saxpy matches 2a + b");

  float zero = 0;
  CU(cuMemcpyHtoD(total, &zero, 4));
  CU(exported::block_reduce(module, launch, tensor(da, n), tensor(total, 1), 256));
  CU(cuCtxSynchronize());
  float sum = 0;
  CU(cuMemcpyDtoH(&sum, total, 4));
  double ref = 0;
  for (float v : a) ref += v;
  check(std::fabs(sum - ref) <= 1e-5 * ref, "block_reduce matches the float64 sum");

  // Refused: a length the exported specialization did not assume (a multiple of 16), a
  // Constexpr value that was not exported, a misaligned pointer.
  check(exported::vector_add(module, launch, tensor(da, n - 1), tensor(db, n - 1), tensor(dc, n - 1)) == CUDA_ERROR_INVALID_VALUE,
        "vector_add refuses a length that is not a multiple of 16");
  check(exported::block_reduce(module, launch, tensor(da, n), tensor(total, 1), 128) == CUDA_ERROR_INVALID_VALUE,
        "block_reduce refuses a block size that was not exported");
  check(exported::vector_add(module, launch, tensor(da + 4, n), tensor(db, n), tensor(dc, n)) == CUDA_ERROR_INVALID_VALUE,
        "vector_add refuses a pointer that is not 16-byte aligned");

  if (failures) std::printf("export consumer: %d check(s) FAILED\n", failures);
  else std::printf("export consumer: all checks passed\n");
  return failures ? 1 : 0;
}
