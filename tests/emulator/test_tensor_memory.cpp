// TMEM and its allocator against the PTX ISA's rules for tcgen05.alloc / dealloc /
// relinquish_alloc_permit ("Tensor Memory Allocation", "Access restrictions").
#include <catch2/catch.hpp>

#include "shared_bytes.hpp"

#include <cstring>
#include <vector>

#include "emulator/tensor_memory.hpp"

using namespace cutejit::emulator;

namespace {
using test::SharedBytes;

/// One CTA's tcgen05.alloc.cta_group::1 of `ncols` to shared word `dst`.
bool alloc1(TensorMemory& t, SharedBytes& s, uint64_t dst, uint32_t ncols) {
  TensorMemory* tm[] = {&t};
  Memory* sh[] = {&s};
  const uint64_t d[] = {dst};
  return tcgen05_alloc(tm, sh, d, ncols);
}
}  // namespace

TEST_CASE("tcgen05.alloc writes lane 0 and a free column run to shared memory", "[emulator][tmem]") {
  TensorMemory t;
  SharedBytes s(64);
  REQUIRE(alloc1(t, s, 8, 128));
  const uint32_t first = s.load<uint32_t>(8);
  CHECK(first >> 16 == 0);                 // lane field
  CHECK((first & 0xFFFF) + 128 <= 512);    // column field
  REQUIRE(alloc1(t, s, 12, 128));
  const uint32_t second = s.load<uint32_t>(12);
  CHECK(second >> 16 == 0);
  // The two runs do not overlap.
  const uint32_t c1 = first & 0xFFFF, c2 = second & 0xFFFF;
  CHECK((c1 + 128 <= c2 || c2 + 128 <= c1));
  CHECK_FALSE(t.all_freed());
  TensorMemory* tm[] = {&t};
  tcgen05_dealloc(tm, first, 128);
  tcgen05_dealloc(tm, second, 128);
  CHECK(t.all_freed());
}

TEST_CASE("tcgen05.alloc waits while the columns are taken and succeeds after a dealloc", "[emulator][tmem]") {
  TensorMemory t;
  SharedBytes s(16);
  REQUIRE(alloc1(t, s, 0, 512));
  const uint32_t all = s.load<uint32_t>(0);
  CHECK(all == 0);  // 512 columns can only start at column 0
  s.store<uint32_t>(4, 0xDEADBEEF);
  CHECK_FALSE(alloc1(t, s, 4, 256));            // blocks: nothing free
  CHECK(s.load<uint32_t>(4) == 0xDEADBEEFu);    // and writes nothing
  TensorMemory* tm[] = {&t};
  tcgen05_dealloc(tm, all, 512);
  CHECK(alloc1(t, s, 4, 256));
}

TEST_CASE("tcgen05.alloc refuses column counts the ISA forbids", "[emulator][tmem]") {
  TensorMemory t;
  SharedBytes s(16);
  for (uint32_t n : {0u, 16u, 31u, 48u, 96u, 1024u}) CHECK_THROWS_AS(alloc1(t, s, 0, n), Fault);
  CHECK_THROWS_WITH(alloc1(t, s, 2, 32), Catch::Contains("4-byte aligned"));
  // "The number of columns allocated should not increase between any two allocations."
  REQUIRE(alloc1(t, s, 0, 64));
  CHECK_THROWS_WITH(alloc1(t, s, 0, 128), Catch::Contains("must not increase"));
  CHECK(alloc1(t, s, 0, 32));
}

TEST_CASE("tcgen05.alloc after relinquish_alloc_permit is a fault", "[emulator][tmem]") {
  TensorMemory t;
  SharedBytes s(16);
  REQUIRE(alloc1(t, s, 0, 32));
  TensorMemory* tm[] = {&t};
  tcgen05_relinquish_alloc_permit(tm);
  CHECK_THROWS_WITH(alloc1(t, s, 4, 32), Catch::Contains("relinquish_alloc_permit"));
  // Deallocation is still allowed.
  tcgen05_dealloc(tm, s.load<uint32_t>(0), 32);
  CHECK(t.all_freed());
}

TEST_CASE("tcgen05.dealloc must name an allocation exactly", "[emulator][tmem]") {
  TensorMemory t;
  SharedBytes s(16);
  REQUIRE(alloc1(t, s, 0, 64));
  const uint32_t a = s.load<uint32_t>(0);
  TensorMemory* tm[] = {&t};
  CHECK_THROWS_AS(tcgen05_dealloc(tm, a, 32), Fault);            // wrong size
  CHECK_THROWS_AS(tcgen05_dealloc(tm, a + 32, 32), Fault);       // not its start
  CHECK_THROWS_AS(tcgen05_dealloc(tm, a | 1u << 16, 64), Fault); // lane 1
  CHECK_THROWS_AS(tcgen05_dealloc(tm, a, 48), Fault);            // not a power of two
  tcgen05_dealloc(tm, a, 64);
  CHECK_THROWS_AS(tcgen05_dealloc(tm, a, 64), Fault);            // twice
}

TEST_CASE("a CTA pair allocates the same columns in both CTAs", "[emulator][tmem]") {
  TensorMemory t0, t1;
  SharedBytes s0(16), s1(16);
  // Make column 0-255 busy in the odd CTA only: the pair must go to columns 256-511.
  REQUIRE(alloc1(t1, s1, 8, 256));
  TensorMemory* tm[] = {&t0, &t1};
  Memory* sh[] = {&s0, &s1};
  const uint64_t dst[] = {0, 4};
  REQUIRE(tcgen05_alloc(tm, sh, dst, 256));
  CHECK(s0.load<uint32_t>(0) == 256u);
  CHECK(s1.load<uint32_t>(4) == 256u);
  CHECK(t0.is_allocated(256));
  CHECK_FALSE(t0.is_allocated(0));
  CHECK_FALSE(tcgen05_alloc(tm, sh, dst, 256));  // t1 is full now
}

TEST_CASE("TMEM cells: uninitialised reads and accesses outside an allocation are faults", "[emulator][tmem]") {
  TensorMemory t;
  SharedBytes s(16);
  REQUIRE(alloc1(t, s, 0, 32));
  const uint32_t col = s.load<uint32_t>(0) & 0xFFFF;
  CHECK_THROWS_WITH(t.read(5, col + 3), Catch::Contains("read of uninitialised TMEM at lane 5 column " + std::to_string(col + 3)));
  t.write(5, col + 3, 0x12345678u);
  CHECK(t.read(5, col + 3) == 0x12345678u);
  CHECK_THROWS_WITH(t.write(0, col + 32, 1), Catch::Contains("unallocated"));
  CHECK_THROWS_WITH(t.read(128, col), Catch::Contains("outside"));
  // A freed and re-allocated column holds nothing a kernel may read.
  TensorMemory* tm[] = {&t};
  tcgen05_dealloc(tm, col, 32);
  CHECK_THROWS_AS(t.read(5, col + 3), Fault);
  REQUIRE(alloc1(t, s, 0, 32));
  CHECK_THROWS_WITH(t.read(5, col + 3), Catch::Contains("uninitialised"));
}

TEST_CASE("each warp of a warpgroup reaches its own quarter of the lanes", "[emulator][tmem]") {
  // The ISA's table: warp 0 -> lanes 0-31, 1 -> 32-63, 2 -> 64-95, 3 -> 96-127 (warp id % 4).
  for (uint32_t warp = 0; warp < 12; ++warp) {
    const uint32_t q = warp % 4;
    CHECK_NOTHROW(check_lane_quarter(warp, 32 * q, 32, "tcgen05.ld"));
    CHECK_NOTHROW(check_lane_quarter(warp, 32 * q + 16, 16, "tcgen05.ld"));
    CHECK_THROWS_AS(check_lane_quarter(warp, 32 * ((q + 1) % 4), 32, "tcgen05.ld"), Fault);
    CHECK_THROWS_AS(check_lane_quarter(warp, 32 * q + 16, 32, "tcgen05.ld"), Fault);  // runs into the next quarter
  }
  CHECK_THROWS_WITH(check_lane_quarter(5, 0, 32, "tcgen05.st"), Catch::Contains("lanes 32-63"));
}
