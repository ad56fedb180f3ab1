// The TMEM access shapes of tcgen05.ld / st (sm_100 family): each shape's thread-value layout
// (tmem_layout_tv) against the (thread, register) -> (lane, column) maps transcribed here as
// formulas, the cells a few threads reach written out by hand, every access covering its
// footprint once; then the instructions each shape compiles to (PTX and SASS) and the accesses
// an accumulator refuses. The PTX ISA draws these maps as figures ("Matrix fragments for
// tcgen05.ld/st"); the formulas were read off CUTLASS's TMEM copy traits and agree with the
// figures' captions (32x32b: thread t reads lane t; the 16-lane shapes reach 16 lanes).
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "cutejit/atom/sm100/tmem.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {

// (lane, column) of thread t's register r, relative to the address; q = t / 4, p = t % 4.
std::pair<int, int> cell(TmemShape shape, int t, int r, int half_offset) {
  const int q = t / 4, p = t % 4;
  switch (shape) {
    case TmemShape::s32x32b: return {t, r};
    case TmemShape::s16x64b: return {q + 8 * (t % 2), (t / 2) % 2 + 2 * r};
    case TmemShape::s16x128b: return {q + 8 * (r % 2), p + 4 * (r / 2)};
    case TmemShape::s16x256b: return {q + 8 * ((r / 2) % 2), 2 * p + r % 2 + 8 * (r / 4)};
    case TmemShape::s16x32bx2: return {t % 16, r + half_offset * (t / 16)};
  }
  return {-1, -1};
}

struct ShapeCase {
  TmemShape shape;
  const char* name;
  int lanes, registers_per_num, max_num;
};
const ShapeCase shapes[] = {{TmemShape::s32x32b, "32x32b", 32, 1, 128},
                            {TmemShape::s16x64b, "16x64b", 16, 1, 128},
                            {TmemShape::s16x128b, "16x128b", 16, 2, 64},
                            {TmemShape::s16x256b, "16x256b", 16, 4, 32},
                            {TmemShape::s16x32bx2, "16x32bx2", 16, 1, 128}};

}  // namespace

TEST_CASE("each TMEM access shape's layout is its (thread, register) -> (lane, column) map, covering its cells once", "[unit]") {
  for (const ShapeCase& s : shapes)
    for (int num = 1; num <= s.max_num; num *= 2) {
      const int offset = s.shape == TmemShape::s16x32bx2 ? num : -1;
      Layout tv = tmem_layout_tv(s.shape, num);
      const int registers = s.registers_per_num * num, columns = tmem_columns(s.shape, num);
      INFO(s.name << ".x" << num);
      REQUIRE(size(mode(tv, 0)).value() == 32);
      REQUIRE(size(mode(tv, 1)).value() == registers);
      REQUIRE(registers == detail::tmem_registers(s.shape, num));
      REQUIRE(s.lanes * columns == 32 * registers);  // the footprint is exactly the warp's registers
      std::vector<int> seen(size_t(32 * columns), 0);
      bool all_match = true;
      for (int t = 0; t < 32; ++t)
        for (int r = 0; r < registers; ++r) {
          auto [lane, column] = cell(s.shape, t, r, offset);
          const int64_t index = tv(t, r).value();
          if (index != lane + 32 * column) {
            all_match = false;
            UNSCOPED_INFO("thread " << t << " register " << r << ": layout cell " << index << ", map (" << lane << ", " << column << ")");
          }
          if (lane >= 0 && lane < s.lanes && column >= 0 && column < columns) ++seen[size_t(lane + 32 * column)];
        }
      CHECK(all_match);
      int once = 0;
      for (int n : seen) once += n == 1;
      CHECK(once == s.lanes * columns);
    }
}

TEST_CASE("TMEM access shapes: the cells of a few threads, written out", "[unit]") {
  auto at = [](TmemShape shape, int num, int t, int r) {
    const int64_t i = tmem_layout_tv(shape, num)(t, r).value();
    return std::pair<int64_t, int64_t>{i % 32, i / 32};
  };
  using P = std::pair<int64_t, int64_t>;
  // 16x64b: lane bit 3 is thread bit 0 (thread 1 is lane 8, not lane 0).
  CHECK(at(TmemShape::s16x64b, 1, 0, 0) == P{0, 0});
  CHECK(at(TmemShape::s16x64b, 1, 1, 0) == P{8, 0});
  CHECK(at(TmemShape::s16x64b, 1, 2, 0) == P{0, 1});
  CHECK(at(TmemShape::s16x64b, 1, 5, 0) == P{9, 0});
  CHECK(at(TmemShape::s16x64b, 1, 31, 0) == P{15, 1});
  CHECK(at(TmemShape::s16x64b, 2, 31, 1) == P{15, 3});
  // 16x128b: registers alternate between lanes q and q + 8, then move 4 columns.
  CHECK(at(TmemShape::s16x128b, 2, 0, 1) == P{8, 0});
  CHECK(at(TmemShape::s16x128b, 2, 0, 2) == P{0, 4});
  CHECK(at(TmemShape::s16x128b, 2, 5, 1) == P{9, 1});
  // 16x256b: mma.sync's m16n8 accumulator, then 8 columns on.
  CHECK(at(TmemShape::s16x256b, 2, 0, 3) == P{8, 1});
  CHECK(at(TmemShape::s16x256b, 2, 0, 4) == P{0, 8});
  CHECK(at(TmemShape::s16x256b, 2, 1, 0) == P{0, 2});
  CHECK(at(TmemShape::s16x256b, 2, 30, 7) == P{15, 13});
  // 16x32bx2: threads 16-31 read the second half, side by side by default or where it is put.
  CHECK(at(TmemShape::s16x32bx2, 4, 17, 2) == P{1, 6});
  CHECK(tmem_layout_tv(TmemShape::s16x32bx2, 4, 100)(17, 2).value() == 1 + 32 * 102);
  CHECK(to_string(tmem_layout_tv(TmemShape::s16x256b, 4)) == "((4,8),(2,2,4)):((64,1),(32,8,256))");
}

TEST_CASE("TMEM loads and stores in every shape are tcgen05.ld / st and LDTM / STTM with the shape's form", "[unit]") {
  Kernel k{"tmem_shapes", [](Tensor<u32> a) {
    Value<uint32_t> address = a(0);
    Tensor<float> x = tmem_load<TmemShape::s32x32b, 8>(address);
    Tensor<float> y = tmem_load<TmemShape::s16x64b, 4>(address);
    Tensor<float> z = tmem_load<TmemShape::s16x128b, 2>(address);
    Tensor<float> u = tmem_load<TmemShape::s16x256b, 1>(address);
    Tensor<float> v = tmem_load<TmemShape::s16x32bx2, 2>(address, 64);
    tmem_store<TmemShape::s16x256b, 1>(address, u);
    tmem_store<TmemShape::s16x32bx2, 2>(address, v);
    tmem_store<TmemShape::s16x64b, 4>(address, y);
    tmem_wait_store();
    a(1) = bitcast<uint32_t>(F32(x(IntTuple(7))) + F32(z(IntTuple(3))));
  }};
  for (const char* target : {"sm_100a", "sm_103a", "sm_110a"}) {
    INFO(target);
    CompiledKernel c = k.compile(Target::parse(target), test::vector_arg<uint32_t>());
    for (const char* i : {"tcgen05.ld.sync.aligned.32x32b.x8.b32", "tcgen05.ld.sync.aligned.16x64b.x4.b32",
                          "tcgen05.ld.sync.aligned.16x128b.x2.b32", "tcgen05.ld.sync.aligned.16x256b.x1.b32",
                          "tcgen05.ld.sync.aligned.16x32bx2.x2.b32", "], 64;", "tcgen05.st.sync.aligned.16x32bx2.x2.b32",
                          "], 2, {", "tcgen05.st.sync.aligned.16x256b.x1.b32", "tcgen05.st.sync.aligned.16x64b.x4.b32"}) {
      INFO(i);
      CHECK(test::contains(c.ptx, i));
    }
    std::string sass = test::disassemble(c.cubin, "-sass");
    INFO(sass);
    for (const char* i : {"LDTM.x8 ", "LDTM.16dp64bit.x4", "LDTM.16dp128bit.x2", "LDTM.16dp256bit ", "LDTM.16dp32bit_t0_t15.x2",
                          "LDTM.16dp32bit_t16_t31.x2", "STTM.16dp256bit ", "STTM.16dp32bit_t0_t15.x2", "STTM.16dp32bit_t16_t31.x2",
                          "STTM.16dp64bit.x4"}) {
      INFO(i);
      CHECK(test::contains(sass, i));
    }
  }
}

TEST_CASE("TMEM accesses outside an accumulator, or off a quarter's halves, are errors at the user's line", "[unit]") {
  auto compile = [](auto body) {
    Kernel k{"tmem_misuse", [body](Tensor<u32> a) { body(TmemAccumulator{a(0), 256}, a); }};
    return k.compile(Target::parse("sm_100a"), test::vector_arg<uint32_t>());
  };
  CHECK_NOTHROW(compile([](const TmemAccumulator& acc, const Tensor<u32>&) { acc.load<TmemShape::s16x256b, 4>(Int(0), 16, 224); }));
  CHECK_THROWS_WITH(compile([](const TmemAccumulator& acc, const Tensor<u32>&) { acc.load<TmemShape::s16x256b, 4>(Int(0), 16, 232); }),
                    Contains("test_sm100_tmem_layouts.cpp") && Contains("columns 232 to 263 reaches outside its accumulator's 256 columns"));
  CHECK_THROWS_WITH(compile([](const TmemAccumulator& acc, const Tensor<u32>&) { acc.load<TmemShape::s16x128b, 1>(Int(0), 8, 0); }),
                    Contains("a TMEM load of 16 lanes starts at lane 0 or 16 of its warp's quarter, not at lane 8"));
  CHECK_THROWS_WITH(compile([](const TmemAccumulator& acc, const Tensor<u32>&) { acc.load<TmemShape::s32x32b, 4>(Int(0), 16, 0); }),
                    Contains("the 32x32b shape covers all 32 lanes of its warp's quarter, not at lane 16"));
  CHECK_THROWS_WITH(compile([](const TmemAccumulator& acc, const Tensor<u32>&) { tmem_load<TmemShape::s16x32bx2, 2>(acc.address, 600); }),
                    Contains("tcgen05.ld.16x32bx2 takes the column offset of its second half, 0 to 511, not 600"));
  CHECK_THROWS_WITH(compile([](const TmemAccumulator& acc, const Tensor<u32>&) { tmem_load<TmemShape::s16x64b, 2>(acc.address, 4); }),
                    Contains("tcgen05.ld.16x64b takes no half offset (only .16x32bx2 does)"));
}
