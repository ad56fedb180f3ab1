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
