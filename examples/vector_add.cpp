// Vector add with 128-bit loads: each thread adds four consecutive floats.
// With a GPU it runs and checks the result; with none it cross-compiles for three targets.
#include <cutejit/cutejit.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace cutejit;

Kernel vector_add{"vector_add", [](Tensor<f32> a, Tensor<f32> b, Tensor<f32> c) {
  Int n = size(a);
  Int i = (block_idx().x * block_dim().x + thread_idx().x) * 4;
  if_(i + 4 <= n, [&] {
    auto x = a.pointer_at({i}).load_vector<4>();
    auto y = b.pointer_at({i}).load_vector<4>();
    std::array<F32, 4> z;
    for (int k = 0; k < 4; ++k) z[k] = x[k] + y[k];  // a C++ loop: unrolled at trace time
    c.pointer_at({i}).store_vector<4>(z);
  }).else_([&] {
    for_(i, n, [&](Int j) { c(j) = a(j) + b(j); });  // the ragged tail, one element at a time
  });
}};

int main() {
  const int n = 1 << 24;
  if (Device::count() == 0) {
    std::printf("No GPU here: cross-compiling vector_add (nothing runs).\n");
    for (const char* name : {"sm_90a", "sm_100a", "sm_120a"}) {
      DeviceTensor<f32> t = DeviceTensor<f32>::make(0, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1});
      CompiledKernel k = vector_add.compile(Target::parse(name), t, t, t);
      std::printf("  %-8s cubin %6zu bytes, PTX %6zu bytes, %s, compiled in %.1f ms (trace %.1f, lower %.1f, codegen %.1f, assemble %.1f)\n",
                  name, k.cubin.size(), k.ptx.size(), k.assembler.c_str(), k.times.total_ms(), k.times.trace_ms,
                  k.times.lower_ms, k.times.codegen_ms, k.times.assemble_ms);
    }
    return 0;
  }

  Device gpu;
  std::printf("Running on %s (%s)\n", gpu.name().c_str(), gpu.target().name().c_str());
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> ha(n), hb(n);
  for (int i = 0; i < n; ++i) ha[i] = dist(rng), hb[i] = dist(rng);
  auto a = gpu.upload(ha), b = gpu.upload(hb);
  auto c = gpu.upload(std::vector<float>(n, NAN));  // poisoned: every element must be written
  vector_add(gpu, Launch{.grid = ceil_div(n, 4 * 256), .block = 256}, a, b, c);
  gpu.synchronize();
  std::vector<float> hc = c.to_host();
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += !(hc[i] == ha[i] + hb[i]);
  std::printf("%d elements, %d wrong: %s\n", n, wrong, wrong ? "FAILED" : "OK");
  return wrong ? 1 : 0;
}
