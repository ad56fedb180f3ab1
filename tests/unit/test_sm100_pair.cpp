// The sm_100 2-CTA MMA (cta_group::2), compile-verified: the pair GEMM cross-compiled for the
// tcgen05 targets and its PTX and SASS read back (nothing here runs on a GPU); the cluster it
// declares; and each misuse of a CTA pair a trace-time error at the user's line.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cutejit/atom/sm100/tmem.hpp"
#include "cutejit/atom/sm100/umma.hpp"
#include "cutejit/pipeline/pair_cluster.hpp"
#include "gemm_sm100.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

TEST_CASE("cluster_shape declares the kernel's cluster in its PTX, once, within the portable size", "[unit]") {
  auto v = test::vector_arg<uint32_t>();
  Kernel pairs{"cluster_of_two", [](Tensor<u32> a) {
    cluster_shape(2);
    a(block_idx().x) = cast<uint32_t>(cluster_cta_rank());
  }};
  CompiledKernel k = pairs.compile(Target::parse("sm_90a"), v);
  CHECK(test::contains(k.ptx, ".reqnctapercluster 2, 1, 1"));
  CHECK(test::contains(k.ptx, ".explicitcluster"));
  Kernel none{"no_cluster", [](Tensor<u32> a) { a(block_idx().x) = 1u; }};
  CHECK_FALSE(test::contains(none.compile(Target::parse("sm_90a"), v).ptx, "reqnctapercluster"));

  const int first_declaration = __LINE__ + 2;
  Kernel twice{"cluster_twice", [](Tensor<u32>) {
    cluster_shape(2);
    cluster_shape(4);
  }};
  CHECK_THROWS_WITH(twice.compile(Target::parse("sm_90a"), v),
                    Contains("test_sm100_pair.cpp") && Contains("cluster_shape is declared once per kernel; this kernel declared it at") &&
                        Contains("test_sm100_pair.cpp:" + std::to_string(first_declaration)));
  Kernel big{"cluster_of_16", [](Tensor<u32>) { cluster_shape(4, 4); }};
  CHECK_THROWS_WITH(big.compile(Target::parse("sm_90a"), v),
                    Contains("whose product is at most 8 (the portable cluster size), not 4 x 4 x 1"));
  Kernel empty{"cluster_of_0", [](Tensor<u32>) { cluster_shape(0); }};
  CHECK_THROWS_WITH(empty.compile(Target::parse("sm_90a"), v), Contains("not 0 x 1 x 1"));
  CHECK_THROWS_WITH(pairs.compile(Target::parse("sm_80"), v), Contains("cluster_shape (a thread-block cluster) is not available on sm_80"));
}

TEST_CASE("the 2-CTA sm_100 GEMM: cta_group::2 allocation, MMA, multicast commits and pair TMA loads in its PTX", "[unit]") {
  for (const char* t : {"sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"}) {
    INFO(t);
    CompiledKernel k = fixtures::gemm_bf16_sm100_2cta_compile(Target::parse(t));
    CHECK(test::contains(k.ptx, ".reqnctapercluster 2, 1, 1"));
    for (const char* i : {"tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32", "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned",
                          "tcgen05.dealloc.cta_group::2.sync.aligned.b32", "barrier.cluster.arrive", "barrier.cluster.wait",
                          "tcgen05.ld.sync.aligned.32x32b.x32.b32", "cp.async.bulk.tensor.2d.global.shared::cta"}) {
      INFO(i);
      CHECK(test::contains(k.ptx, i));
    }
    // A stage: four MMAs of K = 16 (64 bf16 of K), each CTA's A (128 rows) and B (128 of the
    // 256 rows) loaded by one box each onto the even CTA's barrier.
    CHECK(test::count(k.ptx, "tcgen05.mma.cta_group::2.kind::f16") == 4);
    CHECK(test::count(k.ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.cta_group::2") == 2);
    // The stage's release and the accumulator's commit, each to both CTAs.
    CHECK(test::count(k.ptx, "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64") == 2);
    CHECK_FALSE(test::contains(k.ptx, "cta_group::1"));
    // The instruction descriptor of M = 256, N = 256, bf16 x bf16 -> f32, both K-major, from the
    // ISA's table: D f32 (bits 4-5 = 1), A and B bf16 (bits 7-9, 10-12 = 1), N >> 3 = 32 at bit
    // 17, M >> 4 = 16 at bit 24: 0x10400490.
    CHECK(test::contains(k.ptx, std::to_string(0x10400490)));
  }
}

TEST_CASE("the 2-CTA sm_100 GEMM's SASS: UTCHMMA.2CTA, UTCBAR.2CTA.MULTICAST, UTMALDG.2D.2CTA, no local memory", "[unit]") {
  for (const char* t : {"sm_100a", "sm_103a", "sm_110a"}) {
    INFO(t);
    CompiledKernel k = fixtures::gemm_bf16_sm100_2cta_compile(Target::parse(t));
    std::string sass = test::disassemble(k.cubin, "-sass");
    CHECK(test::count(sass, "UTCHMMA.2CTA") == 4);
    CHECK(test::count(sass, "UTCHMMA") == 4);
    CHECK(test::count(sass, "UTCBAR.2CTA.MULTICAST") == 2);
    CHECK(test::count(sass, "UTMALDG.2D.2CTA") == 2);
    CHECK(test::contains(sass, "UTCATOMSWS.2CTA"));  // the pair's allocation
    CHECK(test::count(sass, "UTMASTG.2D") == 8);     // each CTA's 128 x 256 of C, a 32-column chunk per store
    CHECK(test::count(sass, "LDTM") >= 8);
    CHECK(test::contains(sass, "UCGABAR_ARV"));  // the cluster barriers at the start and the end
    test::check_no_local_memory(k.cubin, k.name, sass);
    CHECK(test::resource_usage(k.cubin, k.name, "REG") <= 128);
  }
}

TEST_CASE("the 2-CTA GEMM's shapes and grid: 256 x 256 tiles, a pair per tile, half as many pairs as multiprocessors", "[unit]") {
  using fixtures::gemm_sm100::Dense;
  using Pair = Dense<bf16, 2>;
  static_assert(Pair::b_rows == 128 && Pair::stage_bytes == 32 * 1024 && Pair::stages == 6);
  static_assert(fixtures::gemm_sm100::Resources<Pair>::tmem_columns == 512);  // two 256-column accumulators per CTA
  // 2048 x 4096: 8 x 16 pair tiles, more than the 74 pairs of 148 multiprocessors.
  CHECK(fixtures::gemm_sm100::launch_config<Pair>(148, 2048, 4096).grid.x == 148);
  CHECK(fixtures::gemm_sm100::launch_config<Pair>(148, 512, 512).grid.x == 8);  // 4 tiles, 4 pairs
  CHECK(fixtures::gemm_sm100::launch_config<Pair>(148, 512, 512).shared_bytes <= 232448);
  // A partial pair tile: 264 rows are two, the second with 8 (all in the even CTA's half).
  CHECK(fixtures::gemm_sm100::launch_config<Pair>(148, 264, 256).grid.x == 4);
  CHECK_NOTHROW(fixtures::gemm_sm100::check_shape<Pair>(128, 200, 72));
  CHECK_THROWS_WITH(fixtures::gemm_sm100::check_shape<Pair>(128, 256, 60), Contains("K a multiple of 8 and N of 8"));
}

namespace {
/// Plays one stage of a cluster of PM x PN pairs on the host: each CTA's slices of A and B go
/// where its masks say, each pair's MMA frees the stage where its release mask says; checks that
/// every CTA receives each slice of its half once and from CTAs that load the same rows (its
/// place, and its row of pairs for A, its column for B), and that each CTA's stage is freed by
/// exactly the pairs that read what was written into any CTA whose producer writes it, the
/// `releasers` of them.
template <int PM, int PN>
void check_pair_cluster() {
  using C = PairCluster<PM, PN>;
  INFO("pairs " << PM << " x " << PN);
  constexpr int ctas = 2 * PM * PN;
  auto v = [](int r) { return r % 2; };
  auto pm = [](int r) { return (r / 2) % PM; };
  auto pn = [](int r) { return (r / 2) / PM; };
  // a_slices[d][i]: how many times CTA d received slice i of its A half; likewise B.
  std::vector<std::vector<int>> a_slices(ctas, std::vector<int>(PN)), b_slices(ctas, std::vector<int>(PM));
  // writes[x]: the CTAs CTA x's producer writes into.
  std::vector<std::vector<int>> writes(ctas);
  for (int x = 0; x < ctas; ++x) {
    CHECK(C::place(x) == v(x));
    CHECK(C::pair_m(x) == pm(x));
    CHECK(C::pair_n(x) == pn(x));
    for (int d = 0; d < ctas; ++d) {
      // (With one pair along N the kernel loads A without multicast: the mask is the CTA alone.)
      const bool gets_a = (C::a_mask(x) >> d & 1) != 0, gets_b = (C::b_mask(x) >> d & 1) != 0;
      if (gets_a) {
        INFO("A from " << x << " to " << d);
        CHECK(v(d) == v(x));    // the same half of a pair's 256 rows
        CHECK(pm(d) == pm(x));  // the same rows of the cluster's block
        ++a_slices[size_t(d)][size_t(pn(x))];
      }
      if (gets_b) {
        INFO("B from " << x << " to " << d);
        CHECK(v(d) == v(x));
        CHECK(pn(d) == pn(x));
        ++b_slices[size_t(d)][size_t(pm(x))];
      }
      if (gets_a || gets_b) writes[size_t(x)].push_back(d);
    }
  }
  for (int d = 0; d < ctas; ++d) {
    for (int i = 0; i < PN; ++i) CHECK(a_slices[size_t(d)][size_t(i)] == 1);
    for (int i = 0; i < PM; ++i) CHECK(b_slices[size_t(d)][size_t(i)] == 1);
  }
  // A pair's MMA reads its two CTAs' stages; its release must reach every producer that wrote
  // into them, and nothing else.
  std::vector<int> frees(ctas);
  for (int even = 0; even < ctas; even += 2) {
    for (int x = 0; x < ctas; ++x) {
      bool wrote = false;
      for (int d : writes[size_t(x)]) wrote = wrote || d / 2 == even / 2;
      INFO("pair of " << even << ", CTA " << x);
      CHECK(((C::release_mask(even) >> x & 1) != 0) == wrote);
      frees[size_t(x)] += C::release_mask(even) >> x & 1;
    }
  }
  for (int x = 0; x < ctas; ++x) CHECK(frees[size_t(x)] == C::releasers);
}
}  // namespace

TEST_CASE("a cluster of CTA pairs: each slice of A and B reaches the CTAs that need it once, and each stage is freed by the pairs that read it",
          "[unit]") {
  check_pair_cluster<1, 1>();
  check_pair_cluster<2, 1>();
  check_pair_cluster<1, 2>();
  check_pair_cluster<2, 2>();
  check_pair_cluster<4, 1>();
  check_pair_cluster<1, 4>();
}

TEST_CASE("the 2-CTA GEMM with multicast between pairs: B's slices multicast, the releases to the pairs' row and column, SASS", "[unit]") {
  for (const char* t : {"sm_100a", "sm_103a", "sm_110a"}) {
    INFO(t);
    CompiledKernel k = fixtures::gemm_bf16_sm100_2cta_multicast_compile(Target::parse(t));
    CHECK(test::contains(k.ptx, ".reqnctapercluster 4, 1, 1"));
    // A stage: A's 128 rows as before, B's half as a 64-row slice multicast to the other pair.
    CHECK(test::count(k.ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.cta_group::2 ") == 1);
    CHECK(test::count(k.ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2 ") ==
          1);
    CHECK(test::count(k.ptx, "tcgen05.mma.cta_group::2.kind::f16") == 4);
    // The stage's release (to the four CTAs) and the accumulator's commit (to the pair).
    CHECK(test::count(k.ptx, "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64") == 2);
    std::string sass = test::disassemble(k.cubin, "-sass");
    CHECK(test::count(sass, "UTCHMMA.2CTA") == 4);
    CHECK(test::count(sass, "UTMALDG.2D.2CTA") == 1);
    CHECK(test::count(sass, "UTMALDG.2D.MULTICAST.2CTA") == 1);
    CHECK(test::count(sass, "UTCBAR.2CTA.MULTICAST") == 2);
    test::check_no_local_memory(k.cubin, k.name, sass);
    CHECK(test::resource_usage(k.cubin, k.name, "REG") <= 128);
  }
  using Quad = fixtures::gemm_sm100::Dense<bf16, 2, 2>;
  static_assert(Quad::cluster_ctas == 4 && Quad::b_box_rows == 64 && Quad::a_box_rows == 128);
  // A cluster's block is 512 x 256: 2048 x 4096 has 64 of them, for 37 clusters of 148 multiprocessors.
  CHECK(fixtures::gemm_sm100::launch_config<Quad>(148, 2048, 4096).grid.x == 148);
  CHECK(fixtures::gemm_sm100::launch_config<Quad>(148, 512, 512).grid.x == 8);
  CHECK(fixtures::gemm_sm100::launch_config<Quad>(148, 520, 256).grid.x == 8);  // two blocks, the second of 8 rows
  // Pairs along N share A instead: two 64-row slices of A multicast, B's half as one box.
  Kernel along_n{"gemm_bf16_sm100_2cta_multicast_n", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Int m, Int n, Int k) {
                   fixtures::gemm_sm100::kernel(fixtures::gemm_sm100::Dense<bf16, 2, 1, 2>{a, b}, c, m, n, k);
                 }};
  CompiledKernel n2 = fixtures::gemm_sm100_compile<bf16, 2, 1, 2>(along_n, Target::parse("sm_100a"));
  CHECK(test::contains(n2.ptx, ".reqnctapercluster 4, 1, 1"));
  CHECK(test::count(n2.ptx, ".multicast::cluster.cta_group::2 ") == 1);
  test::check_no_local_memory(n2.cubin, n2.name, test::disassemble(n2.cubin, "-sass"));
}

TEST_CASE("a CTA pair's op without a cluster of pairs, or mixed with single-CTA tcgen05 ops, is an error at the user's line", "[unit]") {
  auto v = test::vector_arg<uint32_t>();
  using PairAtom = SM100_MMA_F16BF16_2x1SM_SS<bf16, 256, 256>;
  // The pair MMA's operands (128 rows of A and of B in this CTA), 128-byte swizzled.
  auto tile = [](int offset) {
    return make_tensor(Pointer<bf16>((dynamic_shared_aligned<int8_t>(1024) + offset).id()),
                       composition(Swizzle(3, 3, 3), make_layout({128, 64}, LayoutRight{})));
  };
  Kernel no_cluster{"pair_mma_without_cluster", [&](Tensor<u32>) {
    auto [A, B] = make_umma_operands(PairAtom{}, tile(0), tile(16384));
    gemm(PairAtom{}, Value<uint32_t>(0u), A, B, Bool(false));
  }};
  CHECK_THROWS_WITH(no_cluster.compile(Target::parse("sm_100a"), v),
                    Contains("test_sm100_pair.cpp") && Contains("tcgen05.mma works on a pair of CTAs (cta_group::2)") &&
                        Contains("declare cluster_shape(2)") && Contains("it declared none"));
  Kernel odd{"pair_alloc_in_cluster_of_3", [](Tensor<u32>) {
    cluster_shape(3);
    TmemAllocation tmem(dynamic_shared_aligned<uint32_t>(16), 512, sm100::CtaGroup::two);
    tmem.allocate();
  }};
  CHECK_THROWS_WITH(odd.compile(Target::parse("sm_100a"), v),
                    Contains("tcgen05.alloc works on a pair of CTAs") && Contains("the kernel declared 3 x 1 x 1 at") &&
                        Contains("test_sm100_pair.cpp"));
  Kernel pair{"pair_mma_in_cluster", [&](Tensor<u32>) {
    cluster_shape(2);
    auto [A, B] = make_umma_operands(PairAtom{}, tile(0), tile(16384));
    gemm(PairAtom{}, Value<uint32_t>(0u), A, B, Bool(false));
    tcgen05_commit(dynamic_shared_aligned<uint64_t>(16), Int(3));
  }};
  CHECK(test::count(pair.compile(Target::parse("sm_100a"), v).ptx, "tcgen05.mma.cta_group::2.kind::f16") == 4);
  const int single_alloc = __LINE__ + 4;  // tmem.allocate(), the first tcgen05 op
  Kernel mixed{"pair_commit_after_single_alloc", [](Tensor<u32>) {
    cluster_shape(2);
    TmemAllocation tmem(dynamic_shared_aligned<uint32_t>(16), 32);
    tmem.allocate();
    tcgen05_commit(dynamic_shared_aligned<uint64_t>(16), Int(3));
  }};
  CHECK_THROWS_WITH(mixed.compile(Target::parse("sm_100a"), v),
                    Contains("tcgen05.commit .multicast::cluster uses cta_group::2, but this kernel's first tcgen05 op (at ") &&
                        Contains("test_sm100_pair.cpp:" + std::to_string(single_alloc) +
                                 ") uses cta_group::1; every tcgen05 op of a kernel uses the same CTA group"));
  // The pair's MMA has M = 128 or 256; a descriptor of M = 64 is one CTA's.
  Kernel m64{"pair_mma_m64", [](Tensor<u32>) {
    cluster_shape(2);
    Value<uint64_t> desc(0ull);
    const uint32_t idesc = sm100::InstrDescriptor{.m = 64, .n = 128}.encode();
    detail::tcgen05_mma(sm100::MmaKind::f16, Value<uint32_t>(0u).id(), desc.id(), desc.id(), idesc, Bool(false).id(), sm100::CtaGroup::two,
                        detail::Where::current());
  }};
  CHECK_THROWS_WITH(m64.compile(Target::parse("sm_100a"), v),
                    Contains("tcgen05.mma.cta_group::2 has M = 128 or 256; the instruction descriptor says 64"));
  // The pair GEMM needs tcgen05: not on Hopper or the sm_120 family.
  for (const char* t : {"sm_90a", "sm_120a"})
    CHECK_THROWS_WITH(fixtures::gemm_bf16_sm100_2cta_compile(Target::parse(t)), Contains(std::string("is not available on ") + t));
}

TEST_CASE("PipelineAsyncUmmaPair: both CTAs' threads fence their halves and arrive on the even CTA's barrier; the pair MMA's commit frees both",
          "[unit]") {
  // Each CTA's 128 threads copy their 128 rows of A and of B (K tiles of 64) into a two-stage
  // ring with ordinary stores; thread 128 of the even CTA multiplies each stage on the pair's
  // tcgen05.mma (256 x 256) and frees it in both CTAs.
  Kernel k{"async_umma_pair", [](Tensor<bf16> a, Tensor<bf16> b, Int k_tiles) {
             using Atom = SM100_MMA_F16BF16_2x1SM_SS<bf16, 256, 256>;
             constexpr int stages = 2, producers = 128, half_bytes = 128 * 128;
             cluster_shape(2);
             launch_bounds(producers + 32);
             Pointer<int8_t> smem = dynamic_shared_aligned<int8_t>(1024);
             auto tile = [&](int operand, const Int& s) {
               return fixtures::gemm_sm100::stage_tile(Pointer<bf16>((smem + (operand * stages + s) * half_bytes).id()), 128);
             };
             PipelineAsyncUmmaPair ring(Pointer<uint64_t>((smem + 2 * stages * half_bytes).id()), stages, producers);
             Int t = thread_idx().x;
             if_(t == 0, [&] {
               ring.init();
               fence_mbarrier_init();
             });
             cluster_arrive();
             cluster_wait();
             // This CTA's halves: rows 128 r ... 128 r + 127 of A and of B.
             Int half = cluster_cta_rank() & 1;
             Tensor<bf16> A = make_tensor(a.data(), make_layout({256, k_tiles * 64}, LayoutRight{}));
             Tensor<bf16> B = make_tensor(b.data(), make_layout({256, k_tiles * 64}, LayoutRight{}));
             if_(t < producers, [&] {
               for_(0, k_tiles, [&](Int kt) {
                 PipelineState s = PipelineState::at(kt, stages);
                 ring.producer_acquire(s);
                 copy(local_tile(A, IntTuple{128, 64}, IntTuple{half, kt})(t, _), tile(0, s.index)(t, _));
                 copy(local_tile(B, IntTuple{128, 64}, IntTuple{half, kt})(t, _), tile(1, s.index)(t, _));
                 ring.producer_commit(s);
               });
             });
             if_(t == producers && half == 0, [&] {
               for_(0, k_tiles, [&](Int kt) {
                 PipelineState s = PipelineState::at(kt, stages);
                 ring.consumer_wait(s);
                 auto [sA, sB] = make_umma_operands(Atom{}, tile(0, s.index), tile(1, s.index));
                 cutejit::gemm(Atom{}, Value<uint32_t>(0u), sA, sB, kt > 0);
                 ring.consumer_release(s);
               });
             });
             // The last commits reach the odd CTA's barriers: neither CTA leaves before both are done.
             cluster_arrive();
             cluster_wait();
           }};
  for (const char* t : {"sm_100a", "sm_103a", "sm_110a"}) {
    INFO(t);
    CompiledKernel c = k.compile(Target::parse(t), test::vector_arg<bf16>(256 * 512), test::vector_arg<bf16>(256 * 512), int32_t(8));
    // Each full barrier counts both CTAs' 128 producers; each empty barrier the one commit.
    CHECK(test::count(c.ptx, "mbarrier.init.shared.b64") == 4);
    const size_t count_256 = c.ptx.find(", 256;");
    REQUIRE(count_256 != std::string::npos);
    const size_t reg = c.ptx.rfind('%', count_256);
    CHECK(test::count(c.ptx, "], " + c.ptx.substr(reg, count_256 - reg) + ";") == 2);  // the two stages' full barriers
    // The producers' fence, then their arrival on the even CTA's barrier through mapa.
    const size_t fence = c.ptx.find("fence.proxy.async.shared::cta");
    REQUIRE(fence != std::string::npos);
    const size_t mapa = c.ptx.find("mapa.shared::cluster", fence);
    REQUIRE(mapa != std::string::npos);
    CHECK(c.ptx.find("mbarrier.arrive.shared::cluster", mapa) != std::string::npos);
    CHECK(test::count(c.ptx, "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster") == 1);
    std::string sass = test::disassemble(c.cubin, "-sass");
    INFO(sass);
    CHECK(test::count(sass, "UTCHMMA.2CTA") >= 4);  // a 128-byte K tile: four K steps of 16
    CHECK(test::count(sass, "FENCE.VIEW.ASYNC.S") >= 1);
    CHECK(test::count(sass, "UTCBAR.2CTA.MULTICAST") >= 1);
    test::check_no_local_memory(c.cubin, c.name, sass);
  }
}
