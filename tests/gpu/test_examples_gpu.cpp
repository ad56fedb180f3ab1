// The examples on a real GPU: fresh random inputs, poisoned outputs, float64 host references.
#include <catch2/catch.hpp>

#include "block_reduce.hpp"
#include "saxpy.hpp"
#include "sgemm.hpp"
#include "softmax.hpp"
#include "transpose.hpp"
#include "vector_add.hpp"

using namespace cutejit;

TEST_CASE("examples match their float64 host references on the GPU", "[gpu]") {
  Device gpu;
  for (const examples::Example& e : {examples::vector_add_example(), examples::vector_add_example(1000),
                                     examples::saxpy_example(), examples::block_reduce_example(),
                                     examples::transpose_example(), examples::transpose_example(64, 96),
                                     examples::softmax_example(), examples::sgemm_example()}) {
    double err = e.check(gpu);
    INFO(e.name << ": relative error " << err << ", tolerance " << e.tolerance);
    CHECK(err <= e.tolerance);
  }
}
