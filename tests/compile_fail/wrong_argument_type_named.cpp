#include <cutejit/cutejit.hpp>
using namespace cutejit;
Kernel k{"k", [](Tensor<f32> a, Tensor<f32> b) {}};
void f(const Device& gpu, Buffer<f32>& a, Buffer<int32_t>& b) { k(gpu, Launch{.grid = 1, .block = 32}, a, b); }
