// A first kernel: c = a + b over float vectors. Each thread adds four consecutive floats with
// 128-bit loads and stores; a scalar loop takes the ragged tail. The kernel is traced and
// compiled on its first launch, for the device it runs on.
#include "example.hpp"

using namespace cutejit;

Kernel vector_add{"vector_add", [](Tensor<f32> a, Tensor<f32> b, Tensor<f32> c) {
  Int n = size(a);
  Int i = (block_idx().x * block_dim().x + thread_idx().x) * 4;
  if_(i + 4 <= n, [&] {
    auto x = a.pointer_at({i}).load_vector<4>();
    auto y = b.pointer_at({i}).load_vector<4>();
    std::array<F32, 4> z;
    for (int k = 0; k < 4; ++k) z[k] = x[k] + y[k];  // a C++ loop: unrolled as the kernel is traced
    c.pointer_at({i}).store_vector<4>(z);
  }).else_([&] {
    for_(i, min(i + 4, n), [&](Int j) { c(j) = a(j) + b(j); });
  });
}};

int main() {
  const int64_t n = (1 << 20) + 3;
  return example::run({"vector_add",
                       [&](const Device& device) {
                         auto ha = example::random_floats(n, 1), hb = example::random_floats(n, 2);
                         auto a = device.upload(ha), b = device.upload(hb);
                         auto c = device.upload(std::vector<float>(n, NAN));
                         vector_add(device, Launch{.grid = ceil_div(n, 4 * 256), .block = 256}, a, b, c);
                         device.synchronize();
                         std::vector<double> want(n);
                         for (int64_t i = 0; i < n; ++i) want[i] = double(ha[i]) + hb[i];
                         return example::relative_error(c.to_host(), want);
                       },
                       [&](const Target& target) {
                         auto v = DeviceTensor<f32>::for_compile({n});
                         return std::vector{vector_add.compile(target, v, v, v)};
                       },
                       1e-7});
}
