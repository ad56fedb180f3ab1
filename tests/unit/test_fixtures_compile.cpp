// Every test fixture traces and cross-compiles for its targets (sm_90a, sm_100a and sm_120a unless it
// names others); the PTX holds the instructions the fixture exists to show, and each cubin records its exact target.
#include <catch2/catch.hpp>

#include "block_reduce.hpp"
#include "elementwise_add_tv.hpp"
#include "gemm_bf16.hpp"
#include "gemm_bf16_bias_gelu.hpp"
#include "gemm_bf16_nn.hpp"
#include "gemm_fp8.hpp"
#include "gemm_fp8_e4m3_out.hpp"
#include "fmha_backward_sm90.hpp"
#include "fmha_decode.hpp"
#include "fmha_sm80.hpp"
#include "fmha_sm90.hpp"
#include "gemm_sm80.hpp"
#include "gemm_tma_tensorop.hpp"
#include "saxpy.hpp"
#include "sgemm.hpp"
#include "softmax.hpp"
#include "support.hpp"
#include "transpose.hpp"
#include "transpose_swizzle.hpp"
#include "vector_add.hpp"

using namespace cutejit;

namespace {
struct Expectation {
  fixtures::KernelCheck fixture;
  std::vector<std::string> ptx_contains;
};

std::vector<Expectation> expectations() {
  return {
      {fixtures::vector_add_check(), {"ld.global.nc.v4.b32", "st.global.v4.b32"}},
      {fixtures::saxpy_check(), {"fma.rn.f32", "ld.param.b32"}},
      {fixtures::block_reduce_check(), {"shfl.sync.bfly.b32", "bar.sync", "st.shared", "add.f32"}},
      {fixtures::transpose_check(), {"st.shared.b32", "ld.shared.b32", "bar.sync"}},
      {fixtures::softmax_check(), {"ex2.approx.ftz.f32", "shfl.sync.bfly.b32", "max.f32"}},
      {fixtures::sgemm_check(), {"fma.rn.f32"}},
      {fixtures::elementwise_add_tv_check(), {"ld.global.nc.v4.b32", "st.global.v4.b32"}},
      {fixtures::transpose_swizzle_check(), {"st.shared.b32", "ld.shared.b32", "xor.b32", "bar.sync"}},
      {fixtures::gemm_bf16_check(),
       {"cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity", "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
        "stmatrix.sync.aligned.m8n8.x4.shared.b16", "cp.async.bulk.tensor.2d.global.shared::cta", "cp.async.bulk.wait_group.read"}},
      {fixtures::gemm_fp8_check(),
       {"cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity", "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"}},
      {fixtures::gemm_bf16_bias_gelu_check(),
       {"cp.async.bulk.tensor.2d", "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "cvt.f32.bf16"}},
      {fixtures::gemm_bf16_cluster_check(),
       {".multicast::cluster", "mapa.shared::cluster", "mbarrier.arrive.shared::cluster.b64", "barrier.cluster.wait",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"}},
      {fixtures::gemm_fp8_e4m3_out_check(),
       {"wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3", "cvt.rn.satfinite.e4m3x2.f32", "st.shared.b16",
        "cp.async.bulk.tensor.2d.global.shared::cta"}},
      {fixtures::gemm_tensorop_bf16_check(),
       {"cp.async.cg.shared.global", "cp.async.wait_group \t1", "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.shared.b16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"}},
      {fixtures::gemm_tensorop_check<SM80_16x8x8_F32TF32TF32F32_TN, float>(300, 200, 520),
       {"ldmatrix.sync.aligned.m8n8.x4.shared.b16", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"}},
      {fixtures::gemm_tensorop_check<SM80_16x8x32_S32S8S8S32_TN, int32_t>(300, 200, 528),
       {"ldmatrix.sync.aligned.m8n8.x4.shared.b16", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"}},
      {fixtures::gemm_tensorop_check<SM89_16x8x32_F32E4M3E4M3F32_TN, bf16>(300, 200, 528),
       {"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"}},
      {fixtures::gemm_tma_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(300, 200, 520),
       {"cp.async.bulk.tensor.2d.shared::cta.global", "mbarrier.try_wait.parity", "mbarrier.arrive.expect_tx",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"}},
      {fixtures::gemm_tma_tensorop_check<SM89_16x8x32_F32E4M3E4M3F32_TN, bf16>(300, 200, 528),
       {"cp.async.bulk.tensor.2d.shared::cta.global", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"}},
      {fixtures::gemm_tensorop_check<SM80_16x8x16_F32F16F16F32_TN, f16>(296, 264, 520, fixtures::gemm_sm80::Major::mn,
                                                                           fixtures::gemm_sm80::Major::mn),
       {"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"}},
      {fixtures::fmha_forward_check(),
       {"cp.async.cg.shared.global", "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "ex2.approx.ftz.f32", "shfl.sync.bfly.b32"}},
      {fixtures::fmha_decode_check(),
       {"cp.async.cg.shared.global", "cp.async.wait_group \t0", "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "bar.warp.sync"}},
      {fixtures::fmha_backward_check(),
       {"cp.async.cg.shared.global", "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "ex2.approx.ftz.f32"}},
      {fixtures::fmha_backward_sm90_check(),
       {"cp.async.bulk.tensor.3d", "mbarrier.try_wait.parity", "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "setmaxnreg.inc.sync.aligned.u32 \t240", "ex2.approx.ftz.f32"}},
      {fixtures::fmha_forward_sm90_check(),
       {"cp.async.bulk.tensor.3d", "mbarrier.try_wait.parity", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
        "setmaxnreg.inc.sync.aligned.u32 \t240", "ex2.approx.ftz.f32", "shfl.sync.bfly.b32"}},
      {fixtures::gemm_bf16_nn_check(),
       {"cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity", "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"}},
  };
}
}  // namespace

TEST_CASE("every test fixture cross-compiles for its targets (sm_90a, sm_100a, sm_120a unless sm_90a-only)", "[unit]") {
  for (const Expectation& e : expectations()) {
    for (const char* name : e.fixture.targets) {
      INFO(e.fixture.name << " for " << name);
      CompiledKernel k = e.fixture.compile(Target::parse(name));
      CHECK(k.name == e.fixture.name);
      CHECK(test::contains(k.ptx, std::string(".target ") + name));
      CHECK(test::contains(k.ptx, std::string(".entry ") + e.fixture.name));
      for (const std::string& instruction : e.ptx_contains) {
        INFO("expected instruction " << instruction);
        CHECK(test::contains(k.ptx, instruction));
      }
      // The ELF flags do not distinguish sm_90 from sm_90a; the tool-kit info note does.
      CHECK(test::cubin_contains(k.cubin, std::string("-arch ") + name));
      CHECK(k.cubin.size() > 1000);
    }
  }
}

TEST_CASE("PTX carries line info pointing at the user's kernel source", "[unit]") {
  CompiledKernel k = fixtures::vector_add_check().compile(Target::parse("sm_90a"));
  CHECK(test::contains(k.ptx, "vector_add.hpp"));
  CHECK(test::contains(k.ptx, ".loc"));
}

TEST_CASE("the same specialization compiles to the same PTX; a different one does not", "[unit]") {
  auto v = test::vector_arg<float>();
  Target t = Target::parse("sm_90a");
  std::string first = fixtures::block_reduce.compile(t, v, v, 256).ptx;
  CHECK(fixtures::block_reduce.compile(t, v, v, 256).ptx == first);
  CHECK(fixtures::block_reduce.compile(t, v, v, 128).ptx != first);  // a Constexpr is part of the specialization
}

TEST_CASE("a pointer only 4-byte aligned cannot take a 16-byte vector path, and the error says why", "[unit]") {
  // 4-byte alignment: the vector_add kernel cannot prove its 16-byte loads, and says so.
  auto v = test::vector_arg<float>(1024, 4);
  CHECK_THROWS_WITH(fixtures::vector_add.compile(Target::parse("sm_90a"), v, v, v),
                    Catch::Contains("cannot prove that this 16-byte vector access is aligned"));
}
