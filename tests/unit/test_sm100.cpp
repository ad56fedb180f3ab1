// The sm_100 family's tensor-core path, compile-verified: the tcgen05 GEMM cross-compiled for
// every target that has tcgen05 and its PTX and SASS read back (nothing here runs on a GPU),
// and each tcgen05 misuse a trace-time error at the user's line.
#include <catch2/catch.hpp>

#include <regex>

#include <string>

#include "cutejit/arch/sm100/descriptors.hpp"
#include "cutejit/atom/sm100/tmem.hpp"
#include "cutejit/pipeline/clc_tile_scheduler.hpp"
#include "gemm_sm100.hpp"
#include "gemm_sm100_block_scaled.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
const char* const tcgen05_targets[] = {"sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"};
}  // namespace

TEST_CASE("the sm_100 BF16 GEMM has the tcgen05 instructions in its PTX for every tcgen05 target", "[unit]") {
  for (const char* t : tcgen05_targets) {
    INFO(t);
    CompiledKernel k = fixtures::gemm_bf16_sm100_compile(Target::parse(t));
    for (const char* i : {"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", "tcgen05.relinquish_alloc_permit.cta_group::1",
                          "tcgen05.mma.cta_group::1.kind::f16", "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
                          "tcgen05.ld.sync.aligned.32x32b.x32.b32", "tcgen05.wait::ld.sync.aligned",
                          "tcgen05.dealloc.cta_group::1.sync.aligned.b32", "tcgen05.fence::before_thread_sync",
                          "tcgen05.fence::after_thread_sync", "cp.async.bulk.tensor.2d.shared::cta.global", "st.shared.v4", "cp.async.bulk.tensor.2d.global.shared::cta"}) {
      INFO(i);
      CHECK(test::contains(k.ptx, i));
    }
    // The instruction descriptor of 128 x 256 bf16 -> f32 (0x08400490).
    CHECK(test::contains(k.ptx, "138413200"));
    CompiledKernel f = fixtures::gemm_fp8_sm100_compile(Target::parse(t));
    CHECK(test::contains(f.ptx, "tcgen05.mma.cta_group::1.kind::f8f6f4"));
    // e4m3 x e4m3 -> f32, 128 x 256: 0x08400010.
    CHECK(test::contains(f.ptx, "138412048"));
  }
}

TEST_CASE("the sm_100 GEMMs' SASS: UTCHMMA or UTCQMMA, UTCBAR, LDTM, TMA loads and stores, no local memory", "[unit]") {
  for (const char* t : {"sm_100a", "sm_103a", "sm_110a"}) {
    for (bool fp8 : {false, true}) {
      INFO(t << (fp8 ? " fp8" : " bf16"));
      CompiledKernel k = fp8 ? fixtures::gemm_fp8_sm100_compile(Target::parse(t)) : fixtures::gemm_bf16_sm100_compile(Target::parse(t));
      std::string sass = test::disassemble(k.cubin, "-sass");
      // One MMA per K step of a stage (kind::f16 is UTCHMMA, kind::f8f6f4 UTCQMMA), in the loop
      // over its four steps.
      CHECK(test::count(sass, fp8 ? "UTCQMMA" : "UTCHMMA") == 4);
      CHECK(test::contains(sass, "UTCBAR"));
      CHECK(test::count(sass, "LDTM") >= 8);  // one 32-column load per chunk of the 256 columns
      // The epilogue: per 32-column chunk, four 16-byte shared stores per thread into the
      // warp's buffer and one TMA store of it.
      CHECK(test::count(sass, "UTMASTG.2D") == 8);
      CHECK(test::count(sass, "STS.128") == 32);
      CHECK(test::contains(sass, "UTMALDG.2D"));
      CHECK(test::contains(sass, "UTCATOMSWS"));  // the allocation
      test::check_no_local_memory(k.cubin, k.name, sass);
      CHECK(test::resource_usage(k.cubin, k.name, "REG") <= 128);  // 54 with the TMA-store epilogue (86 with global stores)
    }
  }
}

TEST_CASE("the sm_100 BF16 GEMM on cluster launch control: try_cancel in its PTX and UGETNEXTWORKID in its SASS, one CTA per tile",
          "[unit]") {
  for (const char* t : tcgen05_targets) {
    INFO(t);
    CompiledKernel k = fixtures::gemm_bf16_sm100_clc_compile(Target::parse(t));
    for (const char* i : {"clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128",
                          "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128", "clusterlaunchcontrol.query_cancel.get_first_ctaid::x",
                          "tcgen05.mma.cta_group::1.kind::f16"})
      CHECK(test::contains(k.ptx, i));
  }
  for (const char* t : {"sm_100a", "sm_103a", "sm_110a"}) {
    INFO(t);
    CompiledKernel k = fixtures::gemm_bf16_sm100_clc_compile(Target::parse(t));
    std::string sass = test::disassemble(k.cubin, "-sass");
    CHECK(test::count(sass, "UGETNEXTWORKID") == 1);  // the producer's one request per tile
    CHECK(test::count(sass, "UTCHMMA") == 4);
    CHECK(test::count(sass, "UTMASTG.2D") == 8);
    test::check_no_local_memory(k.cubin, k.name, sass);
  }
  using fixtures::gemm_sm100::Dense;
  using fixtures::gemm_sm100::Scheduling;
  // 2048 x 4096: 16 x 16 tiles of 128 x 256; on 148 multiprocessors the static walk launches
  // 148 CTAs, cluster launch control one per tile.
  CHECK(fixtures::gemm_sm100::launch_config<Dense<bf16>>(148, 2048, 4096).grid.x == 148);
  CHECK(fixtures::gemm_sm100::launch_config<Dense<bf16>, Scheduling::clc>(148, 2048, 4096).grid.x == 256);
}

TEST_CASE("the sm_100 epilogue's chunk buffers are laid out as the 64-byte-swizzled TMA store box reads them", "[unit]") {
  // The box (32 rows of 64 bytes) in shared memory under CU_TENSOR_MAP_SWIZZLE_64B: row r at
  // 64 r, its 16-byte granule g at granule g ^ ((r / 2) % 4) (address bits 4-5 ^= bits 7-8).
  auto l = fixtures::gemm_sm100::chunk_buffer_layout();
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < fixtures::gemm_sm100::chunk_cols; ++c) {
      const int byte = 2 * c, want = 64 * r + 16 * ((byte / 16) ^ ((r / 2) % 4)) + byte % 16;
      INFO(r << ", " << c);
      REQUIRE(2 * l(IntTuple{r, c}) == want);
    }
}

TEST_CASE("the sm_100 GEMM's epilogue hook is traced into its epilogue", "[unit]") {
  // A per-column bias: the hook reads global memory at the value's column.
  Kernel biased{"gemm_bf16_sm100_bias", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Tensor<f32> bias, Int m, Int n,
                                            Int k) {
    fixtures::gemm_sm100::kernel(fixtures::gemm_sm100::Dense<bf16>{a, b}, c, m, n, k, [&](F32 x, Int row, Int col) { return x + F32(bias(col)); });
  }};
  auto [ta, tb] = fixtures::gemm_sm100::tensor_maps_for_compile<fixtures::gemm_sm100::Dense<bf16>>();
  CompiledKernel k = biased.compile(Target::parse("sm_100a"), ta, tb, fixtures::gemm_sm100::c_tensor_map_for_compile(),
                                    DeviceTensor<float>::for_compile({512}), int32_t(256), int32_t(512), int32_t(512));
  CHECK(test::contains(k.ptx, "tcgen05.ld.sync.aligned.32x32b.x32.b32"));
  CHECK(test::contains(k.ptx, "ld.global"));  // the bias
  CompiledKernel plain = fixtures::gemm_bf16_sm100_compile(Target::parse("sm_100a"));
  CHECK_FALSE(test::contains(plain.ptx, "ld.global"));  // the identity epilogue reads nothing
}

TEST_CASE("the sm_100 NVFP4 and MXFP8 GEMMs have the block-scaled MMA, its copies and descriptors in their PTX on every tcgen05 target",
          "[unit]") {
  for (const char* t : tcgen05_targets) {
    INFO(t);
    CompiledKernel nv = fixtures::gemm_nvfp4_sm100_compile(Target::parse(t));
    for (const char* i : {"tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16", "tcgen05.cp.cta_group::1.32x128b.warpx4",
                          "cp.async.bulk.tensor.3d.shared::cta.global", "cp.async.bulk.tensor.2d.shared::cta.global",
                          "tcgen05.ld.sync.aligned.32x32b.x32.b32"})
      CHECK(test::contains(nv.ptx, i));
    // NVFP4 128 x 128, E2M1 x E2M1, UE4M3, ids 0 (every step reads a whole column): 0x08200480,
    // from the ISA's table by hand.
    CHECK(test::contains(nv.ptx, std::to_string(0x08200480)));
    CompiledKernel mx = fixtures::gemm_mxfp8_sm100_compile(Target::parse(t));
    CHECK(test::contains(mx.ptx, "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32"));
    // E4M3 x E4M3, UE8M0, 128 x 128: 0x08A00000, with the steps' scale-factor ids 0-3 in bits
    // 29-30 (A) and 4-5 (B).
    for (uint32_t id = 0; id < 4; ++id) CHECK(test::contains(mx.ptx, std::to_string(0x08A00000u | id << 29 | id << 4)));
  }
}

TEST_CASE("the sm_100 block-scaled GEMMs' SASS: UTCOMMA.4X or UTCQMMA per step, UTCCP per chunk, no local memory", "[unit]") {
  for (const char* t : {"sm_100a", "sm_103a", "sm_110a"}) {
    for (bool nvfp4 : {true, false}) {
      INFO(t << (nvfp4 ? " nvfp4" : " mxfp8"));
      CompiledKernel k = nvfp4 ? fixtures::gemm_nvfp4_sm100_compile(Target::parse(t)) : fixtures::gemm_mxfp8_sm100_compile(Target::parse(t));
      std::string sass = test::disassemble(k.cubin, "-sass");
      // Four MMA steps per 128-byte stage; the scales' 512-byte chunks: NVFP4 4 of SFA and 4 of
      // SFB (16 blocks of 16 per row), MXFP8 one each (4 blocks of 32). The disassembler names
      // NVFP4's scale vector .4X for sm_100a and sm_110a, .BLOCK16 for sm_103a (same bits).
      const std::string nvfp4_mma = std::string(t) == "sm_103a" ? "UTCOMMA.BLOCK16" : "UTCOMMA.4X";
      CHECK(test::count(sass, nvfp4 ? nvfp4_mma : "UTCQMMA") == 4);
      CHECK(test::count(sass, "UTCCP.T.S.4x32dp128bit") == (nvfp4 ? 8 : 2));
      CHECK(test::count(sass, "UTMALDG.3D") == 2);  // SFA and SFB
      CHECK(test::count(sass, "UTMALDG.2D") == 2);  // A and B
      CHECK(test::count(sass, "LDTM") >= 4);
      CHECK(test::count(sass, "UTMASTG.2D") == 4);  // a TMA store per 32-column chunk of C
      CHECK(test::count(sass, "STS.128") == 16);
      test::check_no_local_memory(k.cubin, k.name, sass);
      CHECK(test::resource_usage(k.cubin, k.name, "REG") <= 128);
    }
  }
  for (const char* t : {"sm_120a", "sm_90a"})
    CHECK_THROWS_WITH(fixtures::gemm_nvfp4_sm100_compile(Target::parse(t)), Contains(std::string("is not available on ") + t));
}

TEST_CASE("the sm_100 NVFP4 and MXFP8 GEMMs on cluster launch control: one try_cancel per tile, the block-scaled steps unchanged",
          "[unit]") {
  for (const char* t : {"sm_100a", "sm_103a", "sm_110a"}) {
    for (bool nvfp4 : {true, false}) {
      INFO(t << (nvfp4 ? " nvfp4" : " mxfp8"));
      CompiledKernel k = nvfp4 ? fixtures::gemm_nvfp4_sm100_clc_compile(Target::parse(t))
                               : fixtures::gemm_mxfp8_sm100_clc_compile(Target::parse(t));
      CHECK(test::contains(k.ptx, "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128"));
      CHECK(test::contains(k.ptx, nvfp4 ? "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16"
                                        : "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32"));
      std::string sass = test::disassemble(k.cubin, "-sass");
      CHECK(test::count(sass, "UGETNEXTWORKID") == 1);
      const std::string nvfp4_mma = std::string(t) == "sm_103a" ? "UTCOMMA.BLOCK16" : "UTCOMMA.4X";
      CHECK(test::count(sass, nvfp4 ? nvfp4_mma : "UTCQMMA") == 4);
      CHECK(test::count(sass, "UTCCP.T.S.4x32dp128bit") == (nvfp4 ? 8 : 2));
      CHECK(test::count(sass, "UTMASTG.2D") == 4);
      test::check_no_local_memory(k.cubin, k.name, sass);
      CHECK(test::resource_usage(k.cubin, k.name, "REG") <= 128);
    }
  }
  using fixtures::gemm_sm100::Nvfp4;
  using fixtures::gemm_sm100::Scheduling;
  // 2048 x 4096 in 128 x 128 tiles: 512 CTAs, one per tile, against 148 for the static walk.
  CHECK(fixtures::gemm_sm100::launch_config<Nvfp4, Scheduling::clc>(148, 2048, 4096).grid.x == 512);
  CHECK(fixtures::gemm_sm100::launch_config<Nvfp4>(148, 2048, 4096).grid.x == 148);
}

TEST_CASE("the block-scaled GEMM's scale boxes land in shared memory as the tile layout its MMAs check", "[unit]") {
  // The scale tensor maps view the blocked tensor as (row blocks, 256-byte half chunks, 256
  // bytes) and load boxes of (tile rows / 128, half_chunks, 256) at (row0 / 128, kt half_chunks,
  // 0), which land row-major in shared memory. Every scale of a stage must then sit where
  // blocked_scale_layout(tile rows, blocks), the layout UmmaScaleFactors checks, says.
  auto check = []<class Mainloop>(std::type_identity<Mainloop>, int tile_rows, int64_t rows, int64_t k) {
    const int64_t blocks = k / Mainloop::tile_k * Mainloop::blocks;  // of the whole tensor
    const int hc = Mainloop::half_chunks;
    const Layout tile = blocked_scale_layout(tile_rows, Mainloop::blocks);
    for (int64_t row0 = 0; row0 < rows; row0 += tile_rows)
      for (int64_t kt = 0; kt < k / Mainloop::tile_k; ++kt)
        for (int r = 0; r < tile_rows; ++r)
          for (int b = 0; b < Mainloop::blocks; ++b) {
            const int64_t smem = tile(IntTuple{r, b}).value();
            // The box element at that shared-memory offset, and the global byte it copies.
            const int64_t i0 = smem / (hc * 256), i1 = smem / 256 % hc, i2 = smem % 256;
            const int64_t global = (row0 / 128 + i0) * (blocks * 128) + (kt * hc + i1) * 256 + i2;
            INFO(row0 << " " << kt << " " << r << " " << b);
            REQUIRE(global == sm100::blocked_scale_offset(row0 + r, kt * Mainloop::blocks + b, blocks));
          }
  };
  check(std::type_identity<fixtures::gemm_sm100::Nvfp4>{}, 128, 256, 1024);
  check(std::type_identity<fixtures::gemm_sm100::Mxfp8>{}, 128, 256, 512);
  // Partial tiles are fine; K must be whole 16-element scale blocks in whole 16-byte rows.
  CHECK_NOTHROW(fixtures::gemm_sm100::check_shape<fixtures::gemm_sm100::Nvfp4>(200, 136, 96));
  CHECK_THROWS_WITH(fixtures::gemm_sm100::check_shape<fixtures::gemm_sm100::Nvfp4>(256, 256, 80),
                    Contains("K a multiple of 32 and N of 8"));
  CHECK_THROWS_WITH(fixtures::gemm_sm100::check_shape<fixtures::gemm_sm100::Mxfp8>(256, 260, 128), Contains("not 256 x 260 x 128"));
}

TEST_CASE("block-scaled tcgen05.mma and tcgen05.cp: UTCQMMA, UTCOMMA and UTCCP", "[unit]") {
  // One MMA of each block-scaled kind on descriptors from a kernel argument, its scale factors
  // copied into TMEM first: the instructions' forms, not a computation.
  Kernel k{"tcgen05_block_scaled", [](Tensor<u32> a) {
    Value<uint32_t> d = a(0), sfa = a(1), sfb = a(2);
    Value<uint64_t> desc = cast<uint64_t>(Value<uint32_t>(a(3)));
    const auto w = detail::Where::current();
    detail::tcgen05_cp("32x128b.warpx4", sfa.id(), desc.id(), w);
    detail::tcgen05_cp("128x256b", sfb.id(), desc.id(), w);
    sm100::BlockScaledInstrDescriptor mx8{.kind = sm100::BlockScaledKind::mxf8f6f4};
    sm100::BlockScaledInstrDescriptor nv4{.kind = sm100::BlockScaledKind::mxf4nvf4, .a = sm100::OperandType::e2m1,
                                          .b = sm100::OperandType::e2m1, .scale = sm100::ScaleType::ue4m3};
    sm100::BlockScaledInstrDescriptor mx4{.kind = sm100::BlockScaledKind::mxf4, .a = sm100::OperandType::e2m1, .b = sm100::OperandType::e2m1};
    detail::tcgen05_mma_block_scaled(sm100::BlockScaledKind::mxf8f6f4, 32, d.id(), desc.id(), desc.id(), mx8.encode(), sfa.id(), sfb.id(), Bool(false).id(), w);
    detail::tcgen05_mma_block_scaled(sm100::BlockScaledKind::mxf4nvf4, 16, d.id(), desc.id(), desc.id(), nv4.encode(), sfa.id(), sfb.id(), Bool(true).id(), w);
    detail::tcgen05_mma_block_scaled(sm100::BlockScaledKind::mxf4, 32, d.id(), desc.id(), desc.id(), mx4.encode(), sfa.id(), sfb.id(), Bool(true).id(), w);
  }};
  auto v = test::vector_arg<uint32_t>();
  // The vector size spelled .block16 / .block32 (PTX 8.8, which sm_100a kernels use too).
  CompiledKernel a = k.compile(Target::parse("sm_100a"), v), f = k.compile(Target::parse("sm_103a"), v);
  for (const CompiledKernel* c : {&a, &f})
    for (const char* i : {"tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32", "kind::mxf4nvf4.block_scale.block16",
                          "kind::mxf4.block_scale.block32", "tcgen05.cp.cta_group::1.32x128b.warpx4", "tcgen05.cp.cta_group::1.128x256b"})
      CHECK(test::contains(c->ptx, i));
  CHECK(test::contains(a.ptx, ".version 8.8"));
  for (const CompiledKernel* c : {&a, &f}) {
    std::string sass = test::disassemble(c->cubin, "-sass");
    CHECK(test::contains(sass, "UTCQMMA"));
    CHECK(test::count(sass, "UTCOMMA") == 2);
    CHECK(test::count(sass, "UTCCP") == 2);
  }
  CHECK_THROWS_WITH(k.compile(Target::parse("sm_120a"), v), Contains("is not available on sm_120a"));
  Kernel bad{"tcgen05_block_scaled_vector", [](Tensor<u32> a) {
    Value<uint32_t> d = a(0);
    Value<uint64_t> desc = cast<uint64_t>(d);
    detail::tcgen05_mma_block_scaled(sm100::BlockScaledKind::mxf8f6f4, 16, d.id(), desc.id(), desc.id(), 0, d.id(), d.id(), Bool(true).id(),
                                     detail::Where::current());
  }};
  CHECK_THROWS_WITH(bad.compile(Target::parse("sm_100a"), v), Contains("kind::mxf8f6f4 scales every 32 elements of K, not 16"));
}

TEST_CASE("tcgen05.mma with A in TMEM: the [a-tmem] form of each kind, its SASS, and a transposed A refused", "[unit]") {
  // One MMA per kind with A at a TMEM address and B from a descriptor, both kernel arguments:
  // the instruction's form, not a computation (test_sm100_tmem_a.cpp has the atom that lays A out).
  Kernel k{"tcgen05_tmem_a", [](Tensor<u32> a) {
    Value<uint32_t> d = a(0), a_tmem = a(1);
    Value<uint64_t> desc = cast<uint64_t>(Value<uint32_t>(a(2)));
    const auto w = detail::Where::current();
    sm100::InstrDescriptor f16{.kind = sm100::MmaKind::f16, .n = 128};
    sm100::InstrDescriptor tf32{.kind = sm100::MmaKind::tf32, .a = sm100::OperandType::tf32, .b = sm100::OperandType::tf32, .n = 128};
    sm100::InstrDescriptor f8{.kind = sm100::MmaKind::f8f6f4, .a = sm100::OperandType::e4m3, .b = sm100::OperandType::e4m3, .n = 128};
    detail::tcgen05_mma_tmem_a(sm100::MmaKind::f16, d.id(), a_tmem.id(), desc.id(), f16.encode(), Bool(false).id(), w);
    detail::tcgen05_mma_tmem_a(sm100::MmaKind::tf32, d.id(), a_tmem.id(), desc.id(), tf32.encode(), Bool(true).id(), w);
    detail::tcgen05_mma_tmem_a(sm100::MmaKind::f8f6f4, d.id(), a_tmem.id(), desc.id(), f8.encode(), Bool(true).id(), w);
  }};
  auto v = test::vector_arg<uint32_t>();
  for (const char* t : {"sm_100a", "sm_103a", "sm_110a"}) {
    INFO(t);
    CompiledKernel c = k.compile(Target::parse(t), v);
    // A is the second bracketed (TMEM) operand: [d], [a], b-desc, idesc.
    for (const char* kind : {"kind::f16", "kind::tf32", "kind::f8f6f4"})
      CHECK(std::regex_search(c.ptx, std::regex(std::string("tcgen05\\.mma\\.cta_group::1\\.") + kind + " \\[%r[0-9]+\\], \\[%r[0-9]+\\], %rd[0-9]+,")));
    std::string sass = test::disassemble(c.cubin, "-sass");
    INFO(sass);
    // SASS names A's operand tmem[...] where the shared-memory form has gdesc[...] (A, then B).
    const std::regex tmem_a("UTC[HQ]MMA tmem\\[UR[0-9]+\\], gdesc\\[UR[0-9]+\\]");
    CHECK(std::distance(std::sregex_iterator(sass.begin(), sass.end(), tmem_a), std::sregex_iterator()) == 3);
    CHECK(test::resource_usage(c.cubin, c.name, "LOCAL") == 0);
  }
  CHECK_THROWS_WITH(k.compile(Target::parse("sm_120a"), v), Contains("test_sm100.cpp") && Contains("tcgen05.mma with A in TMEM is not available on sm_120a"));
  // kind::i8, where the target has it (sm_100a, sm_110a).
  Kernel i8{"tcgen05_tmem_a_i8", [](Tensor<u32> a) {
    Value<uint32_t> d = a(0);
    sm100::InstrDescriptor s8{.kind = sm100::MmaKind::i8, .a = sm100::OperandType::s8, .b = sm100::OperandType::s8,
                              .d = sm100::AccumulatorType::s32, .n = 128};
    detail::tcgen05_mma_tmem_a(sm100::MmaKind::i8, d.id(), d.id(), cast<uint64_t>(d).id(), s8.encode(), Bool(true).id(), detail::Where::current());
  }};
  CompiledKernel c8 = i8.compile(Target::parse("sm_100a"), v);
  CHECK(test::contains(c8.ptx, "tcgen05.mma.cta_group::1.kind::i8 ["));
  CHECK(test::contains(test::disassemble(c8.cubin, "-sass"), "UTCIMMA tmem["));
  CHECK_THROWS_WITH(i8.compile(Target::parse("sm_103a"), v), Contains("tcgen05.mma .kind::i8 is not available on sm_103a"));
  Kernel transposed{"tcgen05_tmem_a_mn_major", [](Tensor<u32> a) {
    Value<uint32_t> d = a(0);
    sm100::InstrDescriptor mn{.kind = sm100::MmaKind::f16, .a_major = sm100::Major::mn, .n = 128};
    detail::tcgen05_mma_tmem_a(sm100::MmaKind::f16, d.id(), d.id(), cast<uint64_t>(d).id(), mn.encode(), Bool(true).id(),
                               detail::Where::current());
  }};
  CHECK_THROWS_WITH(transposed.compile(Target::parse("sm_100a"), v),
                    Contains("test_sm100.cpp") && Contains("tcgen05.mma with A in TMEM reads A K-major; the instruction descriptor says MN-major"));
}

TEST_CASE("TMEM stores in each shape are tcgen05.st and STTM", "[unit]") {
  Kernel store{"tmem_store_shapes", [](Tensor<u32> a) {
    Value<uint32_t> address = a(0), x = a(1);
    detail::tmem_store(detail::TmemShape::s32x32b, 4, address.id(), std::vector<detail::ValueId>(4, x.id()), detail::Where::current());
    detail::tmem_store(detail::TmemShape::s16x256b, 2, address.id(), std::vector<detail::ValueId>(8, x.id()), detail::Where::current());
    detail::tmem_wait_store(detail::Where::current());
    auto loaded = detail::tmem_load(detail::TmemShape::s16x128b, 4, address.id(), detail::Where::current());
    a(2) = Value<uint32_t>(loaded[7]);
  }};
  CompiledKernel k = store.compile(Target::parse("sm_100a"), test::vector_arg<uint32_t>());
  for (const char* i : {"tcgen05.st.sync.aligned.32x32b.x4.b32", "tcgen05.st.sync.aligned.16x256b.x2.b32", "tcgen05.wait::st.sync.aligned",
                        "tcgen05.ld.sync.aligned.16x128b.x4.b32"}) {
    INFO(i);
    CHECK(test::contains(k.ptx, i));
  }
  std::string sass = test::disassemble(k.cubin, "-sass");
  CHECK(test::count(sass, "STTM") == 2);
  CHECK(test::contains(sass, "LDTM"));
  Kernel wrong{"tmem_store_count", [](Tensor<u32> a) {
    Value<uint32_t> x = a(1);
    detail::tmem_store(detail::TmemShape::s16x256b, 2, x.id(), std::vector<detail::ValueId>(4, x.id()), detail::Where::current());
  }};
  CHECK_THROWS_WITH(wrong.compile(Target::parse("sm_100a"), test::vector_arg<uint32_t>()),
                    Contains("tcgen05.st.16x256b.x2 stores 8 registers per thread, not 4"));
}

TEST_CASE("tcgen05 on a target without it, and TMEM misuse, are errors at the user's line", "[unit]") {
  for (const char* t : {"sm_90a", "sm_100", "sm_120a", "sm_121f"}) {
    INFO(t);
    CHECK_THROWS_WITH(fixtures::gemm_bf16_sm100_compile(Target::parse(t)),
                      Contains("kernels/gemm/sm100.hpp"));
    CHECK_THROWS_WITH(fixtures::gemm_bf16_sm100_compile(Target::parse(t)), Contains(std::string("is not available on ") + t));
  }
  auto v = test::vector_arg<uint32_t>();
  Kernel columns{"tmem_48_columns", [](Tensor<u32> a) {
    TmemAllocation tmem(dynamic_shared_aligned<uint32_t>(16), 48);
  }};
  CHECK_THROWS_WITH(columns.compile(Target::parse("sm_100a"), v),
                    Contains("test_sm100.cpp") && Contains("a TMEM allocation is a power of two from 32 to 512 columns, not 48"));
  Kernel too_many{"tmem_1024_columns", [](Tensor<u32> a) { TmemAllocation tmem(dynamic_shared_aligned<uint32_t>(16), 1024); }};
  CHECK_THROWS_WITH(too_many.compile(Target::parse("sm_100a"), v), Contains("not 1024"));
  Kernel global_slot{"tmem_global_slot", [](Tensor<u32> a) { TmemAllocation tmem(a.data(), 32); }};
  CHECK_THROWS_WITH(global_slot.compile(Target::parse("sm_100a"), v), Contains("address slot is a word of shared memory"));
  Kernel twice{"tmem_allocated_twice", [](Tensor<u32> a) {
    TmemAllocation tmem(dynamic_shared_aligned<uint32_t>(16), 32);
    tmem.allocate();
    tmem.allocate();
  }};
  CHECK_THROWS_WITH(twice.compile(Target::parse("sm_100a"), v), Contains("test_sm100.cpp") && Contains("is made twice"));
  Kernel early{"tmem_freed_early", [](Tensor<u32> a) {
    TmemAllocation tmem(dynamic_shared_aligned<uint32_t>(16), 32);
    tmem.free(Value<uint32_t>(0u));
  }};
  CHECK_THROWS_WITH(early.compile(Target::parse("sm_100a"), v), Contains("freed before it was allocated"));
  Kernel outside{"tmem_load_outside", [](Tensor<u32> a) {
    TmemAccumulator acc{Value<uint32_t>(0u), 256};
    acc.load_row<32>(Int(0), 240);
  }};
  CHECK_THROWS_WITH(outside.compile(Target::parse("sm_100a"), v),
                    Contains("test_sm100.cpp") && Contains("a TMEM load of columns 240 to 271 reaches outside its accumulator's 256 columns (0 to 255)"));
  Kernel bad_load{"tmem_load_x3", [](Tensor<u32> a) { detail::tmem_load(detail::TmemShape::s32x32b, 3, Value<uint32_t>(0u).id(), detail::Where::current()); }};
  CHECK_THROWS_WITH(bad_load.compile(Target::parse("sm_100a"), v),
                    Contains("tcgen05.ld.32x32b repeats a power of two from 1 to 128 times (.x1 ... .x128), not 3"));
  // kind::i8 is on sm_100a and sm_110a, not on sm_103a or the family targets.
  Kernel i8{"tcgen05_i8", [](Tensor<u32> a) {
    Value<uint64_t> desc(0ull);
    const uint32_t idesc = sm100::InstrDescriptor{.kind = sm100::MmaKind::i8, .a = sm100::OperandType::s8, .b = sm100::OperandType::s8,
                                                  .d = sm100::AccumulatorType::s32}
                               .encode();
    detail::tcgen05_mma(sm100::MmaKind::i8, Value<uint32_t>(0u).id(), desc.id(), desc.id(), idesc, Bool(false).id(), sm100::CtaGroup::one,
                        detail::Where::current());
  }};
  CHECK_NOTHROW(i8.compile(Target::parse("sm_100a"), v));
  CHECK_THROWS_WITH(i8.compile(Target::parse("sm_103a"), v),
                    Contains("tcgen05.mma .kind::i8 is not available on sm_103a; it needs sm_100a or sm_110a"));
  CHECK_THROWS_WITH(i8.compile(Target::parse("sm_100f"), v), Contains("is not available on sm_100f"));
}

namespace {
/// One tcgen05.mma of the atom over 128-byte-swizzled operand tiles (one row of 128 bytes of K
/// each), committed to an mbarrier: what the kinds' SASS is read from.
template <class Atom>
void one_mma() {
  using T = typename Atom::element_type;
  constexpr int row = 128 / int(sizeof(T)), base = sizeof(T) == 4 ? 2 : sizeof(T) == 2 ? 3 : 4;  // log2 of 16 bytes' elements
  Pointer<T> a = dynamic_shared_aligned<T>(1024), b = dynamic_shared_aligned<T>(1024, 128 * 128);
  auto tile = [&](const Pointer<T>& p, int rows) { return make_tensor(p, composition(Swizzle(3, base, 3), make_layout({rows, row}, LayoutRight{}))); };
  auto [A, B] = make_umma_operands(Atom{}, tile(a, Atom::m), tile(b, Atom::n));
  Pointer<uint64_t> bar = dynamic_shared_aligned<uint64_t>(16, 128 * 128 + Atom::n * 128);
  if_(thread_idx().x == 0, [&] {
    cutejit::gemm(Atom{}, Value<uint32_t>(0u), A, B, Bool(false));
    tcgen05_commit(bar);
  });
}
}  // namespace

TEST_CASE("PipelineAsyncUmma: threads' stores are fenced for the tensor core before they arrive, and the MMA's commit frees a stage",
          "[unit]") {
  // Four warps copy each K tile of A (128 x 64) and B (64 x 64) into a two-stage ring with
  // ordinary stores; thread 128 multiplies each stage on tcgen05.mma.
  Kernel k{"async_umma", [](Tensor<bf16> a, Tensor<bf16> b, Int k_tiles) {
             using Atom = SM100_MMA_F16BF16_SS<bf16, 128, 64>;
             constexpr int stages = 2, producers = 128, a_bytes = 128 * 128, b_bytes = 64 * 128;
             launch_bounds(producers + 32);
             Pointer<int8_t> smem = dynamic_shared_aligned<int8_t>(1024);
             auto tile = [&](int64_t offset, const Int& s, int rows) {
               return fixtures::gemm_sm100::stage_tile(Pointer<bf16>((smem + (offset + s * (rows * 128))).id()), rows);
             };
             PipelineAsyncUmma ring(Pointer<uint64_t>((smem + stages * (a_bytes + b_bytes)).id()), stages, producers);
             Int t = thread_idx().x;
             if_(t == 0, [&] {
               ring.init();
               fence_mbarrier_init();
             });
             sync_threads();
             Tensor<bf16> A = make_tensor(a.data(), make_layout({128, k_tiles * 64}, LayoutRight{}));
             Tensor<bf16> B = make_tensor(b.data(), make_layout({64, k_tiles * 64}, LayoutRight{}));
             if_(t < producers, [&] {
               for_(0, k_tiles, [&](Int kt) {
                 PipelineState s = PipelineState::at(kt, stages);
                 ring.producer_acquire(s);
                 copy(local_tile(A, IntTuple{128, 64}, IntTuple{0, kt})(t, _), tile(0, s.index, 128)(t, _));
                 if_(t < 64, [&] { copy(local_tile(B, IntTuple{64, 64}, IntTuple{0, kt})(t, _), tile(stages * a_bytes, s.index, 64)(t, _)); });
                 ring.producer_commit(s);
               });
             });
             if_(t == producers, [&] {
               for_(0, k_tiles, [&](Int kt) {
                 PipelineState s = PipelineState::at(kt, stages);
                 ring.consumer_wait(s);
                 auto [sA, sB] = make_umma_operands(Atom{}, tile(0, s.index, 128), tile(stages * a_bytes, s.index, 64));
                 cutejit::gemm(Atom{}, Value<uint32_t>(0u), sA, sB, kt > 0);
                 ring.consumer_release(s);
               });
             });
           }};
  for (const char* t : {"sm_100a", "sm_103a", "sm_110a"}) {
    INFO(t);
    CompiledKernel c = k.compile(Target::parse(t), test::vector_arg<bf16>(128 * 512), test::vector_arg<bf16>(64 * 512), int32_t(8));
    // PTX: the producers' fence, then their arrival; the MMA thread's commit on the empty barrier.
    const size_t fence = c.ptx.find("fence.proxy.async.shared::cta");
    REQUIRE(fence != std::string::npos);
    CHECK(c.ptx.find("mbarrier.arrive", fence) != std::string::npos);
    CHECK(test::count(c.ptx, "tcgen05.commit") == 1);
    std::string sass = test::disassemble(c.cubin, "-sass");
    INFO(sass);
    CHECK(test::count(sass, "UTCHMMA") >= 4);  // a 128-byte K tile: four K steps of 16
    CHECK(test::count(sass, "FENCE.VIEW.ASYNC.S") >= 1);
    CHECK(test::count(sass, "UTCBAR") >= 1);
    test::check_no_local_memory(c.cubin, c.name, sass);
  }
  CHECK_THROWS_WITH(k.compile(Target::parse("sm_90a"), test::vector_arg<bf16>(128 * 512), test::vector_arg<bf16>(64 * 512), int32_t(8)),
                    Contains("test_sm100.cpp") && Contains("is not available on sm_90a"));
}

TEST_CASE("the TF32 and 8-bit integer tcgen05 atoms: kind::tf32 and kind::i8, UTCHMMA and UTCIMMA", "[unit]") {
  auto v = test::vector_arg<uint32_t>();
  Kernel tf32{"umma_tf32", [](Tensor<u32>) { one_mma<SM100_MMA_TF32_SS<128, 64>>(); }};
  Kernel s8{"umma_s8", [](Tensor<u32>) { one_mma<SM100_MMA_S8_SS<int8_t, 128, 64>>(); }};
  for (const char* t : {"sm_100a", "sm_110a"}) {
    INFO(t);
    CompiledKernel k = tf32.compile(Target::parse(t), v);
    // Four K steps of 32 bytes over a 128-byte row, each with the atom's descriptor (written out
    // in test_sm100_umma.cpp from the ISA's table).
    CHECK(test::count(k.ptx, "tcgen05.mma.cta_group::1.kind::tf32") == 4);
    CHECK(test::contains(k.ptx, std::to_string(1u << 4 | 2u << 7 | 2u << 10 | 8u << 17 | 8u << 24)));
    std::string code = test::disassemble(k.cubin, "-sass");
    INFO(code);
    CHECK(test::count(code, "UTCHMMA") >= 4);
    CompiledKernel i = s8.compile(Target::parse(t), v);
    CHECK(test::count(i.ptx, "tcgen05.mma.cta_group::1.kind::i8") == 4);
    CHECK(test::contains(i.ptx, std::to_string(2u << 4 | 1u << 7 | 1u << 10 | 8u << 17 | 8u << 24)));
    CHECK(test::count(test::disassemble(i.cubin, "-sass"), "UTCIMMA") >= 4);
  }
  // The family targets have kind::tf32 but not kind::i8, which is refused at the user's line.
  CHECK_NOTHROW(tf32.compile(Target::parse("sm_103a"), v));
  CHECK_THROWS_WITH(s8.compile(Target::parse("sm_103a"), v),
                    Contains("test_sm100.cpp") && Contains("tcgen05.mma .kind::i8 is not available on sm_103a; it needs sm_100a or sm_110a"));
}

TEST_CASE("kind::f8f6f4 with mixed FP8, FP6 and FP4 operands: the ISA's type codes in the instruction descriptor, UTCQMMA", "[unit]") {
  // The ISA's instruction descriptor for kind::f8f6f4: A's format at bits 7-9 and B's at 10-12
  // (E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5), f32 D (bit 4), N >> 3 at bit 17, M >> 4 at bit 24.
  using Fp4xFp8 = Tcgen05MmaF8F6F4SS<MxType::e2m1, MxType::e4m3, 128, 64>;
  using Fp6 = Tcgen05MmaF8F6F4SS<MxType::e3m2, MxType::e2m3, 128, 64>;
  CHECK(Fp4xFp8::instruction_descriptor() == (1u << 4 | 5u << 7 | 0u << 10 | 8u << 17 | 8u << 24));
  CHECK(Fp6::instruction_descriptor() == (1u << 4 | 4u << 7 | 3u << 10 | 8u << 17 | 8u << 24));
  CHECK(Tcgen05MmaF8F6F4SS<MxType::e5m2, MxType::e2m1, 128, 256>::instruction_descriptor() ==
        (1u << 4 | 1u << 7 | 5u << 10 | 32u << 17 | 8u << 24));
  auto v = test::vector_arg<uint32_t>();
  Kernel fp4{"umma_e2m1_e4m3", [](Tensor<u32>) { one_mma<Fp4xFp8>(); }};
  Kernel fp6{"umma_e3m2_e2m3", [](Tensor<u32>) { one_mma<Fp6>(); }};
  // Four K steps of 32 byte-wide elements over a 128-byte row, each with the atom's descriptor.
  auto check = [&](const CompiledKernel& k, uint32_t idesc) {
    CHECK(test::count(k.ptx, "tcgen05.mma.cta_group::1.kind::f8f6f4") == 4);
    CHECK(test::contains(k.ptx, std::to_string(idesc)));
    CHECK(test::count(test::disassemble(k.cubin, "-sass"), "UTCQMMA") >= 4);
  };
  for (const char* t : {"sm_100a", "sm_103a", "sm_110a"}) {
    INFO(t);
    check(fp4.compile(Target::parse(t), v), Fp4xFp8::instruction_descriptor());
    check(fp6.compile(Target::parse(t), v), Fp6::instruction_descriptor());
  }
  CHECK_THROWS_WITH(fp4.compile(Target::parse("sm_120a"), v), Contains("test_sm100.cpp") && Contains("is not available on sm_120a"));
}

TEST_CASE("cluster launch control: a work-stealing loop is try_cancel and query_cancel, UGETNEXTWORKID in SASS", "[unit]") {
  // Each CTA scales its block of 256 floats, then the blocks of the CTAs it cancels.
  Kernel steal{"clc_scale", [](Tensor<f32> x) {
    Pointer<uint32_t> response = dynamic_shared_aligned<uint32_t>(16);
    Pointer<uint64_t> barrier = dynamic_shared_aligned<uint64_t>(16, 16);
    ClcTileScheduler clc(response, barrier);
    if_(thread_idx().x == 0, [&] {
      clc.init();
      fence_mbarrier_init();
    });
    sync_threads();
    Var<int32_t> tile = clc.first_tile(), asks = 0, more = 1;
    while_([&] { return Int(more) != 0; }, [&] {
      if_(thread_idx().x == 0, [&] { clc.request(); });
      Int i = Int(tile) * 256 + thread_idx().x;
      x(i) = F32(x(i)) * 2.0f;
      auto [got, next] = clc.answer(asks);
      sync_threads();
      more = select(got, Int(1), Int(0));
      tile = next;
      asks += 1;
    });
  }};
  auto v = test::vector_arg<float>(1 << 20);
  for (const char* t : {"sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_120a", "sm_121a"}) {
    INFO(t);
    CompiledKernel k = steal.compile(Target::parse(t), v);
    CHECK(test::contains(k.ptx, "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128"));
    CHECK(test::contains(k.ptx, "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128"));
    CHECK(test::contains(k.ptx, "clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128"));
    CHECK(test::contains(test::disassemble(k.cubin, "-sass"), "UGETNEXTWORKID"));
  }
  CHECK_THROWS_WITH(steal.compile(Target::parse("sm_90a"), v),
                    Contains("test_sm100.cpp") &&
                        Contains("clusterlaunchcontrol.try_cancel is not available on sm_90a; it needs sm_100 and newer (every Blackwell target)"));
}

TEST_CASE("a tcgen05 operand off its swizzle pattern, or not the atom's, is an error at the user's line", "[unit]") {
  auto v = test::vector_arg<uint32_t>();
  using Atom = SM100_MMA_F16BF16_SS<bf16, 128, 256>;
  Kernel misaligned{"umma_misaligned", [](Tensor<u32> a) {
    Pointer<bf16> p = dynamic_shared_aligned<bf16>(1024, 512);
    UmmaOperand<bf16> op(fixtures::gemm_sm100::stage_tile<bf16>(p, 128), 128, "A");
  }};
  CHECK_THROWS_WITH(misaligned.compile(Target::parse("sm_100a"), v),
                    Contains("test_sm100.cpp") &&
                        Contains("tcgen05.mma's A tile (128-byte swizzle) must start 1024-byte aligned, on its swizzle pattern; "
                                 "its address is known to be only 512-byte aligned"));
  Kernel wrong_major{"umma_wrong_major", [](Tensor<u32> a) {
    Pointer<bf16> p = dynamic_shared_aligned<bf16>(1024);
    Layout mn_major(IntTuple{IntTuple{64, 2}, 64}, IntTuple{IntTuple{1, 64 * 64}, 64});
    auto tile = make_tensor(p, composition(Swizzle(3, 3, 3), mn_major));
    make_umma_operands(Atom{}, tile, fixtures::gemm_sm100::stage_tile<bf16>(p, 256));
  }};
  CHECK_THROWS_WITH(wrong_major.compile(Target::parse("sm_100a"), v),
                    Contains("test_sm100.cpp") && Contains("the atom reads A K-major, but the tile is MN-major"));
  Kernel global{"umma_global", [](Tensor<u32> a) {
    UmmaOperand<bf16> op(make_tensor(Pointer<bf16>(a.data().id()), make_layout({128, 64}, LayoutRight{})), 128, "B");
  }};
  CHECK_THROWS_WITH(global.compile(Target::parse("sm_100a"), v), Contains("tcgen05.mma's B must be in shared memory"));
}
