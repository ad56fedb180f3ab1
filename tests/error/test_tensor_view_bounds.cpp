// A tensor view's extents, strides, element count and reach must fit the 32-bit values a
// launch packs, checked without overflow (issue 35, 2.12): a stride of 2^62 + 2^30 used to
// wrap the int64 bound check and, packed as 32 bits, start row 2 past the buffer.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

TEST_CASE("tensor views beyond what the kernel ABI carries are refused at the caller's line", "[error]") {
  Buffer<float> buffer(0x1000, 100, nullptr);
  int line = __LINE__ + 1;
  CHECK_THROWS_WITH(buffer.view({3, 50}, {(int64_t(1) << 62) + (int64_t(1) << 30), 1}),
                    Contains("test_tensor_view_bounds.cpp:" + std::to_string(line)) &&
                        Contains("mode 0 of the tensor view has extent 3 and stride 4611686019501129728, past the 32-bit indexing limit"));
  line = __LINE__ + 1;
  CHECK_THROWS_WITH(DeviceTensor<float>::for_compile({int64_t(1) << 32, int64_t(1) << 32}),
                    Contains("test_tensor_view_bounds.cpp:" + std::to_string(line)) && Contains("extent 4294967296"));
  // Each mode fits, but four reaches of nearly 2^62 would overflow an int64 sum: still refused.
  const int64_t big = (int64_t(1) << 31) - 1;
  CHECK_THROWS_WITH(DeviceTensor<float>::for_compile({big, big, big, big}, {big, big, big, big}),
                    Contains("reaches past element 2^31 - 1"));
  // A broadcast view reaches little but counts more elements than a kernel's int32 size holds.
  CHECK_THROWS_WITH(DeviceTensor<float>::for_compile({1 << 20, 1 << 12}, {0, 0}), Contains("holds more than 2^31 - 1 elements"));
  CHECK_NOTHROW(DeviceTensor<float>::for_compile({1 << 15, 1 << 15}));
  CHECK_THROWS_WITH(DeviceTensor<float>::for_compile({1 << 16, 1 << 15}), Contains("past the 32-bit indexing limit"));
  // An empty view reaches nothing; a non-empty one must stay inside the buffer.
  CHECK_NOTHROW(buffer.view({0, 10}, {1000000, 1}));
  CHECK_THROWS_WITH(Buffer<float>(0x1000, 0, nullptr).view({1}), Contains("reaches element 0 but the buffer holds 0"));
}
