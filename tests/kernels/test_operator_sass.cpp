// The SASS of the kernel library's operators, compiled with no GPU for each architecture at
// Qwen3-8B's shapes (a decode step's M = 1 and 8, a prefill's 256 rows): the tensor-core
// instruction each architecture's kernel is built on is there after ptxas, the wgmma are not
// serialized, and nothing spills to local memory. The PTX tests beside these see what was
// asked for; only the SASS shows what ptxas made of it, and for sm_100a and sm_120a it is the
// only sight of the machine code there is.
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/attention.hpp>
#include <cutejit/kernels/elementwise.hpp>
#include <cutejit/kernels/gemm.hpp>
#include <cutejit/kernels/gemm_block_scaled.hpp>
#include <cutejit/layout/blocked_scales.hpp>
#include <cutejit/kernels/norm.hpp>

#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;

namespace {

constexpr int64_t hidden = 4096, intermediate = 12288, heads = 32, kv_heads = 8, head_dim = 128;

/// The SASS of `k`, after checking that nothing spilled: no local loads or stores, and no stack
/// frame beyond the local memory the PTX itself declares (a device assertion's arguments for
/// vprintf; libdevice's sin and cos reserve some for their large-argument path).
std::string sass_of(const CompiledKernel& k) {
  INFO(k.name << " for " << k.target.name());
  const std::string sass = test::disassemble(k.cubin, "-sass");
  CHECK_FALSE(test::contains(sass, "LDL"));
  CHECK_FALSE(test::contains(sass, "STL"));
  std::smatch depot;
  const int declared = std::regex_search(k.ptx, depot, std::regex(R"(__local_depot\d+\[(\d+)\])")) ? std::stoi(depot[1]) : 0;
  CHECK(test::resource_usage(k.cubin, k.name, "STACK") <= declared);
  return sass;
}

/// Whether the SASS uses a tensor-core instruction (HFMA2.MMA is a move on the MMA pipe).
bool tensor_cores(const std::string& sass) {
  return std::regex_search(sass, std::regex(R"(\b(HMMA|HGMMA|QGMMA|IMMA|UTC[A-Z]*MMA)\b)"));
}

}  // namespace

TEST_CASE("kernels::gemm's SASS: HGMMA on sm_90a, UTCHMMA on sm_100a, HMMA elsewhere, wide loads at small M, no spills",
          "[unit][kernels][sass]") {
  // The gate/up projection of a 256-token prefill: C (256 x 2I) = X (256 x H) W^T.
  auto x = DeviceTensor<bf16>::for_compile({256, hidden}), w = DeviceTensor<bf16>::for_compile({2 * intermediate, hidden});
  auto y = DeviceTensor<bf16>::for_compile({256, 2 * intermediate});
  for (const CompiledKernel& k : kernels::gemm_compile(Target::parse("sm_90a"), x, w, y)) {
    const std::string sass = sass_of(k);
    CHECK(test::contains(sass, "HGMMA.64x"));
    CHECK(test::contains(sass, ".F32.BF16"));
    test::check_wgmma_not_serialized(k.ptx, k.cubin);
  }
  // The same with SwiGLU fused (C has I columns), at both of its tile widths: the gate's
  // exponential in the epilogue, and the wgmmas still not serialized.
  auto gated = DeviceTensor<bf16>::for_compile({256, intermediate});
  const auto glu_kernels = kernels::gemm_compile(Target::parse("sm_90a"), x, w, gated, {.glu = kernels::Activation::silu});
  CHECK(glu_kernels.size() == 2);
  for (const CompiledKernel& k : glu_kernels) {
    const std::string sass = sass_of(k);
    CHECK(test::contains(sass, "HGMMA.64x"));
    CHECK(test::contains(sass, "MUFU.EX2"));
    test::check_wgmma_not_serialized(k.ptx, k.cubin);
  }
  CHECK(test::contains(sass_of(kernels::gemm_compile(Target::parse("sm_100a"), x, w, y).at(0)), "UTCHMMA"));
  for (const char* t : {"sm_80", "sm_120a"}) {
    INFO(t);
    CHECK(test::contains(sass_of(kernels::gemm_compile(Target::parse(t), x, w, y).at(0)), "HMMA.16816.F32.BF16"));
  }
  // A decode step's projections (M = 1 and 8, the residual added by the epilogue): the few-row
  // kernels stream the weights in 16-byte loads on every target, with FMAs at M = 1 and the
  // tensor cores at 8.
  for (int64_t m : {1, 8}) {
    auto xm = DeviceTensor<bf16>::for_compile({m, hidden}), ym = DeviceTensor<bf16>::for_compile({m, 2 * intermediate});
    for (const char* t : {"sm_80", "sm_90a", "sm_100a", "sm_120a"}) {
      INFO(t << ", M = " << m);
      const std::string sass = sass_of(kernels::gemm_compile(Target::parse(t), xm, w, ym, {.beta = 1}).at(0));
      CHECK(test::contains(sass, "LDG.E.128"));
      if (m == 1) CHECK_FALSE(tensor_cores(sass));
      else CHECK(test::contains(sass, "HMMA.16816.F32.BF16"));
      // With the input's norm and SwiGLU fused (C has I columns): the FMA kernel, the norm's
      // weights read beside A, the squares summed, and still nothing spilled.
      const kernels::GemmOptions swiglu{.rmsnorm_a = kernels::RmsNorm{DeviceTensor<bf16>::for_compile({hidden}), 1e-6f},
                                        .glu = kernels::Activation::silu};
      auto gated = DeviceTensor<bf16>::for_compile({m, intermediate});
      const std::string fused = sass_of(kernels::gemm_compile(Target::parse(t), xm, w, gated, swiglu).at(0));
      CHECK(test::contains(fused, "LDG.E.128"));
      CHECK(test::contains(fused, "MUFU.RSQ"));
      CHECK_FALSE(tensor_cores(fused));
    }
  }
}

TEST_CASE("kernels::gemm's SASS with f16 and FP8 operands: each target's MMA of that type, 16-byte loads at small M, no spills",
          "[unit][kernels][sass]") {
  auto x16 = DeviceTensor<f16>::for_compile({256, hidden}), w16 = DeviceTensor<f16>::for_compile({2 * intermediate, hidden});
  auto y16 = DeviceTensor<f16>::for_compile({256, 2 * intermediate});
  auto x8 = DeviceTensor<f8e4m3>::for_compile({256, hidden}), w8 = DeviceTensor<f8e4m3>::for_compile({2 * intermediate, hidden});
  auto y8 = DeviceTensor<bf16>::for_compile({256, 2 * intermediate});
  for (const CompiledKernel& k : kernels::gemm_compile(Target::parse("sm_90a"), x16, w16, y16)) {
    // f16 is HGMMA's default type: no suffix, where bf16's reads .F32.BF16.
    const std::string sass = sass_of(k);
    CHECK(test::contains(sass, "HGMMA.64x"));
    CHECK_FALSE(test::contains(sass, ".BF16"));
    test::check_wgmma_not_serialized(k.ptx, k.cubin);
  }
  for (const CompiledKernel& k : kernels::gemm_compile(Target::parse("sm_90a"), x8, w8, y8)) {
    CHECK(test::contains(sass_of(k), "QGMMA.64x"));
    test::check_wgmma_not_serialized(k.ptx, k.cubin);
  }
  // Blackwell, compile-verified: tcgen05 on sm_100a, mma.sync on sm_120a.
  CHECK(test::contains(sass_of(kernels::gemm_compile(Target::parse("sm_100a"), x16, w16, y16).at(0)), "UTCHMMA"));
  CHECK(test::contains(sass_of(kernels::gemm_compile(Target::parse("sm_100a"), x8, w8, y8).at(0)), "UTCQMMA"));
  CHECK(test::contains(sass_of(kernels::gemm_compile(Target::parse("sm_120a"), x16, w16, y16).at(0)), "HMMA.16816.F32"));
  CHECK(test::contains(sass_of(kernels::gemm_compile(Target::parse("sm_120a"), x8, w8, y8).at(0)), "QMMA.16832.F32.E4M3.E4M3"));
  // An FP8 C: the same MMAs, the accumulators rounded and saturated in pairs into e4m3.
  auto c8 = DeviceTensor<f8e4m3>::for_compile({256, 2 * intermediate});
  for (auto [t, mma] : {std::pair{"sm_90a", "QGMMA.64x"}, {"sm_100a", "UTCQMMA"}, {"sm_120a", "QMMA.16832.F32.E4M3.E4M3"}}) {
    INFO(t);
    const std::string sass = sass_of(kernels::gemm_compile(Target::parse(t), x8, w8, c8).at(0));
    CHECK(test::contains(sass, mma));
    CHECK(test::contains(sass, "F2FP.SATFINITE.E4M3.F32.PACK_AB"));
  }
  // A decode step's rows: the few-row kernels, 16-byte loads of B; f16's on the tensor cores,
  // FP8's with FMAs.
  auto x16m = DeviceTensor<f16>::for_compile({4, hidden}), y16m = DeviceTensor<f16>::for_compile({4, 2 * intermediate});
  auto x8m = DeviceTensor<f8e4m3>::for_compile({4, hidden});
  auto y8m = DeviceTensor<bf16>::for_compile({4, 2 * intermediate});
  for (const char* t : {"sm_90a", "sm_100a", "sm_120a"}) {
    INFO(t);
    const std::string sass16 = sass_of(kernels::gemm_compile(Target::parse(t), x16m, w16, y16m).at(0));
    CHECK(test::contains(sass16, "LDG.E.128"));
    CHECK(test::contains(sass16, "HMMA.16816.F32"));
    CHECK_FALSE(test::contains(sass16, ".BF16"));
    const std::string sass8 = sass_of(kernels::gemm_compile(Target::parse(t), x8m, w8, y8m).at(0));
    CHECK(test::contains(sass8, "LDG.E.128"));
    CHECK_FALSE(tensor_cores(sass8));
  }
}

TEST_CASE("kernels::gemm_block_scaled's SASS: the block-scaled MMA of each format on sm_100a and sm_120a, no spills",
          "[unit][kernels][sass]") {
  using kernels::BlockScaledFormat;
  const int64_t m = 256, n = 256, k = 1024;
  auto c = DeviceTensor<bf16>::for_compile({m, n});
  auto compile = [&](const char* t, BlockScaledFormat f) {
    const int64_t row_bytes = f == BlockScaledFormat::mxfp8 ? k : k / 2, blocks = k / kernels::scale_block(f);
    auto a = DeviceTensor<uint8_t>::for_compile({m, row_bytes});
    auto sf = DeviceTensor<uint8_t>::for_compile({blocked_scale_bytes(m, blocks)});
    return sass_of(kernels::gemm_block_scaled_compile(Target::parse(t), f, a, sf, a, sf, c).at(0));
  };
  // tcgen05 with the scales copied to tensor memory; mma.sync with scale-factor operands.
  for (const std::string& sass : {compile("sm_100a", BlockScaledFormat::nvfp4), compile("sm_100a", BlockScaledFormat::mxfp8)})
    CHECK(test::contains(sass, "UTCCP.T.S.4x32dp128bit"));
  CHECK(test::contains(compile("sm_100a", BlockScaledFormat::nvfp4), "UTCOMMA.4X"));
  CHECK(test::contains(compile("sm_100a", BlockScaledFormat::mxfp8), "UTCQMMA"));
  CHECK(test::contains(compile("sm_120a", BlockScaledFormat::nvfp4), "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X"));
  CHECK(test::contains(compile("sm_120a", BlockScaledFormat::mxfp4), "OMMA.SF.16864.F32.E2M1.E2M1.E8"));
  CHECK(test::contains(compile("sm_120a", BlockScaledFormat::mxfp8), "QMMA.SF.16832.F32.E4M3.E4M3.E8"));
}

TEST_CASE("kernels::attention_forward's SASS: HGMMA on sm_90a, HMMA on the others, no spills", "[unit][kernels][sass]") {
  auto q = DeviceTensor<bf16>::for_compile({512, heads, head_dim}), kv = DeviceTensor<bf16>::for_compile({512, kv_heads, head_dim});
  auto lse = DeviceTensor<f32>::for_compile({heads, 512});
  auto cu = DeviceTensor<int32_t>::for_compile({3});
  const kernels::AttentionOptions options{.cu_seqlens_q = cu, .cu_seqlens_k = cu, .max_seqlen_q = 256, .causal = true};
  const CompiledKernel hopper = kernels::attention_forward_compile(Target::parse("sm_90a"), q, kv, kv, q, lse, options);
  CHECK(test::contains(sass_of(hopper), "HGMMA.64x"));
  test::check_wgmma_not_serialized(hopper.ptx, hopper.cubin);
  for (const char* t : {"sm_80", "sm_100a", "sm_120a"}) {
    INFO(t);
    CHECK(test::contains(sass_of(kernels::attention_forward_compile(Target::parse(t), q, kv, kv, q, lse, options)), "HMMA.16816.F32.BF16"));
  }
}

TEST_CASE("the norm and elementwise operators' SASS: 16-byte loads and stores, no spills, on every target", "[unit][kernels][sass]") {
  for (const char* t : {"sm_80", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(t);
    const Target target = Target::parse(t);
    for (const CompiledKernel& k : {kernels::rmsnorm_compile(target, DType::bf16, 8, hidden),
                                    kernels::rmsnorm_compile(target, DType::bf16, 8, hidden, /*add_residual=*/true),
                                    kernels::layernorm_compile(target, DType::bf16, 8, hidden),
                                    kernels::softmax_compile(target, DType::bf16, 8, 151936),
                                    kernels::silu_mul_compile(target, DType::bf16, 8, intermediate),
                                    kernels::rope_compile(target, DType::bf16, 8, heads, head_dim)}) {
      INFO(k.name);
      const std::string sass = sass_of(k);
      CHECK(test::contains(sass, "LDG.E.128"));
      CHECK(test::contains(sass, "STG.E.128"));
    }
  }
}
