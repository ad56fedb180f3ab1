// Shared memory declared as regions (pipeline/shared_storage.hpp): the offsets follow C's layout
// rules, a declaration that cannot hold is refused, the kernels' sizes are what their hand-summed
// offsets were, and a kernel's regions reach the PTX as the aligned base plus constant offsets.
#include <catch2/catch.hpp>

#include <cutejit/kernels/attention/backward_sm80.hpp>
#include <cutejit/kernels/attention/backward_sm90.hpp>
#include <cutejit/kernels/attention/paged_decode.hpp>
#include <cutejit/kernels/attention/sm90.hpp>
#include <cutejit/kernels/gemm/sm100.hpp>
#include <cutejit/kernels/gemm/sm120.hpp>
#include <cutejit/kernels/gemm/sm80.hpp>
#include <cutejit/kernels/gemm/sm90.hpp>
#include <cutejit/pipeline/shared_storage.hpp>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::contains;

namespace {
struct Example {
  SharedStorage storage;
  SharedRegion<bf16> tiles;
  SharedRegion<uint64_t> barriers;
  SharedRegion<f32> statistics;
  SharedRegion<int8_t> ring;
};
constexpr Example example = [] {
  Example r;
  r.tiles = r.storage.take<bf16>(100, 3);           // 0 ... 599
  r.barriers = r.storage.barriers(24);              // 600 ... 623 (8-byte aligned already)
  r.statistics = r.storage.take<f32>(5);            // 624 ... 643
  r.ring = r.storage.take<int8_t>(2048, 2, 1024);   // 1024 ... 5119
  return r;
}();
static_assert(example.tiles.offset == 0 && example.tiles.stage_bytes() == 200 && example.tiles.bytes() == 600);
static_assert(example.barriers.offset == 600 && example.barriers.elements == 3);
static_assert(example.statistics.offset == 624);
static_assert(example.ring.offset == 1024 && example.storage.used() == 5120);
static_assert(example.storage.bytes() == 5120 + 1008, "the slack of rounding a 16-byte aligned base up to 1 KB");
static_assert(example.ring.as<bf16>().elements == 1024 && example.ring.as<bf16>().stages == 2);
}  // namespace

TEST_CASE("shared regions are laid out in order, each on its alignment, and the size includes the base's slack", "[unit]") {
  SharedStorage s(128);
  auto a = s.take<uint8_t>(3);
  auto b = s.take<f32>(2);  // natural alignment: 4
  auto c = s.take<int8_t>(10, 1, 64);
  auto empty = s.take<uint32_t>(0, 1, 16);  // a region the variant does not use keeps its place
  auto d = s.barriers(16);
  CHECK(a.offset == 0);
  CHECK(b.offset == 4);
  CHECK(c.offset == 64);
  CHECK(empty.offset == 80);
  CHECK(empty.bytes() == 0);
  CHECK(d.offset == 80);
  CHECK(s.used() == 96);
  CHECK(s.bytes() == 96u + 112u);
}

TEST_CASE("an overlaid phase reuses an earlier phase's bytes, and the size covers the larger", "[unit]") {
  SharedStorage s(1024);
  auto q = s.take<bf16>(64);  // 0 ... 127, in both phases
  const int phases = s.used();
  auto ring = s.take<bf16>(256, 2);  // 128 ... 1151
  s.overlay(phases);
  auto scratch = s.take<f32>(100);  // 128 ... 527, over the ring
  auto more = s.take<f32>(200);     // 528 ... 1327: past the ring's end
  CHECK(q.offset == 0);
  CHECK(ring.offset == 128);
  CHECK(scratch.offset == 128);
  CHECK(more.offset == 528);
  CHECK(s.used() == 1328);
  CHECK(s.bytes() == 1328u + 1008u);
  // A smaller second phase leaves the first's size.
  SharedStorage t;
  t.take<int8_t>(4096);
  t.overlay(0);
  t.take<int8_t>(100);
  CHECK(t.used() == 4096);
  CHECK_THROWS_WITH(t.overlay(5000), Contains("an offset the storage has already used"));
}

TEST_CASE("a shared declaration that cannot hold is refused", "[unit]") {
  CHECK_THROWS_WITH(SharedStorage(2048), Contains("power of two from 16 to 1024"));
  CHECK_THROWS_WITH(SharedStorage(48), Contains("power of two from 16 to 1024"));
  SharedStorage s(128);
  CHECK_THROWS_WITH(s.take<int8_t>(64, 1, 1024), Contains("no larger than the base's"));
  CHECK_THROWS_WITH(s.take<int8_t>(64, 1, 96), Contains("power of two"));
  CHECK_THROWS_WITH(s.take<int8_t>(64, 0), Contains("at least one stage"));
  auto odd = s.take<int8_t>(6, 2);
  CHECK_THROWS_WITH(odd.as<f32>(), Contains("not whole elements"));
  CHECK(odd.as<int16_t>().elements == 3);
}

// The sizes each kernel launched with before its regions were declared, summed by hand from the
// offsets it then computed (ring, epilogue, barriers, 1008 bytes of slack).
TEST_CASE("the kernels' declared shared memory is the size their summed offsets were", "[unit]") {
  using namespace kernels;
  CHECK(gemm_sm90::Config{}.shared_bytes() == 4 * 49152 + 32768 + 64 + 1008);
  CHECK(gemm_sm90::Config{.tile_n = 128}.shared_bytes() == 6 * 32768 + 32768 + 96 + 1008);
  CHECK(gemm_sm90::Config{.tile_n = 64}.shared_bytes() == 8 * 24576 + 32768 + 128 + 1008);
  CHECK(fmha_sm90::hd128.shared_bytes() == 32768 + 4 * 32768 + 8 + 64 + 1008);
  CHECK(fmha_sm90::hd64.shared_bytes() == 16384 + 6 * 16384 + 8 + 96 + 1008);
  CHECK(fmha_backward_sm90::hd128.shared_bytes(64) == 2 * 32768 + 4 * 16384 + 8 + 64 + 4 * 512 + 1008);
  CHECK(fmha_backward_sm90::hd64.shared_bytes(128) == 2 * 16384 + 4 * 16384 + 8 + 64 + 4 * 1024 + 1008);
  using Persistent = gemm_sm100::Resources<gemm_sm100::Dense<bf16>>;
  using Clc = gemm_sm100::Resources<gemm_sm100::Dense<bf16>, gemm_sm100::Scheduling::clc>;
  CHECK(Persistent::shared_bytes == 4 * 49152 + 16384 + 64 + 32 + 4 + 1008);
  CHECK(Clc::shared_bytes == 4 * 49152 + 16384 + 64 + 64 + 32 + 64 + 4 + 1008);
  CHECK(gemm_sm120::Resources<bf16>::shared_bytes == 3 * 32768 + 48 + 1008);
  CHECK(gemm_sm80::Config{}.shared_bytes<bf16>() == 3 * (128 + 128) * 128 + 1008);
  CHECK(fmha_sm80::Config{}.shared_bytes<bf16>() == (128 + 2 * 64) * 128 * 2 + 1008);
  CHECK(fmha_backward_sm80::Config{}.shared_bytes<bf16>(16) == (2 * 64 + 4 * 16) * 128 * 2 + 1008);
  // The paged decode: Q's 16 rows, then four warps' rings of stages x (K, V) x 16 keys; the
  // merge's scratch lies over the rings.
  CHECK(paged_decode::Config{.head_dim = 128, .stages = 3}.shared_bytes<bf16>() == (16 * 128 + 4 * 3 * 2 * 16 * 128) * 2 + 1008);
  CHECK(paged_decode::Config{.head_dim = 64, .stages = 2}.shared_bytes<bf16>() == (16 * 64 + 4 * 2 * 2 * 16 * 64) * 2 + 1008);
}

TEST_CASE("a kernel's shared regions are the aligned base plus constant offsets, and keep their alignment", "[unit]") {
  struct Shared {
    SharedStorage storage;
    SharedRegion<f32> ring;
    SharedRegion<uint64_t> barriers;
  };
  static constexpr Shared shared = [] {
    Shared r;
    r.ring = r.storage.take<f32>(256, 2, 1024);
    r.barriers = r.storage.barriers(16);
    return r;
  }();
  Kernel k{"shared_regions", [](Tensor<f32> out) {
             SharedMemory smem(shared.storage);
             Int t = thread_idx().x;
             Pointer<f32> stage = smem.stage(shared.ring, t % 2);
             // A 16-byte vector store needs the tracer to know the stage is 16-byte aligned.
             (stage + (t / 2) * 4).store_vector<4>({F32(1.0f), F32(2.0f), F32(3.0f), F32(4.0f)});
             mbarrier_init(smem[shared.barriers], 1);
             out(t) = F32(smem[shared.ring][t]);
           }};
  std::string ptx = k.compile(Target::parse("sm_90a"), test::vector_arg<float>()).ptx;
  CHECK(contains(ptx, "st.shared.v4.b32"));
  CHECK(contains(ptx, "+2048]"));  // the barriers: two stages of 1 KB past the base
  CHECK(contains(ptx, "mbarrier.init.shared"));
}
