// The kernel library's attention forward on a packed batch of sequences of different lengths
// (FlashAttention's variable-length layout), causal, with grouped-query attention: 4 query heads
// share 2 key/value heads. kernels::attention_forward picks the FlashAttention-3-style kernel on
// sm_90a and the FlashAttention-2 one on mma.sync elsewhere.
#include <cutejit/kernels/attention.hpp>

#include <algorithm>

#include "example.hpp"

using namespace cutejit;

int main() {
  const std::vector<int32_t> lengths = {77, 128, 19};
  const int64_t heads = 4, kv_heads = 2, head_dim = 64, batch = int64_t(lengths.size());
  std::vector<int32_t> cu_seqlens{0};
  for (int32_t n : lengths) cu_seqlens.push_back(cu_seqlens.back() + n);
  const int64_t tokens = cu_seqlens.back();
  const int32_t longest = *std::max_element(lengths.begin(), lengths.end());
  kernels::AttentionOptions options{.max_seqlen_q = longest, .causal = true};

  return example::run(
      {"attention",
       [&](const Device& device) {
         auto hq = example::random_values<bf16>(size_t(tokens * heads * head_dim), 1);
         auto hk = example::random_values<bf16>(size_t(tokens * kv_heads * head_dim), 2);
         auto hv = example::random_values<bf16>(size_t(tokens * kv_heads * head_dim), 3);
         auto q = device.upload(hq), k = device.upload(hk), v = device.upload(hv);
         auto cu = device.upload(cu_seqlens);
         auto o = device.upload(std::vector<bf16>(size_t(tokens * heads * head_dim), bf16(NAN)));
         auto lse = device.upload(std::vector<float>(size_t(heads * tokens), NAN));
         options.cu_seqlens_q = options.cu_seqlens_k = cu.view({batch + 1});
         kernels::attention_forward(device, q.view({tokens, heads, head_dim}), k.view({tokens, kv_heads, head_dim}),
                                    v.view({tokens, kv_heads, head_dim}), o.view({tokens, heads, head_dim}), lse.view({heads, tokens}),
                                    options);
         device.synchronize();

         // softmax(Q K^T / sqrt(d)) V in float64, query i of a sequence seeing its keys 0 to i.
         auto at = [&](int64_t t, int64_t h, int64_t hs, int64_t d) { return size_t((t * hs + h) * head_dim + d); };
         std::vector<double> want(size_t(tokens * heads * head_dim)), p;
         for (int64_t b = 0; b < batch; ++b)
           for (int64_t h = 0; h < heads; ++h)
             for (int64_t i = cu_seqlens[size_t(b)]; i < cu_seqlens[size_t(b) + 1]; ++i) {
               const int64_t hk_ = h / (heads / kv_heads), first = cu_seqlens[size_t(b)];
               p.assign(size_t(i - first + 1), 0);
               double m = -INFINITY, sum = 0;
               for (int64_t j = first; j <= i; ++j) {
                 double s = 0;
                 for (int64_t d = 0; d < head_dim; ++d) s += double(float(hq[at(i, h, heads, d)])) * double(float(hk[at(j, hk_, kv_heads, d)]));
                 p[size_t(j - first)] = s / std::sqrt(double(head_dim));
                 m = std::max(m, p[size_t(j - first)]);
               }
               for (double& x : p) sum += (x = std::exp(x - m));
               for (int64_t d = 0; d < head_dim; ++d) {
                 double acc = 0;
                 for (int64_t j = first; j <= i; ++j) acc += p[size_t(j - first)] * double(float(hv[at(j, hk_, kv_heads, d)]));
                 want[at(i, h, heads, d)] = acc / sum;
               }
             }
         return example::relative_error(o.to_host(), want);
       },
       [&](const Target& target) {
         auto cu = DeviceTensor<int32_t>::for_compile({batch + 1});
         kernels::AttentionOptions described = options;
         described.cu_seqlens_q = described.cu_seqlens_k = cu;
         return std::vector{kernels::attention_forward_compile(
             target, DeviceTensor<bf16>::for_compile({tokens, heads, head_dim}), DeviceTensor<bf16>::for_compile({tokens, kv_heads, head_dim}),
             DeviceTensor<bf16>::for_compile({tokens, kv_heads, head_dim}), DeviceTensor<bf16>::for_compile({tokens, heads, head_dim}),
             DeviceTensor<f32>::for_compile({heads, tokens}), described)};
       },
       1e-2});  // a bf16 output
}
