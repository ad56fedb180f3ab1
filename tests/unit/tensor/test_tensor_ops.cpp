// Tensors in traced kernels, cross-compiled for sm_90a: indexing and slicing, partitioning,
// vectorised and predicated copies (their PTX), swizzled shared tiles, register tiles.
#include <catch2/catch.hpp>

#include <set>

#include "elementwise_add_tv.hpp"
#include "support.hpp"
#include "transpose_swizzle.hpp"

using namespace cutejit;
using Catch::Matchers::Contains;
using test::contains;

namespace {

const Target sm90a = Target::parse("sm_90a");

DeviceTensor<f32> matrix_arg(int64_t rows, int64_t cols) {
  return DeviceTensor<f32>::make(0, std::array<int64_t, 2>{rows, cols}, std::array<int64_t, 2>{cols, 1});
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a kernel argument exposes its layout: dynamic shape and strides, static unit stride", "[tensor]") {
  std::string printed;
  Kernel k{"layout_of_argument", [&](Tensor<f32> a, Tensor<f32> v) {
    printed = to_string(a.layout()) + " " + to_string(v.layout());
    Tensor<f32> row = a(2, _);  // slicing with _
    printed += " " + to_string(row.layout());
    row(3) = v(5);
  }};
  k.compile(sm90a, matrix_arg(64, 100), test::vector_arg<float>());
  CHECK(printed == "(?,?):(?,1) ?:1 (?):(1)");
}

TEST_CASE("vectorised copy: 128-bit global accesses where the layouts prove contiguity and alignment", "[tensor]") {
  auto ptx = fixtures::elementwise_add_tv_check().compile(sm90a).ptx;
  CHECK(count(ptx, "ld.global.nc.v4.b32") == 8);  // 2 inputs x 16 values per thread / 4
  CHECK(count(ptx, "st.global.v4.b32") == 4);
  CHECK_FALSE(contains(ptx, ".local"));            // the register tiles stayed in registers

  // A row length of 4099 floats: rows are not 16-byte aligned, so the copy goes scalar.
  auto odd = fixtures::elementwise_add_tv.compile(sm90a, matrix_arg(64, 4099), matrix_arg(64, 4099), matrix_arg(64, 4099)).ptx;
  CHECK_FALSE(contains(odd, ".v4."));
  CHECK(contains(odd, "ld.global.nc.b32"));
}

TEST_CASE("copy_vector_width follows contiguity, alignment and the 16-byte limit", "[tensor]") {
  std::vector<int> widths;
  Kernel k{"copy_widths", [&](Tensor<f32> a, Tensor<f16> h) {
    Tensor<f32> tile = local_tile(a, IntTuple{8, 32}, make_coord(block_idx().x, 0));  // (8,32):(N,1)
    Tensor<f32> smem = make_smem_tensor<f32>(make_layout(IntTuple{8, 32}, LayoutRight{}));
    Tensor<f32> smem_t = make_smem_tensor<f32>(make_layout(IntTuple{8, 32}));       // column-major
    widths.push_back(copy_vector_width(tile, smem));    // rows of 32 contiguous floats: 4 per access
    widths.push_back(copy_vector_width(tile, smem_t));  // transposing: one at a time
    Tensor<f16> htile = local_tile(h, IntTuple{64}, make_coord(block_idx().x));
    widths.push_back(copy_vector_width(htile, make_fragment_like(htile)));  // 8 halves = 16 bytes
    copy(tile, smem);
    sync_threads();
    copy(smem, local_tile(a, IntTuple{8, 32}, make_coord(block_idx().x, 1)));
  }};
  auto ptx = k.compile(sm90a, matrix_arg(64, 256), test::vector_arg<f16>(1024)).ptx;
  CHECK(widths == std::vector<int>{4, 1, 8});
  CHECK(contains(ptx, "st.shared.v4.b32"));
  CHECK(contains(ptx, "ld.shared.v4.b32"));
  CHECK(contains(ptx, "st.global.v4.b32"));
}

TEST_CASE("copy between tensors of different sizes is an error printing both layouts", "[tensor]") {
  Kernel k{"bad_copy", [](Tensor<f32> a) {
    Tensor<f32> r = make_rmem_tensor<f32>(IntTuple{4});
    copy(local_tile(a, IntTuple{8}, make_coord(0)), r);
  }};
  CHECK_THROWS_WITH(k.compile(sm90a, test::vector_arg<float>()),
                    Contains("copy: the source (8):(1) has 8 elements but the destination (4):(1) has 4") &&
                        Contains("test_tensor_ops.cpp"));
}

TEST_CASE("swizzled shared tile: rows and columns of the transpose tile are conflict-free", "[tensor]") {
  ComposedLayout tile = composition(Swizzle(5, 0, 5), make_layout(IntTuple{32, 32}, LayoutRight{}));
  for (int fixed = 0; fixed < 32; ++fixed) {
    std::set<int64_t> row_banks, column_banks;
    for (int lane = 0; lane < 32; ++lane) {
      row_banks.insert(tile(fixed, lane) % 32);     // a warp writes row `fixed`
      column_banks.insert(tile(lane, fixed) % 32);  // a warp reads column `fixed`
    }
    CHECK(row_banks.size() == 32);
    CHECK(column_banks.size() == 32);
  }
  auto ptx = fixtures::transpose_swizzle_check().compile(sm90a).ptx;
  CHECK(count(ptx, "st.shared.b32") == 4);
  CHECK(count(ptx, "ld.shared.b32") == 4);
  CHECK(contains(ptx, "xor.b32"));  // the swizzle of the dynamic row offset
}

TEST_CASE("register tiles: load, elementwise, map, where, reduce, convert, store", "[tensor]") {
  Kernel k{"tile_math", [](Tensor<f32> a, Tensor<f16> h) {
    Tensor<f32> mine = local_tile(a, IntTuple{4, 8}, make_coord(block_idx().x, 0));
    TensorSSA<f32> x = load(mine);
    TensorSSA<f32> y = where(x > 0.0f, x * 2.0f, -x) + 1.0f;
    TensorSSA<f32> z = y.map([](const F32& v) { return exp2(v); });
    F32 total = reduce(z, Reduce::sum, 0.0f);
    TensorSSA<f32> row_max = reduce(z, Reduce::max, -INFINITY, 1);  // over mode 1: one per row
    CHECK(to_string(row_max.shape()) == "4");
    store(z / total, mine);
    store(z.to<f16>(), local_tile(h, IntTuple{32}, make_coord(block_idx().x)));
    a(0, 0) = row_max[3];
  }};
  auto ptx = k.compile(sm90a, matrix_arg(64, 64), test::vector_arg<f16>(1024)).ptx;
  CHECK(contains(ptx, "ld.global.v4.b32"));  // not .nc: the kernel also writes `a`
  CHECK(contains(ptx, "selp.f32"));
  CHECK(contains(ptx, "max.f32"));
  CHECK(contains(ptx, "cvt.rn.f16"));
  CHECK(contains(ptx, "st.global.v4.b32"));
  CHECK_FALSE(contains(ptx, ".local"));
}

TEST_CASE("register tiles fold: a reduction of constants is a constant", "[tensor]") {
  Kernel k{"tile_fold", [](Tensor<i32> out) {
    std::vector<Int> v;
    for (int i = 0; i < 8; ++i) v.push_back(Int(i));
    TensorSSA<int32_t> t(IntTuple{2, 4}, v);
    if_(reduce(t * 3, Reduce::sum, 0) != 84 || reduce(reduce(t, Reduce::max, 0, 0), Reduce::sum, 0) != 16,
        [] { trap(); });
    out(0) = 1;
  }};
  CHECK_FALSE(contains(k.compile(sm90a, test::vector_arg<int32_t>()).ptx, "trap"));
}

TEST_CASE("register tiles: reduce over several modes with a reduction profile", "[tensor]") {
  // t has shape (2,(3,4)); element (a,(b,c)) is its column-major index a + 2b + 6c.
  Kernel k{"tile_reduce_profile", [](Tensor<i32> out) {
    std::vector<Int> v;
    for (int i = 0; i < 24; ++i) v.push_back(Int(i));
    TensorSSA<int32_t> t(IntTuple{2, IntTuple{3, 4}}, v);
    TensorSSA<int32_t> ab = reduce(t, Reduce::sum, 0, IntTuple{_, IntTuple{_, 1}});  // sum over c: 4a + 8b + 36
    TensorSSA<int32_t> b = reduce(t, Reduce::max, 0, IntTuple{1, IntTuple{_, 1}});   // max over a, c: 19 + 2b
    TensorSSA<int32_t> all = reduce(t, Reduce::sum, 0, IntTuple{1, 1});              // 0 + 1 + ... + 23
    TensorSSA<int32_t> bc = reduce(t, Reduce::sum, 0, 0);                           // sum over a: 1 + 4b + 12c
    CHECK(to_string(ab.shape()) == "(2,3)");
    CHECK(to_string(b.shape()) == "(3)");
    CHECK(to_string(all.shape()) == "1");
    CHECK(to_string(bc.shape()) == "(3,4)");
    if_(ab[5] != 56 || ab[0] != 36 || b[2] != 23 || b[0] != 19 || all[0] != 276 || bc[7] != 1 + 4 * 1 + 12 * 2,
        [] { trap(); });
    CHECK_THROWS_WITH(reduce(t, Reduce::sum, 0, IntTuple{_, _, _}),
                      Contains("reduce: the reduction profile (_,_,_) does not match the tile shape (2,(3,4))"));
    out(0) = 1;
  }};
  CHECK_FALSE(contains(k.compile(sm90a, test::vector_arg<int32_t>()).ptx, "trap"));
}

TEST_CASE("partitioning: local_partition, partition_tv and coordinate tensors agree with the host", "[tensor]") {
  Layout threads = make_layout(IntTuple{8, 32}, LayoutRight{});
  Layout tile = make_layout(IntTuple{32, 32}, LayoutRight{});
  SlicedLayout part = detail::local_partition_map(tile, threads, 37);  // thread (1, 5)
  CHECK(to_string(part.layout) == "(4,1):(256,0)");
  CHECK(part.offset.value() == 1 * 32 + 5);

  TVLayout tv = make_layout_tv(make_ordered_layout(IntTuple{4, 32}, IntTuple{1, 0}),
                               make_ordered_layout(IntTuple{4, 4}, IntTuple{1, 0}));
  CHECK(to_string(tv.shape) == "(16,128)");
  CHECK(size(tv.tv).value() == 16 * 128);
  // thread 0's first 4 values are 4 consecutive columns of row 0 of the tile
  for (int v = 0; v < 4; ++v) CHECK(tv.tv(IntTuple{0, v}).value() == v * 16);

  CoordTensor c = make_identity_tensor(IntTuple{6, 10});
  CHECK(to_string(c(IntTuple{4, 7})) == "(4,7)");
  CoordTensor t = local_tile(c, IntTuple{2, 5}, make_coord(1, 1));
  CHECK(to_string(t(IntTuple{1, 3})) == "(3,8)");
  CHECK(to_string(domain_offset(IntTuple{1, 2}, c)(IntTuple{0, 0})) == "(1,2)");
}

TEST_CASE("DeviceTensor::for_compile describes a tensor without memory: the README's cross-compile", "[tensor]") {
  Kernel saxpy{"saxpy_readme", [](F32 alpha, Tensor<f32> x, Tensor<f32> y) {
    Int start = block_idx().x * block_dim().x + thread_idx().x;
    Int stride = grid_dim().x * block_dim().x;
    for_(start, size(x), stride, [&](Int i) { y(i) = fma(alpha, x(i), y(i)); });
  }};
  auto v = DeviceTensor<f32>::for_compile({1 << 20});
  CompiledKernel k = saxpy.compile(Target::parse("sm_100a"), 1.0f, v, v);
  CHECK_FALSE(k.cubin.empty());
  // The same specialization as a real buffer's view of that shape (cudaMalloc memory is 256-byte aligned).
  auto real = DeviceTensor<f32>::make(0x7f0000000100, std::array<int64_t, 1>{1 << 20}, std::array<int64_t, 1>{1});
  CHECK(saxpy.compile(Target::parse("sm_100a"), 1.0f, real, real).cache_key == k.cache_key);
  // Row-major by default; explicit strides are checked as a view's are.
  CHECK(DeviceTensor<f32>::for_compile({64, 128}).stride[0] == 128);
  CHECK_THROWS_WITH(DeviceTensor<f32>::for_compile({64, 128}, {1}), Contains("as many strides (1) as shape entries (2)"));
}
