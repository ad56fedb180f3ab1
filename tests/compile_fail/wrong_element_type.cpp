#include <cutejit/cutejit.hpp>
using namespace cutejit;
Kernel k{"k", [](Tensor<f32> a) {}};
void f(const Device& gpu, Buffer<int32_t>& a) { k(gpu, Launch{.grid = 1, .block = 32}, a); }
