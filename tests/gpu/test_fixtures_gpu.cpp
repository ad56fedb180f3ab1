// The small test fixtures on a real GPU: fresh random inputs, poisoned outputs, float64 host references.
#include <catch2/catch.hpp>

#include "block_reduce.hpp"
#include "check_all.hpp"
#include "saxpy.hpp"
#include "sgemm.hpp"
#include "softmax.hpp"
#include "transpose.hpp"
#include "vector_add.hpp"

using namespace cutejit;

TEST_CASE("the small fixtures match their float64 host references on the GPU", "[gpu]") {
  Device gpu;
  // The default sizes are millions of threads' work, which the emulated device (interpreting
  // every thread) leaves out for the smaller, equally ragged ones.
  using test::gpu_only;
  test::check_all(gpu, {
      gpu_only(fixtures::vector_add_check()), fixtures::vector_add_check(1000), gpu_only(fixtures::saxpy_check()),
      fixtures::saxpy_check(100'003), gpu_only(fixtures::block_reduce_check()), fixtures::block_reduce_check(100'003),
      gpu_only(fixtures::transpose_check()), fixtures::transpose_check(64, 96), fixtures::transpose_check(259, 130),
      gpu_only(fixtures::softmax_check()), fixtures::softmax_check(67, 1000), gpu_only(fixtures::sgemm_check()),
      fixtures::sgemm_check(65, 131, 36)
  });
}

namespace {
// Leaves large values in every byte of shared memory a later kernel may be given.
Kernel dirty_shared{"dirty_shared", [](Tensor<f32> sink) {
  Pointer<f32> smem = dynamic_shared<f32>();
  for_(thread_idx().x, 48 * 1024 / 4, block_dim().x, [&](Int i) { smem[i] = 1.0e6f; });
  sync_threads();
  if_(thread_idx().x == 0, [&] { sink(block_idx().x) = F32(smem[block_idx().x]); });
}};
}  // namespace

TEST_CASE("the small fixtures do not depend on what shared memory held before them", "[gpu]") {
  Device gpu;
  auto sink = gpu.alloc<float>(size_t(gpu.multiprocessors()) * 8);
  // On the emulated device, the smaller sizes of the test above.
  const bool small = gpu.is_emulated();
  for (const fixtures::KernelCheck& e : {small ? fixtures::block_reduce_check(100'003) : fixtures::block_reduce_check(),
                                         small ? fixtures::softmax_check(67, 1000) : fixtures::softmax_check(),
                                         small ? fixtures::transpose_check(259, 130) : fixtures::transpose_check()}) {
    dirty_shared(gpu, Launch{.grid = uint32_t(gpu.multiprocessors() * 8), .block = 256, .shared_bytes = 48 * 1024}, sink);
    double err = e.check(gpu);
    INFO(e.name << ": relative error " << err << ", tolerance " << e.tolerance);
    CHECK(err <= e.tolerance);
  }
}
