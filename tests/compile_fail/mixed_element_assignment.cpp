#include <cutejit/cutejit.hpp>
using namespace cutejit;
Kernel k{"k", [](Tensor<f32> a, Value<int32_t> n) { a(0) = n; }};
