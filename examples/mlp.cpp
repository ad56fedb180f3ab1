// A transformer's pre-norm MLP block from the kernel library's operators, as Llama and Qwen3
// compute it: y = W_down (silu(W_gate h) * (W_up h)) with h = RMSNorm(x) * g. The gate and up
// weights are one (2 I x H) matrix, so one GEMM computes both halves, and silu_mul reads them as
// two views of its output.
#include <cutejit/kernels/elementwise.hpp>
#include <cutejit/kernels/gemm.hpp>
#include <cutejit/kernels/norm.hpp>

#include "example.hpp"

using namespace cutejit;

int main() {
  const int64_t tokens = 64, hidden = 256, inter = 512;
  return example::run(
      {"mlp",
       [&](const Device& device) {
         auto hx = example::random_values<bf16>(size_t(tokens * hidden), 1), hg = example::random_values<bf16>(size_t(hidden), 2);
         auto hw1 = example::random_values<bf16>(size_t(2 * inter * hidden), 3), hw2 = example::random_values<bf16>(size_t(hidden * inter), 4);
         auto x = device.upload(hx), g = device.upload(hg), w1 = device.upload(hw1), w2 = device.upload(hw2);
         auto h = device.upload(std::vector<bf16>(size_t(tokens * hidden)));
         auto gate_up = device.upload(std::vector<bf16>(size_t(tokens * 2 * inter)));
         auto act = device.upload(std::vector<bf16>(size_t(tokens * inter)));
         auto y = device.upload(std::vector<bf16>(size_t(tokens * hidden), bf16(NAN)));

         kernels::rmsnorm(device, x.view({tokens, hidden}), g.view({hidden}), h.view({tokens, hidden}));
         kernels::gemm(device, h.view({tokens, hidden}), w1.view({2 * inter, hidden}), gate_up.view({tokens, 2 * inter}));
         auto gate = gate_up.view({tokens, inter}, {2 * inter, 1});
         auto up = DeviceTensor<bf16>::make(gate.ptr + uint64_t(inter * 2), std::array{tokens, inter}, std::array<int64_t, 2>{2 * inter, 1});
         kernels::silu_mul(device, gate, up, act.view({tokens, inter}));
         kernels::gemm(device, act.view({tokens, inter}), w2.view({hidden, inter}), y.view({tokens, hidden}));
         device.synchronize();

         // The same in float64 from the same bf16 inputs (the device rounds h, gate_up and act to bf16).
         auto f = [](bf16 v) { return double(float(v)); };
         std::vector<double> want(tokens * hidden), hn(hidden), a(inter);
         for (int64_t t = 0; t < tokens; ++t) {
           double ss = 0;
           for (int64_t i = 0; i < hidden; ++i) ss += f(hx[size_t(t * hidden + i)]) * f(hx[size_t(t * hidden + i)]);
           for (int64_t i = 0; i < hidden; ++i) hn[size_t(i)] = f(hx[size_t(t * hidden + i)]) / std::sqrt(ss / double(hidden) + 1e-6) * f(hg[size_t(i)]);
           for (int64_t j = 0; j < inter; ++j) {
             double gv = 0, uv = 0;
             for (int64_t i = 0; i < hidden; ++i) {
               gv += hn[size_t(i)] * f(hw1[size_t(j * hidden + i)]);
               uv += hn[size_t(i)] * f(hw1[size_t((inter + j) * hidden + i)]);
             }
             a[size_t(j)] = gv / (1 + std::exp(-gv)) * uv;
           }
           for (int64_t i = 0; i < hidden; ++i) {
             double s = 0;
             for (int64_t j = 0; j < inter; ++j) s += a[size_t(j)] * f(hw2[size_t(i * inter + j)]);
             want[size_t(t * hidden + i)] = s;
           }
         }
         return example::relative_error(y.to_host(), want);
       },
       [&](const Target& target) {
         std::vector<CompiledKernel> all{kernels::rmsnorm_compile(target, DType::bf16, tokens, hidden),
                                         kernels::silu_mul_compile(target, DType::bf16, tokens, inter)};
         auto add = [&](int64_t k, int64_t n) {
           for (CompiledKernel& c : kernels::gemm_compile(target, DeviceTensor<bf16>::for_compile({tokens, k}),
                                                          DeviceTensor<bf16>::for_compile({n, k}), DeviceTensor<bf16>::for_compile({tokens, n})))
             all.push_back(std::move(c));
         };
         add(hidden, 2 * inter);
         add(inter, hidden);
         return all;
       },
       3e-2});  // three bf16 roundings on the way
}
