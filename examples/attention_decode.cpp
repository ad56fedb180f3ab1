// One decode step of attention against a paged KV cache (vLLM's layout): each sequence's newest
// query attends to all its cached keys, which lie in pages of 16 tokens scattered through one
// pool, found through the sequence's row of the block table. Long sequences are split across
// CTAs and combined (FlashDecoding); kernels::attention_decode chooses the splits.
#include <cutejit/kernels/attention.hpp>

#include <algorithm>
#include <numeric>

#include "example.hpp"

using namespace cutejit;

int main() {
  const std::vector<int32_t> cached = {300, 17, 129};  // keys cached per sequence
  const int64_t batch = int64_t(cached.size()), heads = 8, kv_heads = 2, head_dim = 128, page = 16;
  const int64_t per_sequence = (300 + page - 1) / page, pages = batch * per_sequence;
  // Sequence b owns pages b, b + batch, b + 2 batch, ...: interleaved, as a pool hands them out.
  std::vector<int32_t> table(size_t(batch * per_sequence));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < per_sequence; ++i) table[size_t(b * per_sequence + i)] = int32_t(i * batch + b);

  return example::run(
      {"attention_decode",
       [&](const Device& device) {
         auto hq = example::random_values<bf16>(size_t(batch * heads * head_dim), 1);
         auto hk = example::random_values<bf16>(size_t(pages * page * kv_heads * head_dim), 2);
         auto hv = example::random_values<bf16>(size_t(pages * page * kv_heads * head_dim), 3);
         auto q = device.upload(hq), k = device.upload(hk), v = device.upload(hv);
         auto block_table = device.upload(table), seqlens = device.upload(cached);
         auto o = device.upload(std::vector<bf16>(size_t(batch * heads * head_dim), bf16(NAN)));
         auto lse = device.upload(std::vector<float>(size_t(heads * batch), NAN));
         kernels::attention_decode(device, q.view({batch, heads, head_dim}), k.view({pages, page, kv_heads, head_dim}),
                                   v.view({pages, page, kv_heads, head_dim}), block_table.view({batch, per_sequence}),
                                   seqlens.view({batch}), o.view({batch, heads, head_dim}), lse.view({heads, batch}));
         device.synchronize();

         // Key j of sequence b lies at row j % page of page table[b][j / page].
         auto cache_at = [&](int64_t b, int64_t j, int64_t h, int64_t d) {
           const int64_t p = table[size_t(b * per_sequence + j / page)];
           return size_t(((p * page + j % page) * kv_heads + h) * head_dim + d);
         };
         std::vector<double> want(size_t(batch * heads * head_dim)), s;
         for (int64_t b = 0; b < batch; ++b)
           for (int64_t h = 0; h < heads; ++h) {
             const int64_t hk_ = h / (heads / kv_heads), n = cached[size_t(b)];
             s.assign(size_t(n), 0);
             for (int64_t j = 0; j < n; ++j) {
               for (int64_t d = 0; d < head_dim; ++d)
                 s[size_t(j)] += double(float(hq[size_t((b * heads + h) * head_dim + d)])) * double(float(hk[cache_at(b, j, hk_, d)]));
               s[size_t(j)] /= std::sqrt(double(head_dim));
             }
             const double m = *std::max_element(s.begin(), s.end());
             double sum = 0;
             for (double& x : s) sum += (x = std::exp(x - m));
             for (int64_t d = 0; d < head_dim; ++d) {
               double acc = 0;
               for (int64_t j = 0; j < n; ++j) acc += s[size_t(j)] * double(float(hv[cache_at(b, j, hk_, d)]));
               want[size_t((b * heads + h) * head_dim + d)] = acc / sum;
             }
           }
         return example::relative_error(o.to_host(), want);
       },
       [&](const Target& target) {
         auto kv = DeviceTensor<bf16>::for_compile({pages, page, kv_heads, head_dim});
         auto qo = DeviceTensor<bf16>::for_compile({batch, heads, head_dim});
         return kernels::attention_decode_compile(target, qo, kv, kv, DeviceTensor<int32_t>::for_compile({batch, per_sequence}),
                                                  DeviceTensor<int32_t>::for_compile({batch}), qo, DeviceTensor<f32>::for_compile({heads, batch}));
       },
       1e-2,
       {"sm_80", "sm_90a", "sm_100a", "sm_120a"}});
}
