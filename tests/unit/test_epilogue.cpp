// The epilogue's building blocks cross-compiled (no GPU needed): stmatrix in each width and the
// transposed form, TMA reduce-add, the packed bf16 conversion; the bad uses each with the
// message a user reads. tests/gpu/test_epilogue_gpu.cpp runs the same kernels.
#include <catch2/catch.hpp>

#include "epilogue_kernels.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::contains;

namespace {
const Target sm90a = Target::parse("sm_90a");
}  // namespace

TEST_CASE("stmatrix from accumulator fragments: one x4 per 16 columns, one cvt.rn.bf16x2 per packed pair", "[unit]") {
  for (bool swizzled : {false, true}) {
    INFO(swizzled);
    auto map = TensorMap<bf16>::for_compile(2, {64, 64}, swizzled ? TmaSwizzle::bytes128 : TmaSwizzle::none);
    std::string ptx = test::stmatrix_tile(swizzled).compile(sm90a, map).ptx;
    CHECK(test::count(ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16") == 4);
    CHECK(contains(ptx, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"));
  }
  // Two f32 -> bf16 conversions packed into one register are one instruction.
  Kernel convert{"convert_pairs", [](Tensor<f32> in, Tensor<u32> out) {
    Int i = thread_idx().x;
    out(i) = pack_pair(cast<bf16>(F32(in(2 * i))), cast<bf16>(F32(in(2 * i + 1))));
  }};
  std::string ptx = convert.compile(sm90a, test::vector_arg<float>(), test::vector_arg<uint32_t>()).ptx;
  CHECK(contains(ptx, "cvt.rn.bf16x2.f32"));
  CHECK_FALSE(contains(ptx, "cvt.rn.bf16.f32"));
}

TEST_CASE("stmatrix's widths and transposed form, and TMA reduce-add, reach the PTX", "[unit]") {
  std::string ptx = test::stmatrix_transposed.compile(sm90a, test::vector_arg<bf16>(256)).ptx;
  CHECK(contains(ptx, "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
  Kernel narrow{"stmatrix_narrow", [](Tensor<f16> a) {
    Pointer<f16> smem = shared_array<f16>(128, 16);
    Int lane = thread_idx().x;
    Value<uint32_t> r = pack_pair(Value<f16>(a(lane)), Value<f16>(a(lane + 32)));
    stmatrix(smem + (lane % 16) * 8, std::array<Value<uint32_t>, 2>{r, r});
    stmatrix(smem + (lane % 8) * 8, std::array<Value<uint32_t>, 1>{r});
  }};
  ptx = narrow.compile(sm90a, test::vector_arg<f16>()).ptx;
  CHECK(contains(ptx, "stmatrix.sync.aligned.m8n8.x2.shared.b16"));
  CHECK(contains(ptx, "stmatrix.sync.aligned.m8n8.x1.shared.b16"));
  ptx = test::tma_reduce_add_tile.compile(sm90a, TensorMap<f32>::for_compile(2, {32, 32}, TmaSwizzle::none)).ptx;
  CHECK(contains(ptx, "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group"));
}

TEST_CASE("bad stmatrix and TMA reduce-add uses are trace-time errors naming the line", "[unit]") {
  CHECK_THROWS_WITH(test::stmatrix_transposed.compile(Target::parse("sm_80"), test::vector_arg<bf16>(256)),
                    Contains("epilogue_kernels.hpp") && Contains("stmatrix is not available on sm_80; it needs sm_90 and newer"));
  Kernel reduce{"reduce_only", [](TmaDescriptor<f32> d) { d.reduce_add(dynamic_shared_aligned<f32>(128), {0, 0}); }};
  CHECK_THROWS_WITH(reduce.compile(Target::parse("sm_89"), TensorMap<f32>::for_compile(2, {32, 32}, TmaSwizzle::none)),
                    Contains("test_epilogue.cpp") &&
                        Contains("cp.reduce.async.bulk.tensor (TMA reduce-store) is not available on sm_89; it needs sm_90 and newer"));
  Kernel global{"stmatrix_to_global", [](Tensor<bf16> a) {
    Value<uint32_t> r = pack_pair(Value<bf16>(a(0)), Value<bf16>(a(1)));
    stmatrix(a.data(), std::array<Value<uint32_t>, 1>{r});
  }};
  CHECK_THROWS_WITH(global.compile(sm90a, test::vector_arg<bf16>()),
                    Contains("test_epilogue.cpp") && Contains("stmatrix's row address must be a pointer into shared memory"));
  Kernel unaligned{"stmatrix_unaligned", [](Tensor<bf16> a) {
    Value<uint32_t> r = pack_pair(Value<bf16>(a(0)), Value<bf16>(a(1)));
    stmatrix(shared_array<bf16>(64, 16) + thread_idx().x, std::array<Value<uint32_t>, 1>{r});
  }};
  CHECK_THROWS_WITH(unaligned.compile(sm90a, test::vector_arg<bf16>()),
                    Contains("test_epilogue.cpp") &&
                        Contains("stmatrix writes 16-byte rows: its row address must be 16-byte aligned, and is known to be only 2-byte aligned"));
  // The typed pack_pair cannot mix types; the trace API it calls checks anyway.
  Kernel mixed{"pack_mixed", [](Tensor<bf16> a, Tensor<f16> b) {
    detail::pack_pair(Value<bf16>(a(0)).id(), Value<f16>(b(0)).id(), detail::Where::current());
  }};
  CHECK_THROWS_WITH(mixed.compile(sm90a, test::vector_arg<bf16>(), test::vector_arg<f16>()),
                    Contains("pack_pair packs two values of one 16-bit type, not bf16 and f16"));
  Kernel global_c{"stmatrix_copy_to_global", [](Tensor<bf16> a) {
    auto tiled = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<64>{});
    auto thr = tiled.get_slice(thread_idx().x);
    Tensor<bf16> c = thr.partition_fragment_C<bf16>({64, 64});
    clear(c);
    auto r2s = make_tiled_copy_C(StMatrix<4>{}, tiled);
    copy(r2s, c, r2s.get_slice(thread_idx().x).partition_D(make_tensor(a.data(), make_layout({64, 64}, LayoutRight{}))));
  }};
  CHECK_THROWS_WITH(global_c.compile(sm90a, test::vector_arg<bf16>()),
                    Contains("test_epilogue.cpp") && Contains("stmatrix stores to shared memory; this copy's destination is not shared"));
  Kernel mismatched{"stmatrix_other_tile", [](Tensor<bf16> a) {
    auto tiled = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<64>{});
    auto thr = tiled.get_slice(thread_idx().x);
    Tensor<bf16> c = thr.partition_fragment_C<bf16>({64, 64});
    clear(c);
    auto r2s = make_tiled_copy_C(StMatrix<4>{}, tiled);
    copy(r2s, c, r2s.get_slice(thread_idx().x).partition_D(make_tensor(shared_array<bf16>(64 * 128, 16), make_layout({64, 128}, LayoutRight{}))));
  }};
  CHECK_THROWS_WITH(mismatched.compile(sm90a, test::vector_arg<bf16>()),
                    Contains("test_epilogue.cpp") &&
                        Contains("a stmatrix copy goes from the TiledMma's C fragment of a tile to partition_D of a shared tile of the same shape"));
}

TEST_CASE("two floats to an FP8 pair in one conversion, for 2-byte stores of an FP8 C", "[unit]") {
  Kernel pair{"fp8_pairs", [](Tensor<f32> in, Tensor<i32> out) {
    Int i = thread_idx().x;
    Value<int16_t> p = cast_pair<f8e4m3>(F32(in(2 * i)), F32(in(2 * i + 1)));
    Value<int16_t> q = cast_pair<f8e5m2>(F32(in(2 * i)), F32(in(2 * i + 1)));
    out(i) = cast<int32_t>(p) + cast<int32_t>(q);
  }};
  std::string ptx = pair.compile(sm90a, test::vector_arg<float>(), test::vector_arg<int32_t>()).ptx;
  // Both inputs in one instruction (the first source goes to the upper byte), not one each.
  CHECK(test::count(ptx, "cvt.rn.satfinite.e4m3x2.f32") == 1);
  CHECK(test::count(ptx, "cvt.rn.satfinite.e5m2x2.f32") == 1);
  CHECK_THROWS_WITH(pair.compile(Target::parse("sm_80"), test::vector_arg<float>(), test::vector_arg<int32_t>()),
                    Contains("test_epilogue.cpp") && Contains("is not available on sm_80; it needs sm_89 and newer"));
}
