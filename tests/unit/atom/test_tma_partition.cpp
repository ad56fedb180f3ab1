// tma_partition (atom/sm90/tma_partition.hpp): the boxes a shared tile is filled by, checked
// against placements worked out by hand from how TMA writes a box (row-major in the tensor
// map's modes, innermost contiguous), and the tiles boxes cannot fill refused at trace time.
#include <catch2/catch.hpp>

#include "cutejit/atom/sm90/wgmma.hpp"
#include "cutejit/core/error.hpp"
#include "cutejit/pipeline/pipeline.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
// The coordinate layouts of an identity tensor's (rows, cols) tile, in the map's mode order.
std::vector<Layout> coordinates(int rows, int cols) {
  return {Layout(IntTuple{rows, cols}, IntTuple{1, 0}), Layout(IntTuple{rows, cols}, IntTuple{0, 1})};
}
std::vector<int64_t> offsets(const std::vector<detail::TmaBoxPlacement>& boxes) {
  std::vector<int64_t> o;
  for (const auto& b : boxes) o.push_back(b.smem_offset);
  return o;
}
}  // namespace

TEST_CASE("a K-major tile of two row boxes: boxes 128 rows apart in the tensor, 16 KB apart in shared memory", "[unit]") {
  // 256 rows of 64 bf16 (a Hopper GEMM's B stage) from boxes of 128 x 64.
  Layout tile = make_layout({256, 64}, LayoutRight{});
  auto boxes = detail::place_tma_boxes(tile, coordinates(256, 64), {128, 64}, detail::Where::current());
  REQUIRE(boxes.size() == 2);
  CHECK(offsets(boxes) == std::vector<int64_t>{0, 128 * 64});
  CHECK(boxes[0].origin == std::vector<int64_t>{0, 0});
  CHECK(boxes[1].origin == std::vector<int64_t>{128, 0});
}

TEST_CASE("an MN-major tile: one box per 64-column chunk, each 64 K rows, its origin 64 columns on", "[unit]") {
  // B stored K x N; the tile is (N, K) = (256, 64) in chunks of 64 N, K rows of 64 N each:
  // element (n, k) at (n % 64) + 64 k + 4096 (n / 64). The map is K x N, boxes of 64 K rows x
  // 64 N, so its coordinates are (k, n).
  Layout tile(IntTuple{IntTuple{64, 4}, 64}, IntTuple{IntTuple{1, 4096}, 64});
  std::vector<Layout> coords = {Layout(IntTuple{256, 64}, IntTuple{0, 1}), Layout(IntTuple{256, 64}, IntTuple{1, 0})};
  auto boxes = detail::place_tma_boxes(tile, coords, {64, 64}, detail::Where::current());
  REQUIRE(boxes.size() == 4);
  CHECK(offsets(boxes) == std::vector<int64_t>{0, 4096, 8192, 12288});
  for (int i = 0; i < 4; ++i) CHECK(boxes[size_t(i)].origin == std::vector<int64_t>{0, 64 * i});
}

TEST_CASE("K wider than a box: the boxes side by side along K, each a whole (rows, 64) tile", "[unit]") {
  // 128 rows of 128 bf16 as two 128-byte-wide spans (wgmma_tile_layout), boxes of 128 x 64.
  Layout tile(IntTuple{128, IntTuple{64, 2}}, IntTuple{64, IntTuple{1, 128 * 64}});
  auto boxes = detail::place_tma_boxes(tile, coordinates(128, 128), {128, 64}, detail::Where::current());
  REQUIRE(boxes.size() == 2);
  CHECK(boxes[1].smem_offset == 128 * 64);
  CHECK(boxes[1].origin == std::vector<int64_t>{0, 64});
}

TEST_CASE("tiles boxes cannot fill are refused, naming what would go wrong", "[unit]") {
  const auto here = detail::Where::current();
  // Column-major rows: a box writes 64 consecutive elements of a row, the tile wants a column.
  CHECK_THROWS_WITH(detail::place_tma_boxes(make_layout({128, 64}), coordinates(128, 64), {128, 64}, here),
                    Contains("does not hold the tensor's boxes of (128, 64) as TMA writes them"));
  // A tile that is not a whole number of boxes.
  CHECK_THROWS_WITH(detail::place_tma_boxes(make_layout({96, 64}, LayoutRight{}), coordinates(96, 64), {128, 64}, here),
                    Contains("not a whole number of the map's boxes of 8192"));
  // A padded tile (rows 72 elements apart) is not compact.
  CHECK_THROWS_WITH(detail::place_tma_boxes(Layout(IntTuple{128, 64}, IntTuple{72, 1}), coordinates(128, 64), {128, 64}, here),
                    Contains("is not a compact arrangement"));
  // Coordinates of another shape.
  CHECK_THROWS_WITH(detail::place_tma_boxes(make_layout({128, 64}, LayoutRight{}), coordinates(64, 64), {128, 64}, here),
                    Contains("must have the shared tile's static shape"));
}

TEST_CASE("the swizzle TMA leaves, as a swizzle of element offsets", "[unit]") {
  CHECK(*detail::tma_swizzle_of(TmaSwizzle::bytes128, 2) == Swizzle(3, 3, 3));
  CHECK(*detail::tma_swizzle_of(TmaSwizzle::bytes128, 1) == Swizzle(3, 4, 3));
  CHECK(*detail::tma_swizzle_of(TmaSwizzle::bytes64, 2) == Swizzle(2, 3, 3));
  CHECK(*detail::tma_swizzle_of(TmaSwizzle::bytes32, 4) == Swizzle(1, 2, 3));
  CHECK_FALSE(detail::tma_swizzle_of(TmaSwizzle::none, 2).has_value());
}

namespace {
const Target sm90a = Target::parse("sm_90a");
TensorMap<bf16> map(uint32_t rows, uint32_t cols, TmaSwizzle s = TmaSwizzle::bytes128) {
  return TensorMap<bf16>::for_compile(2, {rows, cols}, s);
}
// A kernel's shared tile of 8192 bf16 in `layout` (a wgmma_tile_layout), 1 KB aligned.
Tensor<bf16> shared_tile(const ComposedLayout& layout) {
  SharedStorage storage;
  auto tile = storage.take<bf16>(128 * 64, 1, 1024);
  return make_tensor(SharedMemory(storage)[tile], layout);
}
}  // namespace

TEST_CASE("a traced tma_partition issues one load per box at the box's coordinates", "[unit]") {
  Kernel k{"tma_partition_loads", [](TmaDescriptor<bf16> b, Int n, Int kk) {
    SharedStorage storage;
    auto tile = storage.take<bf16>(256 * 64, 1, 1024);
    auto bar = storage.barriers(8);
    SharedMemory smem(storage);
    Tensor<bf16> sB = make_tensor(smem[tile], wgmma_tile_layout<bf16>(WgmmaMajor::k, TmaSwizzle::bytes128, 256, 64));
    CoordTensor gB = local_tile(make_identity_tensor({n, kk}), {256, 64}, {block_idx().x, 0});
    TmaPartition<bf16> boxes = tma_partition(b, sB, gB);
    if_(thread_idx().x == 0, [&] {
      for (const TmaBox<bf16>& box : boxes.boxes()) b.load(box.smem, smem[bar], box.coords);
    });
  }};
  std::string ptx = k.compile(sm90a, map(128, 64), 1024, 1024).ptx;
  CHECK(test::count(ptx, "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier") == 2);
  CHECK(test::contains(ptx, ", 16384;"));  // the second box's address, 16 KB into the tile
}

TEST_CASE("tma_partition refuses a tile whose swizzle is not the map's, at the caller's line", "[unit]") {
  Kernel k{"tma_partition_swizzle", [](TmaDescriptor<bf16> b, Int n, Int kk) {
    Tensor<bf16> sB = shared_tile(wgmma_tile_layout<bf16>(WgmmaMajor::k, TmaSwizzle::bytes64, 256, 32));
    tma_partition(b, sB, local_tile(make_identity_tensor({n, kk}), {256, 32}, {0, 0}));
  }};
  CHECK_THROWS_WITH(k.compile(sm90a, map(128, 64), 1024, 1024),
                    Contains("test_tma_partition.cpp") && Contains("tma_partition's tile is swizzled by Sw<2,3,3>") &&
                        Contains("the tensor map's boxes land swizzled by Sw<3,3,3>"));
}

TEST_CASE("a packed sequence's tile: domain_offset places it, the boxes run along head_dim", "[unit]") {
  // Rows 5 ... 132 of head 2 of a (token, head, column) tensor, head_dim 128, as attention's
  // producer describes a query tile that starts where no whole number of tiles would.
  CoordTensor tile = domain_offset({5, 2, 0}, make_identity_tensor({128, 1, 128}))(_, 0, _);
  CHECK(tile(IntTuple{3, 70}) == IntTuple{8, 2, 70});
  // Two boxes of (128 tokens, 1 head, 64 columns) fill a (128, 128) tile of two 128-byte spans.
  Layout smem(IntTuple{128, IntTuple{64, 2}}, IntTuple{64, IntTuple{1, 128 * 64}});
  auto boxes = detail::place_tma_boxes(smem, tile.components(), {128, 1, 64}, detail::Where::current());
  REQUIRE(boxes.size() == 2);
  CHECK(boxes[0].origin == std::vector<int64_t>{0, 0, 0});
  CHECK(boxes[1].origin == std::vector<int64_t>{0, 0, 64});
  CHECK(boxes[1].smem_offset == 128 * 64);
  CHECK_THROWS_WITH(domain_offset({5, 2}, make_identity_tensor({128, 1, 128})), Contains("has 2 entries; the coordinate tensor has 3 modes"));
}

TEST_CASE("a box picked by a traced index needs evenly spaced boxes", "[unit]") {
  Kernel k{"tma_partition_pick_one", [](TmaDescriptor<bf16> b, Int n, Int kk) {
    Tensor<bf16> sB = shared_tile(wgmma_tile_layout<bf16>(WgmmaMajor::k, TmaSwizzle::bytes128, 128, 64));
    tma_partition(b, sB, local_tile(make_identity_tensor({n, kk}), {128, 64}, {0, 0})).at(block_idx().x);
  }};
  CHECK_THROWS_WITH(k.compile(sm90a, map(128, 64), 1024, 1024),
                    Contains("test_tma_partition.cpp") && Contains("needs several boxes, evenly spaced; this one has 1"));
}
