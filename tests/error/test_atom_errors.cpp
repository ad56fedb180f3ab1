// Bad input to the atom layer and the warp-level instructions: each a cutejit::Error naming the
// user's line and what would be valid.
#include <catch2/catch.hpp>

#include "mma_sync_kernels.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
template <class T>
DeviceTensor<T> arg(int64_t n = 1024) {
  return test::vector_arg<T>(n, 256);
}
}  // namespace

TEST_CASE("an mma.sync kind on a target without it is an error at the user's line", "[error]") {
  auto& fp8 = test::mma_atom_kernel<SM89_16x8x32_F32E4M3E4M3F32_TN>;
  CHECK_THROWS_WITH(fp8.compile(Target::parse("sm_86"), arg<f8e4m3>(), arg<f8e4m3>(), arg<float>(), arg<float>()),
                    Contains("in kernel 'atom_mma_sync_m16n8k32_f32_f8e4m3_f8e4m3_f32' (sm_86)") &&
                        Contains("mma.sync.m16n8k32.f32.e4m3.e4m3.f32 is not available on sm_86; it needs sm_89 and newer"));
  CHECK_NOTHROW(fp8.compile(Target::parse("sm_89"), arg<f8e4m3>(), arg<f8e4m3>(), arg<float>(), arg<float>()));
}

TEST_CASE("a kind the PTX ISA lacks is refused before LLVM sees it", "[error]") {
  Kernel bad{"bf16_with_f16_accumulators", [](Tensor<bf16> a) {
    std::vector<detail::ValueId> v;
    detail::mma_sync(16, 8, 16, {DType::f16, DType::bf16, DType::bf16, DType::f16}, v, v, v, detail::Where::current());
  }};
  CHECK_THROWS_WITH(bad.compile(Target::parse("sm_90a"), arg<bf16>()),
                    Contains("test_atom_errors.cpp") && Contains("the PTX ISA has no mma.sync.m16n8k16.f16.bf16.bf16.f16"));
}

TEST_CASE("TiledMma tiles that the atoms do not divide, and bad atom layouts", "[error]") {
  Kernel uneven{"uneven_tile", [](Tensor<f32> c) {
    auto tiled = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout({2, 2, 1}));
    tiled.get_slice(thread_idx().x).partition_C(test::row_major(c, 48, 16));
  }};
  CHECK_THROWS_WITH(uneven.compile(Target::parse("sm_90a"), arg<float>()),
                    Contains("test_atom_errors.cpp") &&
                        Contains("has 48 M elements, not a multiple of the 32 that the TiledMma of mma.sync.m16n8k16"));
  Kernel overlapping{"overlapping_atoms", [](Tensor<f32> c) {
    make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout(IntTuple{2, 2, 1}, IntTuple{1, 1, 0}));
  }};
  CHECK_THROWS_WITH(overlapping.compile(Target::parse("sm_90a"), arg<float>()),
                    Contains("test_atom_errors.cpp") && Contains("a TiledMma's atom layout must be compact"));
}

TEST_CASE("gemm with fragments that do not match the atom", "[error]") {
  Kernel mismatched{"mismatched_fragments", [](Tensor<f32> c) {
    auto tiled = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{});
    auto thr = tiled.get_slice(thread_idx().x);
    auto fa = make_rmem_tensor<bf16>(make_layout({4, 1, 1}));  // the atom's A has 8 values per thread
    gemm(tiled, thr.partition_fragment_C({16, 8}), fa, thr.partition_fragment_B({8, 16}));
  }};
  CHECK_THROWS_WITH(mismatched.compile(Target::parse("sm_90a"), arg<float>()),
                    Contains("test_atom_errors.cpp") && Contains("gemm's A fragment (4,1,1):(1,0,0)") &&
                        Contains("8 values per thread") && Contains("partition_fragment_A"));
}

TEST_CASE("ldmatrix and cp.async refuse addresses they cannot use", "[error]") {
  Kernel global_ldmatrix{"global_ldmatrix", [](Tensor<bf16> a) { ldmatrix<4>(a.data()); }};
  CHECK_THROWS_WITH(global_ldmatrix.compile(Target::parse("sm_80"), arg<bf16>()),
                    Contains("test_atom_errors.cpp") && Contains("ldmatrix's row address must be a pointer into shared memory"));
  Kernel unaligned_ldmatrix{"unaligned_ldmatrix", [](Tensor<bf16> a) {
    Tensor<bf16> tile = make_smem_tensor<bf16>(make_layout({16, 16}, LayoutRight{}));
    ldmatrix<4>(tile.pointer_at({thread_idx().x, 1}));
  }};
  CHECK_THROWS_WITH(unaligned_ldmatrix.compile(Target::parse("sm_80"), arg<bf16>()),
                    Contains("its row address must be 16-byte aligned, and is known to be only 2-byte aligned"));
  Kernel unaligned_cp_async{"unaligned_cp_async", [](Tensor<f32> a) {
    Tensor<f32> tile = make_smem_tensor<f32>(make_layout({32, 4}, LayoutRight{}));
    // Four floats one element past a 16-byte aligned start: only 4-byte aligned.
    copy(CpAsync<16>{}, make_tensor(a.data() + 1, make_layout(IntTuple(4))), tile(0, _));
  }};
  CHECK_THROWS_WITH(unaligned_cp_async.compile(Target::parse("sm_80"), arg<float>()),
                    Contains("test_atom_errors.cpp") && Contains("cannot prove that this copy moves aligned, contiguous runs of 16 bytes") &&
                        Contains("the longest provable run is 4 bytes); use CpAsync<4>"));
  // Two-byte runs cannot be a cp.async of any size: the message says so instead of naming CpAsync<4>.
  Kernel odd_bf16{"odd_bf16_cp_async", [](Tensor<bf16> a) {
    Tensor<bf16> tile = make_smem_tensor<bf16>(make_layout({32, 8}, LayoutRight{}));
    copy(CpAsync<16>{}, make_tensor(a.data() + 1, make_layout(IntTuple(8))), tile(0, _));
  }};
  CHECK_THROWS_WITH(odd_bf16.compile(Target::parse("sm_80"), arg<bf16>()),
                    Contains("the longest provable run is 2 bytes); cp.async moves at least 4 bytes"));
}

TEST_CASE("ldmatrix.trans of a K-major tile, and plain ldmatrix of an N-major one", "[error]") {
  // B stored N x K with K contiguous: ldmatrix.trans would read 16 bytes along N that are not there.
  Kernel trans_k_major{"trans_k_major", [](Tensor<bf16> b) {
    auto tiled = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{});
    auto ldsm = make_tiled_copy_B(LdMatrix<2, true>{}, tiled);
    Tensor<bf16> s = make_smem_tensor<bf16>(make_layout({8, 16}, LayoutRight{}));
    copy(ldsm, ldsm.get_slice(thread_idx().x).partition_S(s), tiled.get_slice(thread_idx().x).partition_fragment_B({8, 16}));
  }};
  CHECK_THROWS_WITH(trans_k_major.compile(Target::parse("sm_90a"), arg<bf16>()),
                    Contains("test_atom_errors.cpp") && Contains("ldmatrix.trans reads 16 contiguous bytes per row address") &&
                        Contains("load a K-major one with LdMatrix<N> (no transpose)"));
  Kernel plain_n_major{"plain_n_major", [](Tensor<bf16> b) {
    auto tiled = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{});
    auto ldsm = make_tiled_copy_B(LdMatrix<2>{}, tiled);
    Tensor<bf16> s = make_smem_tensor<bf16>(make_layout({8, 16}));  // N contiguous
    copy(ldsm, ldsm.get_slice(thread_idx().x).partition_S(s), tiled.get_slice(thread_idx().x).partition_fragment_B({8, 16}));
  }};
  CHECK_THROWS_WITH(plain_n_major.compile(Target::parse("sm_90a"), arg<bf16>()),
                    Contains("test_atom_errors.cpp") && Contains("load an M- or N-major one with LdMatrix<N, true>"));
}

TEST_CASE("an accumulator fed to a product whose tiling does not match", "[error]") {
  Kernel mismatched{"accumulator_mismatch", [](Tensor<f32> c) {
    auto first = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout({4, 1, 1}));
    auto second = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout({2, 2, 1}));
    accumulator_as_A(second, first, first.get_slice(thread_idx().x).partition_fragment_C({64, 16}));
  }};
  CHECK_THROWS_WITH(mismatched.compile(Target::parse("sm_90a"), arg<float>()),
                    Contains("test_atom_errors.cpp") && Contains("needs the same atoms along M"));
}
