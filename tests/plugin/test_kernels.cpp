// The shared library the cutejit-cache tests load with --plugin: example kernels, registered.
#include <cutejit/jit/registry.hpp>

#include "block_reduce.hpp"
#include "gemm_bf16.hpp"
#include "saxpy.hpp"
#include "sum7.hpp"
#include "vector_add.hpp"

CUTEJIT_REGISTER(fixtures::vector_add);
CUTEJIT_REGISTER(fixtures::saxpy);
CUTEJIT_REGISTER(fixtures::block_reduce);
CUTEJIT_REGISTER(fixtures::gemm_bf16);

// A TMA kernel that takes any box and swizzle: the export's tensor-map checks use it.
cutejit::Kernel tma_prefetch{"tma_prefetch", [](cutejit::TmaDescriptor<float> map) { map.prefetch(); }};
CUTEJIT_REGISTER(tma_prefetch);

// A kernel with a Constexpr<bool> and a Value<f16>: parameters a launch from Python must convert
// (and that registering must compile for).
cutejit::Kernel scale_or_negate{"scale_or_negate", [](cutejit::Tensor<cutejit::f32> x, cutejit::Constexpr<bool> negate,
                                                      cutejit::Value<cutejit::f16> scale) {
  using namespace cutejit;
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(x), [&] {
    F32 v = x(i) * cast<float>(scale);
    x(i) = negate ? -v : v;
  });
}};
CUTEJIT_REGISTER(scale_or_negate);

CUTEJIT_REGISTER(fixtures::sum7);  // the Python launch figures' eight tensors

// The Hopper GEMM's tile width for the question {m, n, k}, timed on random inputs of that
// shape: what `cutejit-cache tune` answers from a manifest.
CUTEJIT_REGISTER_TUNING("gemm_bf16", [](const cutejit::Device& gpu, std::span<const int64_t> v, const cutejit::TuneOptions& options) {
  if (v.size() != 3) throw cutejit::Error("error: gemm_bf16's tuning question is its shape {m, n, k}, not " + std::to_string(v.size()) + " values");
  auto a = gpu.upload(fixtures::random_bf16(size_t(v[0] * v[2]), 1)), b = gpu.upload(fixtures::random_bf16(size_t(v[1] * v[2]), 2));
  auto c = gpu.alloc<cutejit::bf16>(size_t(v[0] * v[1]));
  return cutejit::TuneOutcome(fixtures::gemm_bf16_tune(gpu, a, b, c, v[0], v[1], v[2], options));
});
