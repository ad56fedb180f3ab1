// The shared library the cutejit-cache tests load with --plugin: example kernels, registered.
#include <cutejit/jit/registry.hpp>

#include "block_reduce.hpp"
#include "gemm_bf16.hpp"
#include "saxpy.hpp"
#include "vector_add.hpp"

CUTEJIT_REGISTER(examples::vector_add);
CUTEJIT_REGISTER(examples::saxpy);
CUTEJIT_REGISTER(examples::block_reduce);
CUTEJIT_REGISTER(examples::gemm_bf16);

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
