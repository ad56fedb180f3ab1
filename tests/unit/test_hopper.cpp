// Hopper building blocks cross-compiled for sm_90a (no GPU needed): mbarriers, fences, named
// barriers, TMA with a grid-constant tensor map, wgmma; the bad inputs each with the message a
// user reads.
#include <catch2/catch.hpp>

#include "gemm_bf16.hpp"
#include "gemm_bf16_bias_gelu.hpp"
#include "gemm_bf16_nn.hpp"
#include "gemm_fp8.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::contains;

namespace {
const Target sm90a = Target::parse("sm_90a");

TensorMap<bf16> tile_map(uint32_t rows = 64, uint32_t cols = 64, TmaSwizzle s = TmaSwizzle::bytes128) {
  return TensorMap<bf16>::for_compile(2, {rows, cols}, s);
}

// A TMA round trip: load a tile into shared memory on an mbarrier, store it back elsewhere.
Kernel tma_copy{"tma_copy", [](TmaDescriptor<bf16> in, TmaDescriptor<bf16> out) {
  Pointer<bf16> tile = dynamic_shared_aligned<bf16>(1024);
  Pointer<uint64_t> bar = dynamic_shared_aligned<uint64_t>(1024, in.box_bytes());
  Int row = block_idx().x * in.box(0);
  if_(thread_idx().x == 0, [&] {
    in.prefetch();
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
    mbarrier_arrive_expect_tx(bar, in.box_bytes());
    in.load(tile, bar, {row, 0});
    mbarrier_wait(bar, 0);
    out.store(tile, {row, 0});
    tma_store_commit();
    tma_store_wait<0>();
  });
}};
}  // namespace

TEST_CASE("mbarriers, fences and named barriers reach the PTX", "[unit]") {
  Kernel k{"barriers", [](Tensor<i32> a) {
    Pointer<uint64_t> bar = shared_array<uint64_t>(2, 8);
    if_(thread_idx().x == 0, [&] { mbarrier_init(bar, 128); });
    fence_mbarrier_init();
    sync_threads();
    mbarrier_arrive(bar);
    mbarrier_arrive_expect_tx(bar + 1, 1024);
    a(0) = cast<int32_t>(mbarrier_try_wait(bar, 1));
    mbarrier_wait(bar, 0);
    fence_proxy_async_shared();
    named_barrier_sync(1, 128);
    named_barrier_arrive(2, 256);
  }};
  std::string ptx = k.compile(sm90a, test::vector_arg<int32_t>()).ptx;
  for (const char* i : {"mbarrier.init.shared.b64", "mbarrier.arrive.shared.b64", "mbarrier.arrive.expect_tx.shared.b64",
                        "mbarrier.try_wait.parity.shared.b64", "fence.mbarrier_init.release.cluster", "fence.proxy.async.shared::cta",
                        "bar.sync 	1, 128", "bar.arrive 2, 256"}) {
    INFO(i);
    CHECK(contains(ptx, i));
  }
}

TEST_CASE("a TMA copy: grid-constant tensor maps, bulk tensor load on an mbarrier, store and bulk groups", "[unit]") {
  std::string ptx = tma_copy.compile(sm90a, tile_map(), tile_map()).ptx;
  // The tensor maps are 64-byte-aligned 128-byte parameters, addressed in place.
  CHECK(contains(ptx, ".param .align 64 .b8 tma_copy_param_0[128]"));
  CHECK(contains(ptx, ".param .align 64 .b8 tma_copy_param_1[128]"));
  CHECK(contains(ptx, "cvta.param.u64"));
  for (const char* i : {"cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes",
                        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group", "cp.async.bulk.commit_group",
                        "cp.async.bulk.wait_group 	0", "prefetch.tensormap", "mbarrier.try_wait.parity"}) {
    INFO(i);
    CHECK(contains(ptx, i));
  }
  // Line directives only: a `, debug` target would put ptxas in debug mode.
  CHECK(contains(ptx, ".target sm_90a\n"));
}

TEST_CASE("the tensor map's box and swizzle are part of the specialization", "[unit]") {
  std::string a = tma_copy.compile(sm90a, tile_map(64, 64), tile_map(64, 64)).ptx;
  CHECK(tma_copy.compile(sm90a, tile_map(64, 64), tile_map(64, 64)).ptx == a);
  CHECK(tma_copy.compile(sm90a, tile_map(128, 64), tile_map(128, 64)).ptx != a);  // 16 KB expected, not 8 KB
}

TEST_CASE("wgmma m64nNk16 for bf16 and f16, N in {64, 128, 256}", "[unit]") {
  Kernel k{"wgmma_shapes", [](Tensor<f32> out) {
    Pointer<bf16> a = dynamic_shared_aligned<bf16>(1024);
    Pointer<bf16> b = dynamic_shared_aligned<bf16>(1024, 16384);
    WgmmaOperand<bf16> A(a, TmaSwizzle::bytes128), B(b, TmaSwizzle::bytes128);
    WgmmaOperand<f16> H(Pointer<f16>(a.id()), TmaSwizzle::bytes64);
    Tensor<float> c64 = make_rmem_tensor<float>(IntTuple{32});
    Tensor<float> c128 = make_rmem_tensor<float>(IntTuple{64});
    Tensor<float> c256 = make_rmem_tensor<float>(IntTuple{128});
    fill(c64, 0.0f), fill(c128, 0.0f), fill(c256, 0.0f);
    wgmma_fence();
    wgmma<bf16>(c64, A.slice(0, 0), B.slice(0, 1));
    wgmma<bf16>(c128, A.slice(8, 3), B.slice(0, 0));
    wgmma<bf16>(c256, A.slice(0, 0), B.slice(0, 0));
    wgmma<f16>(c128, H.slice(0, 1), H.slice(0, 0));
    wgmma_commit_group();
    wgmma_wait_group(0);
    wgmma_fence_operands(c64), wgmma_fence_operands(c128), wgmma_fence_operands(c256);
    Int t = thread_idx().x;
    out(t) = c64(0) + c128(63) + c256(127);
  }};
  std::string ptx = k.compile(sm90a, test::vector_arg<float>()).ptx;
  for (const char* i : {"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
                        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
                        "wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 	0"}) {
    INFO(i);
    CHECK(contains(ptx, i));
  }
}

TEST_CASE("the BF16 GEMM example: TMA ring, warp-specialised wgmma, register rebalancing, no spills", "[unit]") {
  CompiledKernel k = fixtures::gemm_bf16_check().compile(sm90a);
  CHECK(contains(k.ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
  // setmaxnreg needs a register cap at entry: launch_bounds(384, 1) gives ptxas one.
  CHECK(contains(k.ptx, ".maxntid 384, 1, 1"));
  CHECK(contains(k.ptx, ".minnctapersm 1"));
  CHECK(contains(k.ptx, "setmaxnreg.dec.sync.aligned.u32 	40"));
  CHECK(contains(k.ptx, "setmaxnreg.inc.sync.aligned.u32 	232"));
  CHECK(contains(k.ptx, "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"));
  CHECK(contains(k.ptx, "mbarrier.try_wait.parity.shared.b64"));
  CHECK(contains(k.ptx, "wgmma.wait_group.sync.aligned 	1"));
  CHECK_FALSE(contains(k.ptx, ".local"));
  CHECK(test::cubin_contains(k.cubin, "-arch sm_90a"));
  test::check_wgmma_not_serialized(k.ptx, k.cubin);
}

namespace {
int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("the FP8 GEMM example: e4m3 TMA boxes of 128 x 128 bytes, four m64n256k32 per stage, scales in the epilogue",
          "[unit]") {
  CompiledKernel k = fixtures::gemm_fp8_check().compile(sm90a);
  // Four k32 steps cover a stage's 128 K elements; the K loop is not unrolled (a multiple of
  // four, should LLVM ever peel it).
  int mmas = count(k.ptx, "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3");
  CHECK(mmas >= 4);
  CHECK(mmas % 4 == 0);
  CHECK_FALSE(contains(k.ptx, "k16.f32"));
  CHECK(contains(k.ptx, ".maxntid 384, 1, 1"));
  CHECK(contains(k.ptx, "setmaxnreg.dec.sync.aligned.u32 	40"));
  CHECK(contains(k.ptx, "setmaxnreg.inc.sync.aligned.u32 	232"));
  CHECK(contains(k.ptx, "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"));
  // A stage is 48 KB either way: 16 KB of A plus two 16 KB halves of B armed on the barrier.
  CHECK(kernels::gemm_sm90::a_stage_bytes == 128 * 128);
  CHECK(kernels::gemm_sm90::Config{}.shared_bytes() <= 227u * 1024u);
  CHECK_FALSE(contains(k.ptx, ".local"));
  CHECK(test::cubin_contains(k.cubin, "-arch sm_90a"));
  // Two float parameters (the scales) follow the tensor maps and C.
  CHECK(contains(k.ptx, ".param .f32 gemm_fp8_param_"));
  test::check_wgmma_not_serialized(k.ptx, k.cubin);
}

namespace {
/// The operands after the accumulator braces of every wgmma.mma_async in `ptx`, spaces removed:
/// "desc_a,desc_b,p,scale_a,scale_b[,trans_a,trans_b];".
std::vector<std::string> wgmma_tails(const std::string& ptx) {
  std::vector<std::string> out;
  for (size_t at = ptx.find("wgmma.mma_async"); at != std::string::npos; at = ptx.find("wgmma.mma_async", at + 1)) {
    size_t close = ptx.find('}', at), end = ptx.find(';', at);
    std::string tail;
    for (char ch : ptx.substr(close + 1, end + 1 - (close + 1)))
      if (ch != ' ' && ch != '\t') tail += ch;
    out.push_back(tail);
  }
  return out;
}
/// Whether `ptx` has wgmmas and every one ends with the transpose immediates `a`, `b`
/// (imm-trans-a, imm-trans-b: 1 reads that operand MN-major).
bool transposes_are(const std::string& ptx, int a, int b) {
  std::vector<std::string> tails = wgmma_tails(ptx);
  std::string want = "," + std::to_string(a) + "," + std::to_string(b) + ";";
  for (const std::string& t : tails) {
    UNSCOPED_INFO("wgmma operands " << t);
    if (t.size() < want.size() || t.compare(t.size() - want.size(), want.size(), want) != 0) return false;
  }
  return !tails.empty();
}
/// A descriptor's constant fields as the PTX ISA lays them out: leading byte offset >> 4 in bits
/// 16-29, stride byte offset >> 4 in bits 32-45, the 128-byte swizzle (mode 1) in bits 62-63.
std::string swizzle128_fields(uint64_t leading_bytes, uint64_t stride_bytes) {
  return std::to_string((leading_bytes >> 4) << 16 | (stride_bytes >> 4) << 32 | uint64_t(1) << 62);
}

// Zeroes a thread's 128 accumulators, issues `wgmmas(acc)` as one batch, waits for it and
// stores the accumulators to `out` (so that nothing is optimised away).
template <class Issue>
void one_batch(const Tensor<float>& acc, const Tensor<f32>& out, Issue&& wgmmas) {
  fill(acc, 0.0f);
  wgmma_fence();
  wgmmas(acc);
  wgmma_commit_group();
  wgmma_wait_group(0);
  wgmma_fence_operands(acc);
  for (int i = 0; i < 128; ++i) out(thread_idx().x * 128 + i) = F32(acc(i));
}

// A wgmma with A (64 x 16) and B (16 x 256) from shared memory, each K-major or MN-major;
// MN-major operands are 64 K rows per 128-byte chunk, as a TMA box of 64 x 64 bf16 leaves them.
template <WgmmaMajor AMajor, WgmmaMajor BMajor>
std::string one_wgmma_ptx() {
  Kernel k{"one_wgmma", [](Tensor<f32> out) {
    auto operand = [](const Pointer<bf16>& tile, WgmmaMajor major) {
      return major == WgmmaMajor::k ? WgmmaOperand<bf16>(tile, TmaSwizzle::bytes128)
                                    : WgmmaOperand<bf16>::mn_major(tile, TmaSwizzle::bytes128, 64);
    };
    WgmmaOperand<bf16> A = operand(dynamic_shared_aligned<bf16>(1024), AMajor);
    WgmmaOperand<bf16> B = operand(dynamic_shared_aligned<bf16>(1024, 8192), BMajor);
    one_batch(make_rmem_tensor<float>(IntTuple{128}), out, [&](const Tensor<float>& acc) { wgmma<bf16>(acc, A.slice(0, 0), B.slice(0, 0)); });
  }};
  return k.compile(sm90a, test::vector_arg<float>(128 * 128)).ptx;
}
}  // namespace

TEST_CASE("MN-major bf16 and f16 wgmma operands: the transpose bits and the MN-major descriptor strides", "[unit]") {
  // Transpose bits: K-major operands have none (the TN layout), each MN-major one sets its own.
  CHECK(transposes_are(one_wgmma_ptx<WgmmaMajor::k, WgmmaMajor::k>(), 0, 0));
  CHECK(transposes_are(one_wgmma_ptx<WgmmaMajor::k, WgmmaMajor::mn>(), 0, 1));
  CHECK(transposes_are(one_wgmma_ptx<WgmmaMajor::mn, WgmmaMajor::k>(), 1, 0));
  std::string both = one_wgmma_ptx<WgmmaMajor::mn, WgmmaMajor::mn>();
  CHECK(transposes_are(both, 1, 1));
  CHECK(contains(both, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
  // MN-major, 128-byte swizzle: the 8-row groups of K are 1024 bytes apart (stride byte offset),
  // the 64-wide chunks of M or N 64 rows x 128 bytes apart (leading byte offset). A K-major
  // tile has a stride byte offset of 1024 and an unused leading one of 16.
  CHECK(contains(both, swizzle128_fields(64 * 128, 1024)));
  CHECK_FALSE(contains(both, swizzle128_fields(16, 1024)));
  CHECK(contains(one_wgmma_ptx<WgmmaMajor::k, WgmmaMajor::k>(), swizzle128_fields(16, 1024)));

  // f16, 64-byte swizzle, 32 K rows per chunk: two K steps, the second 16 rows x 64 bytes on.
  Kernel half{"wgmma_f16_mn", [](Tensor<f32> out) {
    WgmmaOperand<f16> A = WgmmaOperand<f16>::mn_major(dynamic_shared_aligned<f16>(1024), TmaSwizzle::bytes64, 32);
    WgmmaOperand<f16> B(dynamic_shared_aligned<f16>(1024, 4096), TmaSwizzle::bytes64);
    Tensor<float> acc = make_rmem_tensor<float>(IntTuple{64});
    fill(acc, 0.0f);
    wgmma_fence();
    for (int k = 0; k < A.k_steps(); ++k) wgmma<f16>(acc, A.slice(0, k), B.slice(0, k));
    wgmma_commit_group();
    wgmma_wait_group(0);
    wgmma_fence_operands(acc);
    out(thread_idx().x) = F32(acc(0));
  }};
  std::string ptx = half.compile(sm90a, test::vector_arg<float>(128)).ptx;
  CHECK(count(ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 2);
  CHECK(transposes_are(ptx, 1, 0));
}

namespace {
// The same wgmma with its operands given as shared-memory tensors in the layouts TMA boxes
// leave (wgmma_tile_layout): the descriptor's fields and the transpose bits come from them.
template <WgmmaMajor AMajor, WgmmaMajor BMajor>
std::string one_wgmma_from_tensors_ptx() {
  Kernel k{"one_wgmma_tensors", [](Tensor<f32> out) {
    Tensor<bf16> a = make_tensor(dynamic_shared_aligned<bf16>(1024), wgmma_tile_layout<bf16>(AMajor, TmaSwizzle::bytes128, 64, 64));
    Tensor<bf16> b = make_tensor(dynamic_shared_aligned<bf16>(1024, 8192), wgmma_tile_layout<bf16>(BMajor, TmaSwizzle::bytes128, 256, 64));
    auto tiled = make_tiled_mma(WgmmaSS<bf16, 256, AMajor, BMajor>{}, make_layout({1, 1, 1}));
    one_batch(tiled.get_slice(thread_idx().x).partition_fragment_C({64, 256}), out,
              [&](const Tensor<float>& acc) { gemm(tiled, acc, a, b); });
  }};
  return k.compile(sm90a, test::vector_arg<float>(128 * 128)).ptx;
}
}  // namespace

TEST_CASE("wgmma operands from swizzled shared tensors: fields and transpose bits from the layouts", "[unit]") {
  std::string kk = one_wgmma_from_tensors_ptx<WgmmaMajor::k, WgmmaMajor::k>();
  CHECK(count(kk, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16") == 4);  // 64 elements of K: four k16 steps
  CHECK(transposes_are(kk, 0, 0));
  CHECK(contains(kk, swizzle128_fields(16, 1024)));
  // B MN-major: four 64-column chunks, each 64 K rows of 128 bytes (8 KB apart).
  std::string kn = one_wgmma_from_tensors_ptx<WgmmaMajor::k, WgmmaMajor::mn>();
  CHECK(transposes_are(kn, 0, 1));
  CHECK(contains(kn, swizzle128_fields(64 * 128, 1024)));
  std::string nk = one_wgmma_from_tensors_ptx<WgmmaMajor::mn, WgmmaMajor::k>();
  CHECK(transposes_are(nk, 1, 0));
}

TEST_CASE("shared tensors wgmma cannot read are trace-time errors naming the line", "[unit]") {
  Kernel padded{"wgmma_padded", [](Tensor<f32> out) {
    // Rows 72 elements apart (padding, as for ldmatrix): no descriptor reads that.
    Tensor<bf16> a = make_tensor(dynamic_shared_aligned<bf16>(1024), Layout(IntTuple{64, 64}, IntTuple{72, 1}));
    WgmmaOperand<bf16> A(a, "A");
  }};
  CHECK_THROWS_WITH(padded.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_hopper.cpp") && Contains("wgmma's A tile") && Contains("is not in a layout the tensor core reads"));
  Kernel fp8{"wgmma_fp8_tensor_mn", [](Tensor<f32> out) {
    Tensor<f8e4m3> b = make_tensor(dynamic_shared_aligned<f8e4m3>(1024),
                                   wgmma_tile_layout<f8e4m3>(WgmmaMajor::mn, TmaSwizzle::bytes128, 128, 64));
    WgmmaOperand<f8e4m3> B(b, "B");
  }};
  CHECK_THROWS_WITH(fp8.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_hopper.cpp") && Contains("wgmma's B is MN-major (transposed), which wgmma reads for bf16 and f16 only"));
  Kernel off{"wgmma_slice_off_pattern", [](Tensor<f32> out) {
    Tensor<bf16> a = make_tensor(dynamic_shared_aligned<bf16>(1024), wgmma_tile_layout<bf16>(WgmmaMajor::k, TmaSwizzle::bytes128, 64, 64));
    WgmmaOperand<bf16>(a, "A").slice(4, 0);
  }};
  CHECK_THROWS_WITH(off.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_hopper.cpp") && Contains("lies on its 1024-byte swizzle pattern (a multiple of 8 below 64), not 4"));
}

TEST_CASE("bad MN-major wgmma operands are trace-time errors naming the line", "[unit]") {
  Kernel fp8{"fp8_mn_major", [](Tensor<f32> a) {
    WgmmaOperand<f8e4m3>::mn_major(dynamic_shared_aligned<f8e4m3>(1024), TmaSwizzle::bytes128, 64);
  }};
  CHECK_THROWS_WITH(fp8.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_hopper.cpp") && Contains("an MN-major (transposed) wgmma operand must be bf16 or f16; wgmma reads "
                                                            "f8e4m3 operands K-major only"));
  // Below the operand classes: the instruction itself refuses transposed FP8 operands.
  Kernel fp8_raw{"fp8_transposed_mma", [](Tensor<f32> a) {
    Tensor<float> acc = make_rmem_tensor<float>(IntTuple{32});
    detail::wgmma_mma(DType::f8e5m2, 64, Value<uint64_t>(0ull).id(), Value<uint64_t>(0ull).id(), acc.data().id(), false, true,
                      detail::Where::current());
  }};
  CHECK_THROWS_WITH(fp8_raw.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_hopper.cpp") && Contains("wgmma with f8e5m2 operands reads them K-major only; an MN-major "
                                                            "(transposed) B needs bf16 or f16"));
  Kernel unswizzled{"mn_unswizzled", [](Tensor<f32> a) {
    WgmmaOperand<bf16>::mn_major(dynamic_shared_aligned<bf16>(1024), TmaSwizzle::none, 64);
  }};
  CHECK_THROWS_WITH(unswizzled.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_hopper.cpp") && Contains("an MN-major wgmma operand tile needs a 32, 64 or 128-byte swizzle"));
  // A box row of 32 bf16 (64 bytes) under a 128-byte swizzle is not one chunk per span.
  Kernel narrow{"mn_narrow_box", [](TmaDescriptor<bf16> map) {
    WgmmaOperand<bf16>::mn_major(dynamic_shared_aligned<bf16>(1024), map);
  }};
  CHECK_THROWS_WITH(narrow.compile(sm90a, tile_map(64, 32, TmaSwizzle::bytes128)),
                    Contains("test_hopper.cpp") && Contains("the tensor map's box rows are 64 bytes but its swizzle is 128 bytes; an "
                                                            "MN-major wgmma operand needs box rows of exactly one swizzle span"));
  Kernel map_unswizzled{"mn_map_unswizzled", [](TmaDescriptor<bf16> map) {
    WgmmaOperand<bf16>::mn_major(dynamic_shared_aligned<bf16>(1024), map);
  }};
  CHECK_THROWS_WITH(map_unswizzled.compile(sm90a, tile_map(64, 64, TmaSwizzle::none)),
                    Contains("an MN-major wgmma operand tile needs a 32, 64 or 128-byte swizzle"));
  Kernel rows{"mn_rows", [](Tensor<f32> a) {
    WgmmaOperand<bf16>::mn_major(dynamic_shared_aligned<bf16>(1024), TmaSwizzle::bytes128, 24);
  }};
  CHECK_THROWS_WITH(rows.compile(sm90a, test::vector_arg<float>()),
                    Contains("an MN-major wgmma operand's chunks hold a positive multiple of 16 rows of K (one MMA's K), not 24"));
  Kernel start{"mn_start", [](Tensor<f32> a) {
    WgmmaOperand<bf16>::mn_major(dynamic_shared_aligned<bf16>(1024), TmaSwizzle::bytes128, 64).slice(32, 0);
  }};
  CHECK_THROWS_WITH(start.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_hopper.cpp") && Contains("an MN-major wgmma operand starts at an M or N index that is a multiple of "
                                                            "its chunk width 64 (one 128-byte swizzle span), not 32"));
  Kernel k_step{"mn_k_step", [](Tensor<f32> a) {
    WgmmaOperand<bf16>::mn_major(dynamic_shared_aligned<bf16>(1024), TmaSwizzle::bytes128, 32).slice(0, 2);
  }};
  CHECK_THROWS_WITH(k_step.compile(sm90a, test::vector_arg<float>()), Contains("k step 2 is outside this tile's 2 steps"));
  Kernel unaligned{"mn_unaligned", [](Tensor<f32> a) {
    WgmmaOperand<bf16>::mn_major(dynamic_shared<bf16>(), TmaSwizzle::bytes128, 64);
  }};
  CHECK_THROWS_WITH(unaligned.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_hopper.cpp") && Contains("a wgmma operand tile with a 128-byte swizzle must be 1024-byte aligned"));
}

TEST_CASE("the GEMM layouts: row-major B (nn) and K x M A (tn, tt) read MN-major tiles with the transpose bits", "[unit]") {
  std::string tn = fixtures::gemm_bf16_check().compile(sm90a).ptx;
  std::string nn = fixtures::gemm_bf16_nn_check().compile(sm90a).ptx;
  std::string at_b = fixtures::gemm_bf16_layout_check<WgmmaMajor::mn, WgmmaMajor::mn>(256, 384, 512).compile(sm90a).ptx;
  std::string at_bt = fixtures::gemm_bf16_layout_check<WgmmaMajor::mn, WgmmaMajor::k>(256, 384, 512).compile(sm90a).ptx;
  CHECK(transposes_are(tn, 0, 0));
  CHECK(transposes_are(nn, 0, 1));
  CHECK(transposes_are(at_b, 1, 1));
  CHECK(transposes_are(at_bt, 1, 0));
  // TMA loads per stage: A is one 128 x 64 box K-major or two 64 x 64 boxes MN-major; B two
  // 128 x 64 boxes K-major or four 64 x 64 boxes MN-major.
  const std::string load = "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes";
  CHECK(count(tn, load) == 3);
  CHECK(count(nn, load) == 5);
  CHECK(count(at_b, load) == 6);
  CHECK(count(at_bt, load) == 4);
  for (const std::string* ptx : {&nn, &at_b, &at_bt}) {
    int mmas = count(*ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16");
    CHECK(mmas >= 4);
    CHECK(mmas % 4 == 0);
    CHECK(contains(*ptx, "setmaxnreg.inc.sync.aligned.u32 	232"));
    CHECK_FALSE(contains(*ptx, ".local"));
  }
  // B's MN-major descriptor: 64 K rows per 64-column chunk.
  CHECK(contains(nn, swizzle128_fields(64 * 128, 1024)));
}

TEST_CASE("the epilogue hook: the identity adds no code, a fused epilogue is traced into the kernel", "[unit]") {
  std::string plain = fixtures::gemm_bf16_check().compile(sm90a).ptx;
  std::string fused = fixtures::gemm_bf16_bias_gelu_check().compile(sm90a).ptx;
  // gemm_bf16 reads no bias; the fused kernel converts its bias values to f32.
  CHECK_FALSE(contains(plain, "cvt.f32.bf16"));
  CHECK(contains(fused, "cvt.f32.bf16"));
  // Both store the tile through shared memory: 16 stmatrix.x4 (64 x 256 values a warpgroup) and
  // four TMA stores, no store to global memory of their own.
  for (const std::string* ptx : {&plain, &fused}) {
    CHECK(count(*ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16") == 16);
    CHECK(count(*ptx, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group") == 4);
    CHECK_FALSE(contains(*ptx, "st.global"));
  }
  // Its 128 values lie in 64 columns (two rows each): because the epilogue runs on a chunk's
  // values before any is stored, the two rows' loads of a column's bias are one load.
  CHECK(count(fused, "ld.global.nc.b16") == 64);
  CHECK(contains(fused, ".maxntid 384, 1, 1"));
  CHECK_FALSE(contains(fused, ".local"));
}

TEST_CASE("Hopper instructions on targets without them: trace-time errors naming op, target and line", "[unit]") {
  auto maps = [] { return std::make_pair(tile_map(), tile_map()); };
  auto [in, out] = maps();
  CHECK_THROWS_WITH(tma_copy.compile(Target::parse("sm_80"), in, out),
                    Contains("test_hopper.cpp") && Contains("in kernel 'tma_copy' (sm_80)") &&
                        Contains("prefetch.tensormap is not available on sm_80; it needs sm_90 and newer"));
  Kernel tx{"expect_tx", [](Tensor<i32> a) { mbarrier_arrive_expect_tx(shared_array<uint64_t>(1, 8), 64); }};
  CHECK_THROWS_WITH(tx.compile(Target::parse("sm_86"), test::vector_arg<int32_t>()),
                    Contains("mbarrier.arrive.expect_tx is not available on sm_86; it needs sm_90 and newer"));

  Kernel mma{"uses_wgmma_mma", [](Tensor<f32> a) {
    Tensor<float> acc = make_rmem_tensor<float>(IntTuple{32});
    wgmma<bf16>(acc, Value<uint64_t>(0ull), Value<uint64_t>(0ull));
  }};
  for (const char* t : {"sm_80", "sm_90", "sm_100a", "sm_120a"}) {
    INFO(t);
    CHECK_THROWS_WITH(mma.compile(Target::parse(t), test::vector_arg<float>()),
                      Contains("test_hopper.cpp") && Contains(std::string("wgmma.mma_async is not available on ") + t + "; it needs sm_90a only"));
  }
  // The GEMMs share one kernel body (kernels/gemm/sm90.hpp), where the instruction is.
  CHECK_THROWS_WITH(fixtures::gemm_bf16_check().compile(Target::parse("sm_120a")),
                    Contains("kernels/gemm/sm90.hpp") && Contains("is not available on sm_120a; it needs sm_90a only"));
  for (const char* t : {"sm_80", "sm_100a", "sm_120a"}) {
    INFO(t);
    CHECK_THROWS_WITH(fixtures::gemm_fp8_check().compile(Target::parse(t)),
                      Contains("kernels/gemm/sm90.hpp") && Contains(std::string("is not available on ") + t));
  }
}

TEST_CASE("launch_bounds: .maxntid and .minnctapersm in the PTX, bad bounds an error", "[unit]") {
  Kernel bounded{"bounded", [](Tensor<f32> a) {
    launch_bounds(256, 2);
    a(thread_idx().x) = 1.0f;
  }};
  std::string ptx = bounded.compile(sm90a, test::vector_arg<float>()).ptx;
  CHECK(contains(ptx, ".maxntid 256, 1, 1"));
  CHECK(contains(ptx, ".minnctapersm 2"));
  Kernel too_many{"too_many_threads", [](Tensor<f32> a) { launch_bounds(2048); }};
  CHECK_THROWS_WITH(too_many.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_hopper.cpp") &&
                        Contains("launch_bounds needs 1 to 1024 threads and at least one block per multiprocessor, not 2048 and 1"));
}

TEST_CASE("bad wgmma operands and barriers are trace-time errors", "[unit]") {
  Kernel unaligned{"unaligned_operand", [](Tensor<f32> a) {
    WgmmaOperand<bf16> A(dynamic_shared<bf16>(), TmaSwizzle::bytes128);
  }};
  CHECK_THROWS_WITH(unaligned.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_hopper.cpp") &&
                        Contains("a wgmma operand tile with a 128-byte swizzle must be 1024-byte aligned; its address is known to be only 16-byte aligned"));
  Kernel unswizzled{"unswizzled_operand", [](Tensor<f32> a) {
    WgmmaOperand<bf16> A(dynamic_shared_aligned<bf16>(1024), TmaSwizzle::none);
  }};
  CHECK_THROWS_WITH(unswizzled.compile(sm90a, test::vector_arg<float>()), Contains("a wgmma operand tile needs a 32, 64 or 128-byte swizzle"));
  Kernel k_step{"bad_k_step", [](Tensor<f32> a) {
    WgmmaOperand<bf16> A(dynamic_shared_aligned<bf16>(1024), TmaSwizzle::bytes64);
    A.slice(0, 2);
  }};
  CHECK_THROWS_WITH(k_step.compile(sm90a, test::vector_arg<float>()), Contains("k step 2 is outside this tile's 2 steps"));
  Kernel named{"bad_named_barrier", [](Tensor<f32> a) { named_barrier_sync(1, 100); }};
  CHECK_THROWS_WITH(named.compile(sm90a, test::vector_arg<float>()),
                    Contains("a named barrier's thread count must be a positive multiple of 32 (whole warps), not 100"));
  Kernel coords{"bad_coords", [](TmaDescriptor<bf16> d) {
    d.load(dynamic_shared_aligned<bf16>(1024), dynamic_shared_aligned<uint64_t>(1024, 8192), {0});
  }};
  CHECK_THROWS_WITH(coords.compile(sm90a, tile_map()), Contains("test_hopper.cpp") &&
                                                          Contains("a TMA copy of a rank-2 tensor map needs 2 coordinates, not 1"));
}

TEST_CASE("tensor maps: bad boxes, swizzles, element types and tensors are errors before the driver is called", "[unit]") {
  CHECK_THROWS_WITH(TensorMap<bf16>::for_compile(2, {64, 300}, TmaSwizzle::none),
                    Contains("test_hopper.cpp") && Contains("box extent 300 of mode 1 is not in 1..256"));
  CHECK_THROWS_WITH(TensorMap<bf16>::for_compile(2, {64, 128}, TmaSwizzle::bytes128),
                    Contains("the box's contiguous (last) mode spans 256 bytes, more than the 128-byte swizzle span"));
  CHECK_THROWS_WITH(TensorMap<bf16>::for_compile(2, {64, 4}, TmaSwizzle::none),
                    Contains("the box's contiguous (last) mode spans 8 bytes; it must be a multiple of 16"));
  CHECK_THROWS_WITH(TensorMap<bf16>::for_compile(2, {64}, TmaSwizzle::none),
                    Contains("the box has 1 extent(s) but the tensor has 2 mode(s)"));
  CHECK_THROWS_WITH(TensorMap<bool>::for_compile(1, {16}, TmaSwizzle::none), Contains("the copy engine cannot move elements of type"));

  auto view = [](uint64_t ptr, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
    return DeviceTensor<bf16>::make(ptr, std::array<int64_t, 2>{rows, cols}, std::array<int64_t, 2>{row_stride, col_stride});
  };
  CHECK_THROWS_WITH(make_tensor_map(view(0x1008, 256, 256, 256, 1), {64, 64}, TmaSwizzle::bytes128),
                    Contains("test_hopper.cpp") && Contains("the tensor's base address must be 16-byte aligned (it is 8 bytes past)"));
  CHECK_THROWS_WITH(make_tensor_map(view(0x1000, 256, 256, 1, 256), {64, 64}, TmaSwizzle::bytes128),
                    Contains("the tensor's last mode must be contiguous (stride 1), not stride 256"));
  CHECK_THROWS_WITH(make_tensor_map(view(0x1000, 256, 260, 260, 1), {64, 64}, TmaSwizzle::bytes128),
                    Contains("the stride of mode 0 is 520 bytes; TMA needs positive multiples of 16 below 2^40"));
}

TEST_CASE("a compile-only tensor map cannot be launched", "[unit]") {
  // Checked before any driver call, so it fails the same way with or without a GPU.
  CHECK_THROWS_WITH(detail::KernelParam<TmaDescriptor<bf16>>::check(tile_map(), "k", 0),
                    Contains("argument 0 of kernel 'k' is a tensor map made only for compiling"));
}

TEST_CASE("the GEMMs take any shape whose rows TMA can address, and name the kernel and shape otherwise", "[unit]") {
  using kernels::gemm_sm90::check_shape;
  // Smaller than one tile, ragged, and large: the tiles on the edges overhang.
  CHECK_NOTHROW(check_shape<bf16>("gemm_bf16", 1, 8, 8));
  CHECK_NOTHROW(check_shape<bf16>("gemm_bf16", 1000, 1000, 1000));
  CHECK_NOTHROW(check_shape<f8e4m3>("gemm_fp8", 100, 200, 144));
  CHECK_NOTHROW(check_shape<bf16, WgmmaMajor::mn, WgmmaMajor::mn>("gemm_bf16_tn", 104, 200, 72));
  const std::string rows = " (TMA reads and writes rows that start 16-byte multiples apart), not ";
  CHECK_THROWS_WITH(check_shape<bf16>("gemm_bf16", 200, 100, 64),
                    Contains("gemm_bf16 needs M, N and K from 1 to 2^31 - 256 with N a multiple of 8 and K a multiple of 8" + rows +
                             "200 x 100 x 64"));
  CHECK_THROWS_WITH(check_shape<bf16>("gemm_bf16", 128, 128, 0), Contains(rows + "128 x 128 x 0"));
  CHECK_THROWS_WITH(check_shape<bf16>("gemm_bf16", int64_t(1) << 31, 128, 64), Contains(rows + "2147483648 x 128 x 64"));
  CHECK_THROWS_WITH(check_shape<f8e4m3>("gemm_fp8", 256, 128, 40), Contains("with N a multiple of 8 and K a multiple of 16" + rows));
  // A stored K x M: its rows are M long, and K is no row's length.
  CHECK_THROWS_WITH((check_shape<bf16, WgmmaMajor::mn, WgmmaMajor::mn>("gemm_bf16_tn", 100, 128, 96)),
                    Contains("with M a multiple of 8 and N a multiple of 8" + rows + "100 x 128 x 96"));
  CHECK_NOTHROW(check_shape<bf16, WgmmaMajor::mn, WgmmaMajor::mn>("gemm_bf16_tn", 104, 128, 3));
}

TEST_CASE("narrow tiles: 128- and 64-wide GEMM kernels, and the shapes that get them", "[unit]") {
  using kernels::gemm_sm90::Config;
  using kernels::gemm_sm90::choose_tile_n;
  // A decode-like 128 x 8192 has 32 tiles 256 wide on 132 multiprocessors, 128 tiles 64 wide.
  CHECK(choose_tile_n(132, 128, 8192) == 64);
  CHECK(choose_tile_n(132, 1024, 2048) == 128);  // 64 tiles 256 wide, 128 tiles 128 wide
  CHECK(choose_tile_n(132, 4096, 4096) == 256);
  CHECK(choose_tile_n(132, 8192, 8192) == 256);
  CHECK(choose_tile_n(132, 1, 8) == 64);  // one tile whatever the width: the narrowest
  // Narrower tiles leave room for more stages: 6 of 32 KB, 8 of 24 KB.
  CHECK(Config{.tile_n = 128}.stages() == 6);
  CHECK(Config{.tile_n = 64}.stages() == 8);
  for (int width : {128, 64}) {
    INFO(width);
    Config config{.tile_n = width};
    CHECK(config.shared_bytes() <= 227u * 1024u);
    auto compile = [](auto& kernel, auto maps) {
      return kernel.compile(sm90a, maps.first, maps.second, kernels::gemm_sm90::output_map_for_compile(), 128, 8192, 8192);
    };
    using kernels::gemm_sm90::tensor_maps_for_compile;
    CompiledKernel k = width == 128 ? compile(fixtures::gemm_bf16_tile<128>, tensor_maps_for_compile<bf16, Config{.tile_n = 128}>())
                                    : compile(fixtures::gemm_bf16_tile<64>, tensor_maps_for_compile<bf16, Config{.tile_n = 64}>());
    CHECK(k.name == (width == 128 ? "gemm_bf16_n128" : "gemm_bf16_n64"));
    CHECK(contains(k.ptx, "wgmma.mma_async.sync.aligned.m64n" + std::to_string(width) + "k16.f32.bf16.bf16"));
    CHECK_FALSE(contains(k.ptx, "m64n256k16"));
    // One chunk of 64 columns per 64 of width: stmatrix.x4 four times each.
    CHECK(count(k.ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16") == 4 * (width / 64));
    CHECK_FALSE(contains(k.ptx, ".local"));
  }
}
