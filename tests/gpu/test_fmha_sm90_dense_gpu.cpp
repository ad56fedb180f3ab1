// The Hopper attention forward on dense (batch, seqlen, heads, head_dim) tensors of any strides
// (tests/fixtures/fmha_sm90.hpp, fmha90::Dense), against the float64 reference of the same problem
// packed: Q, K and V scattered into BSHD, BHSD, a fused QKV and padded rows, whose gaps hold
// NaNs (a read of them would show in O), O and the log-sum-exp gathered back from poisoned
// memory, and every element of the output allocations outside the tensors checked untouched.
#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "fmha_masks.hpp"
#include "fmha_sm90.hpp"

using namespace cutejit;

namespace {

/// Where a (batch, seqlen, heads, head_dim) tensor lies in its allocation, in elements.
struct Placement {
  int64_t offset = 0;
  std::array<int64_t, 4> stride{};
  int64_t at(int64_t b, int64_t s, int64_t h, int64_t d) const {
    return offset + b * stride[0] + s * stride[1] + h * stride[2] + d * stride[3];
  }
  /// One past the last element, rounded up to 16 bytes of 2-byte elements.
  int64_t end(std::array<int64_t, 4> shape) const {
    int64_t last = offset;
    for (int m = 0; m < 4; ++m) last += (shape[m] - 1) * stride[m];
    return (last + 1 + 7) / 8 * 8;
  }
};

/// Q, K and V in one allocation, O in another, the log-sum-exp (batch, heads, seqlen_q) in a third.
struct Placements {
  Placement q, k, v, o;
  std::array<int64_t, 3> lse_stride{};
  int64_t inputs = 0, outputs = 0, lse_elements = 0;
};

struct Shape {
  int64_t batch, seqlen_q, seqlen_k, heads, kv_heads, head_dim;
};

std::array<int64_t, 4> row_major(std::array<int64_t, 4> extent) {
  return {extent[1] * extent[2] * extent[3], extent[2] * extent[3], extent[3], 1};
}

/// Lays each of q, k, v after the one before, given the strides of a tensor of each extent.
Placements separate(const Shape& s, const std::function<std::array<int64_t, 4>(std::array<int64_t, 4>)>& strides, int64_t lse_pad) {
  Placements l;
  std::array<int64_t, 4> qs{s.batch, s.seqlen_q, s.heads, s.head_dim}, ks{s.batch, s.seqlen_k, s.kv_heads, s.head_dim};
  l.q = {0, strides(qs)};
  l.k = {l.q.end(qs), strides(ks)};
  l.v = {l.k.end(ks), strides(ks)};
  l.inputs = l.v.end(ks);
  l.o = {0, strides(qs)};
  l.outputs = l.o.end(qs);
  l.lse_stride = {s.heads * (s.seqlen_q + lse_pad), s.seqlen_q + lse_pad, 1};
  l.lse_elements = s.batch * l.lse_stride[0];
  return l;
}

Placements bshd(const Shape& s) { return separate(s, row_major, 0); }
Placements bhsd(const Shape& s) {
  return separate(s, [](std::array<int64_t, 4> e) { return std::array<int64_t, 4>{e[2] * e[1] * e[3], e[3], e[1] * e[3], 1}; }, 0);
}
/// Every mode padded: 8 elements after each head, 16 after each token, 32 after each sequence.
Placements padded(const Shape& s) {
  return separate(
      s,
      [](std::array<int64_t, 4> e) {
        const int64_t head = e[3] + 8, token = e[2] * head + 16, sequence = e[1] * token + 32;
        return std::array<int64_t, 4>{sequence, token, head, 1};
      },
      5);
}
/// One (batch, seqlen, heads + 2 kv_heads, head_dim) tensor holding Q, K and V side by side in
/// each token (seqlen_q = seqlen_k); O BSHD.
Placements fused_qkv(const Shape& s) {
  Placements l = bshd(s);
  const int64_t width = (s.heads + 2 * s.kv_heads) * s.head_dim;
  const std::array<int64_t, 4> stride{s.seqlen_q * width, width, s.head_dim, 1};
  l.q = {0, stride};
  l.k = {s.heads * s.head_dim, stride};
  l.v = {(s.heads + s.kv_heads) * s.head_dim, stride};
  l.inputs = s.batch * s.seqlen_q * width;
  return l;
}

template <Element T>
bool is_nan(T x) {
  return std::isnan(float(x));
}

/// Runs the dense forward on `s` laid out as `layout` with mask `m`; the error against the
/// float64 reference (infinite if an element outside the output tensors was written).
template <Element T>
double dense_error(const Device& gpu, const Shape& s, const Placements& l, const test::MaskCase& m, unsigned seed) {
  auto in = fixtures::fmha_inputs<T>(std::vector<int32_t>(size_t(s.batch), int32_t(s.seqlen_q)),
                                     std::vector<int32_t>(size_t(s.batch), int32_t(s.seqlen_k)), s.heads, s.kv_heads, s.head_dim, m.causal,
                                     seed);
  fixtures::FmhaProblem p = fixtures::FmhaProblem::dense(s.batch, s.heads, s.kv_heads, s.head_dim, s.seqlen_q, s.seqlen_k);
  m.apply(p);
  m.apply(in.problem);

  // The packed inputs (token, head, column) scattered; the gaps NaN.
  std::vector<T> inputs(size_t(l.inputs), T(NAN));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t d = 0; d < s.head_dim; ++d) {
      for (int64_t i = 0; i < s.seqlen_q; ++i)
        for (int64_t h = 0; h < s.heads; ++h) inputs[size_t(l.q.at(b, i, h, d))] = in.q[size_t(((b * s.seqlen_q + i) * s.heads + h) * s.head_dim + d)];
      for (int64_t j = 0; j < s.seqlen_k; ++j)
        for (int64_t h = 0; h < s.kv_heads; ++h) {
          const size_t packed = size_t(((b * s.seqlen_k + j) * s.kv_heads + h) * s.head_dim + d);
          inputs[size_t(l.k.at(b, j, h, d))] = in.k[packed];
          inputs[size_t(l.v.at(b, j, h, d))] = in.v[packed];
        }
    }
  auto input = gpu.upload(inputs);
  auto o = gpu.upload(std::vector<T>(size_t(l.outputs), T(NAN)));
  auto lse = gpu.upload(std::vector<float>(size_t(l.lse_elements), NAN));
  auto view = [&](const Buffer<T>& buffer, const Placement& at, int64_t seqlen, int64_t heads) {
    std::array<int64_t, 4> shape{s.batch, seqlen, heads, s.head_dim};
    return DeviceTensor<T>::make(buffer.data() + uint64_t(at.offset) * sizeof(T), shape, at.stride);
  };
  auto lse_view = DeviceTensor<f32>::make(lse.data(), std::array<int64_t, 3>{s.batch, s.heads, s.seqlen_q}, l.lse_stride);
  fixtures::fmha_forward_sm90_prepare(gpu, p, view(input, l.q, s.seqlen_q, s.heads), view(input, l.k, s.seqlen_k, s.kv_heads),
                                      view(input, l.v, s.seqlen_k, s.kv_heads), view(o, l.o, s.seqlen_q, s.heads), lse_view)();
  gpu.synchronize();

  // O and the log-sum-exp gathered into the reference's packed order; the rest must be NaN still.
  const std::vector<T> o_host = o.to_host();
  const std::vector<float> lse_host = lse.to_host();
  std::vector<bool> o_seen(o_host.size()), lse_seen(lse_host.size());
  std::vector<float> out(size_t(p.total_q * s.heads * s.head_dim)), lse_out(size_t(s.heads * p.total_q));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t i = 0; i < s.seqlen_q; ++i)
      for (int64_t h = 0; h < s.heads; ++h) {
        for (int64_t d = 0; d < s.head_dim; ++d) {
          const size_t at = size_t(l.o.at(b, i, h, d));
          out[size_t(((b * s.seqlen_q + i) * s.heads + h) * s.head_dim + d)] = float(o_host[at]);
          o_seen[at] = true;
        }
        const size_t at = size_t(b * l.lse_stride[0] + h * l.lse_stride[1] + i * l.lse_stride[2]);
        lse_out[size_t(h * p.total_q + b * s.seqlen_q + i)] = lse_host[at];
        lse_seen[at] = true;
      }
  for (size_t i = 0; i < o_host.size(); ++i)
    if (!o_seen[i] && !is_nan(o_host[i])) return INFINITY;
  for (size_t i = 0; i < lse_host.size(); ++i)
    if (!lse_seen[i] && !std::isnan(lse_host[i])) return INFINITY;
  std::vector<double> o_ref, lse_ref;
  fixtures::fmha_reference(in, o_ref, lse_ref);
  return fixtures::fmha_error(out, o_ref, lse_out, lse_ref);
}

struct LayoutCase {
  const char* name;
  Placements (*make)(const Shape&);
};

/// Each layout with four masks (none, causal both ways, a window). The emulated device, which
/// interprets every thread, runs two (none, causal) on two query heads sharing a key-value head:
/// the strides are what these tests are about, and the packed tests sweep the masks.
template <Element T>
void check_layouts(const Device& gpu, Shape s, std::initializer_list<LayoutCase> layouts, const char* type, unsigned seed) {
  if (gpu.is_emulated()) s.heads = 2, s.kv_heads = 1;
  for (const LayoutCase& layout : layouts)
    for (const test::MaskCase& m : std::span(test::fmha_masks).first(gpu.is_emulated() ? 2 : 4)) {
      double error = dense_error<T>(gpu, s, layout.make(s), m, seed += 3);
      INFO(type << " " << layout.name << ", hd " << s.head_dim << ", " << m.name << ", batch " << s.batch << ", seqlen " << s.seqlen_q
                << " / " << s.seqlen_k << ", " << s.heads << " query / " << s.kv_heads << " key-value heads");
      CHECK(error < 1e-2);
    }
}

}  // namespace

TEST_CASE("the Hopper attention forward on BSHD and BHSD tensors matches float64 attention, at every head dim and mask", "[gpu]") {
  Device gpu;
  // Ragged: 200 queries (a tile and a residue), 300 keys (two blocks and a residue), S_q != S_k.
  for (int64_t head_dim : {64, 128, 256})
    check_layouts<bf16>(gpu, {2, 200, 300, 4, 2, head_dim}, {{"BSHD", bshd}, {"BHSD", bhsd}}, "bf16", 700 + unsigned(head_dim));
  check_layouts<f16>(gpu, {3, 130, 130, 2, 2, 128}, {{"BHSD", bhsd}}, "f16", 750);
}

TEST_CASE("the Hopper attention forward reads Q, K and V out of a fused QKV tensor and padded rows, and writes nothing else", "[gpu]") {
  Device gpu;
  check_layouts<bf16>(gpu, {2, 257, 257, 4, 1, 128}, {{"fused QKV", fused_qkv}}, "bf16", 800);
  check_layouts<bf16>(gpu, {2, 200, 300, 4, 2, 128}, {{"padded", padded}}, "bf16", 820);
  check_layouts<bf16>(gpu, {1, 64, 500, 2, 1, 64}, {{"padded", padded}}, "bf16", 840);
}
