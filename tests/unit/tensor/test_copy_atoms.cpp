// The universal copies as atoms, cross-compiled for sm_90a: AutoVectorizingCopy (the default
// copy), UniversalCopy<Bytes> (exactly that wide, or an error), AtomicAdd (a reduction into
// memory), alone and inside make_tiled_copy; their PTX, and the bad uses with their messages.
#include <catch2/catch.hpp>

#include <cutejit/cutejit.hpp>

#include "support.hpp"

using namespace cutejit;
using Catch::Matchers::Contains;
using test::contains;
using test::count;

namespace {
const Target sm90a = Target::parse("sm_90a");

DeviceTensor<f32> matrix_arg(int64_t rows, int64_t cols) {
  return DeviceTensor<f32>::make(0, std::array<int64_t, 2>{rows, cols}, std::array<int64_t, 2>{cols, 1});
}

/// 128 threads copy an 8 x 64 tile of `a` (rows 64 floats apart: every row 16-byte aligned)
/// into shared memory and back out one row further, with the atom `Atom`, each thread moving a
/// 1 x 4 vector.
template <class Atom>
std::string tiled_round_trip() {
  Kernel k{"tiled_round_trip", [](Tensor<f32> a) {
    Tensor<f32> rows = make_tensor(a.data(), make_layout({8, 64}, LayoutRight{}));
    Tensor<f32> next = make_tensor(a.data() + 8 * 64, make_layout({8, 64}, LayoutRight{}));
    Tensor<f32> smem = make_smem_tensor<f32>(make_layout(IntTuple{8, 64}, LayoutRight{}));
    auto tiled = make_tiled_copy(Atom{}, make_ordered_layout({8, 16}, {1, 0}), make_layout({1, 4}));
    auto thr = tiled.get_slice(thread_idx().x);
    copy(tiled, thr.partition_S(rows), thr.partition_D(smem));
    sync_threads();
    copy(tiled, thr.partition_S(smem), thr.partition_D(next));
  }};
  return k.compile(sm90a, matrix_arg(16, 64)).ptx;
}
}  // namespace

TEST_CASE("AutoVectorizingCopy and UniversalCopy<16> move 16 bytes per access, UniversalCopy<8> and <4> less", "[tensor]") {
  std::string ptx = tiled_round_trip<AutoVectorizingCopy>();
  CHECK(count(ptx, "ld.global.v4.b32") + count(ptx, "ld.global.nc.v4.b32") == 1);
  CHECK(count(ptx, "st.shared.v4.b32") == 1);
  CHECK(count(ptx, "st.global.v4.b32") == 1);
  CHECK(tiled_round_trip<UniversalCopy<16>>() == ptx);
  // Narrower atoms plan narrower accesses (which LLVM may merge again where they are adjacent).
  CHECK_NOTHROW(tiled_round_trip<UniversalCopy<8>>());
  CHECK_NOTHROW(tiled_round_trip<UniversalCopy<4>>());
  // Rows 4098 floats apart are 8-byte aligned: UniversalCopy<8> is provable there, <16> is not.
  Kernel rows{"universal_8_bytes", [](Tensor<f32> a) {
    Tensor<f32> row = local_tile(a, IntTuple{1, 32}, make_coord(block_idx().x, 0));
    Tensor<f32> frag = make_fragment_like(row);
    copy(UniversalCopy<8>{}, row, frag);
    copy(UniversalCopy<8>{}, frag, local_tile(a, IntTuple{1, 32}, make_coord(block_idx().x, 1)));
  }};
  std::string ptx8 = rows.compile(sm90a, matrix_arg(64, 4098)).ptx;
  CHECK(count(ptx8, "ld.global.v2.b32") == 16);
  CHECK(count(ptx8, "st.global.v2.b32") == 16);
  CHECK_FALSE(contains(ptx8, ".v4."));
}

TEST_CASE("a UniversalCopy wider than the layouts prove is an error naming the line and the widest run", "[tensor]") {
  Kernel k{"universal_too_wide", [](Tensor<f32> a) {
    Tensor<f32> tile = make_tensor(a.data(), make_layout({8, 32}, LayoutRight{}));
    Tensor<f32> transposed = make_smem_tensor<f32>(make_layout(IntTuple{8, 32}));  // column-major: no common run
    copy(UniversalCopy<16>{}, tile, transposed);
  }};
  CHECK_THROWS_WITH(k.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_copy_atoms.cpp") &&
                        Contains("cannot prove that this copy moves aligned, contiguous runs of 16 bytes on both sides (the longest "
                                 "provable run is 4 bytes); use UniversalCopy<4>"));
  // A row length of 4099 floats: rows are 4-byte aligned only.
  Kernel odd{"universal_unaligned", [](Tensor<f32> a) {
    Tensor<f32> row = local_tile(a, IntTuple{1, 32}, make_coord(block_idx().x, 0));
    copy(UniversalCopy<8>{}, row, make_fragment_like(row));
  }};
  CHECK_THROWS_WITH(odd.compile(sm90a, matrix_arg(64, 4099)),
                    Contains("test_copy_atoms.cpp") && Contains("runs of 8 bytes") && Contains("use UniversalCopy<4>"));
}

TEST_CASE("AtomicAdd adds a register fragment into global or shared memory, predicated with copy_if", "[tensor]") {
  Kernel k{"atomic_add_fragment", [](Tensor<f32> out, Tensor<i32> counts) {
    Tensor<f32> frag = make_rmem_tensor<f32>(IntTuple{4});
    for (int i = 0; i < 4; ++i) frag(i) = cast<float>(thread_idx().x + i);
    Tensor<f32> mine = local_tile(out, IntTuple{4}, make_coord(thread_idx().x));
    copy(AtomicAdd{}, frag, mine);
    CoordTensor coords = local_tile(make_identity_tensor(IntTuple{out.shape(0)}), IntTuple{4}, make_coord(thread_idx().x));
    copy_if(AtomicAdd{}, coords, IntTuple{out.shape(0)}, frag, mine);
    Tensor<i32> ones = make_rmem_tensor<i32>(IntTuple{2});
    fill(ones, 1);
    Tensor<i32> shared = make_smem_tensor<i32>(make_layout(IntTuple{2}));
    copy(AtomicAdd{}, ones, shared);
    sync_threads();
    if_(thread_idx().x == 0, [&] { copy(shared, local_tile(counts, IntTuple{2}, make_coord(0))); });
  }};
  std::string ptx = k.compile(sm90a, test::vector_arg<float>(), test::vector_arg<int32_t>()).ptx;
  CHECK(count(ptx, "atom.global.add.f32") == 8);  // 4 unconditional, 4 predicated
  CHECK(count(ptx, "atom.shared.add.u32") + count(ptx, "atom.shared.add.s32") == 2);
  Kernel bad{"atomic_add_into_registers", [](Tensor<f32> a) {
    Tensor<f32> frag = make_rmem_tensor<f32>(IntTuple{4});
    clear(frag);
    copy(AtomicAdd{}, frag, make_rmem_tensor<f32>(IntTuple{4}));
  }};
  CHECK_THROWS_WITH(bad.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_copy_atoms.cpp") &&
                        Contains("an AtomicAdd copy adds into global or shared memory; this copy's destination is neither"));
}
