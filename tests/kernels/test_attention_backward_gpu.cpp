// kernels::attention_backward against float64 gradients of the same inputs (the backwards'
// shared reference, tests/fixtures/fmha_backward_reference.hpp), gradients poisoned and run
// twice for the same bits: packed sequences of different lengths, GQA, causal, head dims 64 and
// 128, bf16 and f16; sliding windows on sm_90a, refused with what would be valid elsewhere; a
// workspace of the caller's; mistakes are errors at this file's lines with nothing written; the
// compile form builds each architecture's three kernels with no GPU. On sm_90a the cases take
// the wgmma backward, elsewhere the mma.sync one ([sm100] and [sm120] run them on those
// emulated devices).
#include <catch2/catch.hpp>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/attention.hpp>

#include "fmha_backward_reference.hpp"
#include "kernel_test_values.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using cutejit::kernels::FmhaProblem;

namespace {

bool is_hopper(const Device& gpu) { return gpu.target().sm == 90 && gpu.target().arch_specific(); }

/// The operator on buffers holding the problem's packed tensors, as backward_check_with calls it.
template <class T>
auto operator_on(const Device& gpu, const FmhaProblem& p, const std::optional<DeviceTensor<f32>>& workspace = std::nullopt) {
  return [&gpu, p, workspace](const Buffer<T>& q, const Buffer<T>& k, const Buffer<T>& v, const Buffer<T>& o, const Buffer<T>& d_o,
                              const Buffer<f32>& lse, const Buffer<int32_t>& cu_q, const Buffer<int32_t>& cu_k, const Buffer<T>& d_q,
                              const Buffer<T>& d_k, const Buffer<T>& d_v) {
    auto qs = [&](const Buffer<T>& b) { return b.view({p.total_q, p.heads, p.head_dim}); };
    auto ks = [&](const Buffer<T>& b) { return b.view({p.total_k, p.kv_heads, p.head_dim}); };
    return kernels::attention_backward_prepare(gpu, qs(q), ks(k), ks(v), qs(o), qs(d_o), lse.view({p.heads, p.total_q}), qs(d_q), ks(d_k),
                                               ks(d_v),
                                               {.cu_seqlens_q = cu_q.view({p.batch + 1}), .cu_seqlens_k = cu_k.view({p.batch + 1}),
                                                .max_seqlen_q = p.max_seqlen_q, .max_seqlen_k = p.max_seqlen_k, .causal = p.causal,
                                                .window_left = p.window_left, .window_right = p.window_right, .top_left = p.top_left,
                                                .workspace = workspace});
  };
}

/// bf16's rounding of P, dS and O bounds the gradients' errors (tests/gpu/test_fmha_backward_gpu.cpp
/// measured 0.006-0.027 on the H200); f16's are about 8 times smaller.
template <class T>
void check(const Device& gpu, const fixtures::BackwardInputs<T>& in, double bound) {
  const FmhaProblem& p = in.forward.problem;
  fixtures::BackwardErrors e = fixtures::backward_check_with(gpu, in, operator_on<T>(gpu, p));
  INFO(gpu.target().name() << " hd " << p.head_dim << (p.causal ? " causal" : "") << ", window " << p.window_left << ", "
                           << p.window_right << ": dQ " << e.dq << ", dK " << e.dk << ", dV " << e.dv);
  CHECK(e.worst() < bound);
  CHECK(e.deterministic);
}

}  // namespace

TEST_CASE("kernels::attention_backward matches float64 gradients on packed sequences with GQA, bit for bit on a rerun",
          "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  // Ragged lengths: partial query and key blocks, keys longer than queries, a one-token sequence.
  check(gpu, fixtures::backward_inputs(fixtures::fmha_inputs<bf16>({77, 1, 40}, {77, 33, 100}, 4, 2, 128, true, 11), 12), 4e-2);
  check(gpu, fixtures::backward_inputs(fixtures::fmha_inputs<bf16>({130, 17}, {130, 17}, 2, 1, 64, false, 21), 22), 4e-2);
  check(gpu, fixtures::backward_inputs(fixtures::fmha_inputs<f16>({65, 30}, {65, 30}, 2, 2, 64, true, 31), 32), 1e-2);
}

TEST_CASE("kernels::attention_backward: sliding windows and top-left masks on sm_90a, and a clear refusal elsewhere",
          "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  auto forward = fixtures::fmha_inputs<bf16>({150, 70}, {150, 70}, 2, 1, 64, false, 41);
  forward.problem.window_left = 40;
  forward.problem.window_right = 8;
  auto in = fixtures::backward_inputs(std::move(forward), 42);
  if (is_hopper(gpu)) {
    check(gpu, in, 4e-2);
    auto causal = fixtures::fmha_inputs<bf16>({60, 90}, {100, 90}, 2, 1, 64, true, 43);
    causal.problem.top_left = true;
    check(gpu, fixtures::backward_inputs(std::move(causal), 44), 4e-2);
  } else {
    CHECK_THAT(test::error_of([&] { (void)fixtures::backward_check_with(gpu, in, operator_on<bf16>(gpu, in.forward.problem)); }),
               Contains("attention_backward_prepare") && Contains("window"));
  }
}

TEST_CASE("kernels::attention_backward with the caller's workspace gives the same bits", "[gpu][kernels]") {
  Device gpu;
  auto in = fixtures::backward_inputs(fixtures::fmha_inputs<bf16>({50, 80}, {50, 80}, 2, 1, 64, true, 51), 52);
  const FmhaProblem& p = in.forward.problem;
  auto workspace = gpu.upload(std::vector<float>(size_t(p.heads * p.total_q + 5), NAN));
  fixtures::BackwardErrors e = fixtures::backward_check_with(gpu, in, operator_on<bf16>(gpu, p, workspace.view({p.heads * p.total_q + 5})));
  CHECK(e.worst() < 4e-2);
  CHECK(e.deterministic);
}

TEST_CASE("kernels::attention_backward refuses what it cannot take, at the caller's line, writing nothing", "[gpu][kernels]") {
  Device gpu;
  const int64_t tokens = 64, H = 4, Hk = 2, D = 64;
  auto q = gpu.upload(std::vector<bf16>(size_t(tokens * H * D), bf16(0.5f))), kv = gpu.upload(std::vector<bf16>(size_t(tokens * Hk * D), bf16(0.5f)));
  auto grads = gpu.upload(std::vector<bf16>(size_t(tokens * H * D), bf16(0.0f)));
  auto lse = gpu.upload(std::vector<float>(size_t(H * tokens), 0.0f));
  auto cu = gpu.upload(std::vector<int32_t>{0, int32_t(tokens)});
  auto Q = q.view({tokens, H, D}), K = kv.view({tokens, Hk, D}), dQ = grads.view({tokens, H, D});
  auto dK = DeviceTensor<bf16>::make(grads.view({tokens * H * D}).ptr, std::array<int64_t, 3>{tokens, Hk, D}, std::array<int64_t, 3>{Hk * D, D, 1});
  const kernels::AttentionBackwardOptions packed{.cu_seqlens_q = cu.view({2}), .cu_seqlens_k = cu.view({2})};
  const std::string here = "test_attention_backward_gpu.cpp:";
  CHECK_THAT(test::error_of([&] { kernels::attention_backward(gpu, Q, K, K, Q, Q, lse.view({H, tokens}), dQ, dQ, dK, packed); }),
             Contains(here) && Contains("attention_backward: d_k is (64, 4, 64); it must have k's shape (64, 2, 64)"));
  CHECK_THAT(test::error_of([&] { kernels::attention_backward(gpu, Q, K, K, Q, Q, lse.view({H, tokens}), dQ, dK, dK); }),
             Contains(here) && Contains("needs cu_seqlens_q and cu_seqlens_k"));
  CHECK_THAT(test::error_of([&] { kernels::attention_backward(gpu, Q, K, K, Q, Q, lse.view({tokens, H}), dQ, dK, dK, packed); }),
             Contains(here) && Contains("lse is (64, 4); it must be the forward's (heads, total_q) = (4, 64)"));
  auto small = packed;
  small.workspace = lse.view({100});
  CHECK_THAT(test::error_of([&] { kernels::attention_backward(gpu, Q, K, K, Q, Q, lse.view({H, tokens}), dQ, dK, dK, small); }),
             Contains(here) && Contains("workspace is (100); it takes at least heads * total_q = 256 contiguous f32"));
  auto q96 = gpu.upload(std::vector<bf16>(size_t(tokens * H * 96))), kv96 = gpu.upload(std::vector<bf16>(size_t(tokens * Hk * 96)));
  CHECK_THAT(test::error_of([&] {
               kernels::attention_backward(gpu, q96.view({tokens, H, 96}), kv96.view({tokens, Hk, 96}), kv96.view({tokens, Hk, 96}),
                                           q96.view({tokens, H, 96}), q96.view({tokens, H, 96}), lse.view({H, tokens}), q96.view({tokens, H, 96}),
                                           kv96.view({tokens, Hk, 96}), kv96.view({tokens, Hk, 96}), packed);
             }),
             Contains(here) && Contains("attention_backward: head dims 64 and 128 are supported, not 96"));
  gpu.synchronize();
  for (bf16 v : grads.to_host()) REQUIRE(float(v) == 0.0f);
}

TEST_CASE("kernels::attention_backward_compile builds each architecture's three kernels with no GPU", "[unit][kernels]") {
  auto q = DeviceTensor<bf16>::for_compile({512, 32, 128}), kv = DeviceTensor<bf16>::for_compile({512, 8, 128});
  auto lse = DeviceTensor<f32>::for_compile({32, 512});
  auto cu = DeviceTensor<int32_t>::for_compile({3});
  const kernels::AttentionBackwardOptions options{.cu_seqlens_q = cu, .cu_seqlens_k = cu, .max_seqlen_q = 256, .max_seqlen_k = 256,
                                                  .causal = true};
  std::vector<CompiledKernel> hopper = kernels::attention_backward_compile(Target::parse("sm_90a"), q, kv, kv, q, q, lse, q, kv, kv, options);
  REQUIRE(hopper.size() == 3);
  CHECK(hopper[0].name == "cutejit_attention_bwd_dot_bf16");
  CHECK(hopper[1].name == "cutejit_attention_fmha90_bwd_dkdv_bf16_hd128_causal");
  CHECK(test::contains(hopper[1].ptx, "wgmma.mma_async"));
  CHECK(test::contains(hopper[2].ptx, "wgmma.mma_async"));
  for (const char* t : {"sm_80", "sm_100a", "sm_120a"}) {
    INFO(t);
    std::vector<CompiledKernel> k = kernels::attention_backward_compile(Target::parse(t), q, kv, kv, q, q, lse, q, kv, kv, options);
    REQUIRE(k.size() == 3);
    CHECK(k[1].name == "cutejit_attention_bwd_dkdv_bf16");
    CHECK(test::contains(k[1].ptx, "mma.sync.aligned.m16n8k16"));
    CHECK(test::contains(k[2].ptx, "mma.sync.aligned.m16n8k16"));
  }
  auto windowed = options;
  windowed.causal = false;
  windowed.window_left = 64;
  CHECK_THROWS_WITH(kernels::attention_backward_compile(Target::parse("sm_120a"), q, kv, kv, q, q, lse, q, kv, kv, windowed),
                    Contains("window"));
}
