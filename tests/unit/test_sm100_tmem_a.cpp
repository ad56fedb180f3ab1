// The sm_100 MMA atom with A in Tensor Memory (atom/sm100/umma_tmem_a.hpp), compile-verified:
// where store_rows puts each element of A (a 32x32b TMEM store of packed registers) against
// where the PTX ISA says the MMA reads it, a kernel that multiplies A from TMEM by B from shared
// memory in PTX and SASS, and its misuse refused at the user's line. Nothing here runs on a GPU.
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <tuple>

#include "cutejit/atom/sm100/umma_tmem_a.hpp"
#include "cutejit/pipeline/mbarrier.hpp"
#include "gemm_sm100.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
/// The PTX ISA's layout of an M = 128, K-major A in Tensor Memory: row m in lane m, element k
/// of `bytes`-byte elements at column k bytes / 4, byte k bytes % 4.
struct Cell {
  int64_t lane, column, byte;
  bool operator==(const Cell&) const = default;
};
Cell isa_a_cell(int64_t m, int64_t k, int bytes) { return {m, k * bytes / 4, k * bytes % 4}; }

/// Where store_rows puts element k of row m: warp quarter m / 32 stores lane m % 32's register
/// k / per (tmem_layout_tv of 32x32b: lane + 32 column from the quarter's address), value k % per
/// of it at byte (k % per) bytes (the first value in the low bits).
template <class T>
void check_store_rows_is_the_isa_layout(int64_t k_extent) {
  constexpr int bytes = int(sizeof(T)), per = 4 / bytes;
  const int64_t columns = k_extent / per;
  const Layout store = tmem_layout_tv(TmemShape::s32x32b, int(columns));
  for (int64_t m = 0; m < 128; ++m)
    for (int64_t k = 0; k < k_extent; ++k) {
      const int64_t quarter = m / 32, cell = store(m % 32, k / per).value();
      const Cell stored{32 * quarter + cell % 32, cell / 32, (k % per) * bytes};
      INFO("row " << m << " element " << k);
      CHECK(stored == isa_a_cell(m, k, bytes));
    }
  // Each MMA reads 32 bytes of K: step j starts at column 8 j, as gemm() advances A's address.
  using Atom = Tcgen05MmaTS<T, 128, 64>;
  for (int64_t j = 0; j < k_extent / Atom::k; ++j) CHECK(isa_a_cell(0, j * Atom::k, bytes).column == j * Atom::a_columns_per_mma);
}

/// One 128 x 64 tile: four warps store A (128 x 64 bf16) to TMEM by rows and B (64 x 64) to
/// shared memory, thread 0 multiplies, every thread reads back its row of D.
void tmem_a_tile(const Tensor<bf16>& a, const Tensor<bf16>& b, const Tensor<float>& c, int store_columns) {
  using Atom = SM100_MMA_F16BF16_TS<bf16, 128, 64>;
  launch_bounds(128);
  Int t = thread_idx().x, warp = t / 32;
  Pointer<int8_t> smem = dynamic_shared_aligned<int8_t>(1024);
  Tensor<bf16> sB = cutejit::kernels::gemm_sm100::stage_tile(Pointer<bf16>(smem.id()), 64);
  Pointer<uint64_t> done((smem + 64 * 128).id());
  TmemAllocation tmem(Pointer<uint32_t>((smem + 64 * 128 + 8).id()), 128);  // D's 64 columns, then A's 32
  if_(t == 0, [&] {
    mbarrier_init(done, 1);
    fence_mbarrier_init();
  });
  if_(warp == 0, [&] { tmem.allocate(); });
  Tensor<bf16> gA = make_tensor(a.data(), make_layout({128, 64}, LayoutRight{}));
  Tensor<bf16> gB = make_tensor(b.data(), make_layout({64, 64}, LayoutRight{}));
  if_(t < 64, [&] { copy(gB(t, _), sB(t, _)); });
  Tensor<bf16> row = make_rmem_tensor<bf16>(IntTuple{64});
  copy(gA(t, _), row);
  fence_proxy_async_shared();  // B's stores, for the tensor core's reads
  tcgen05_fence_before_thread_sync();
  sync_threads();
  tcgen05_fence_after_thread_sync();
  Value<uint32_t> d = tmem.address();
  TmemOperandA<bf16> A{d + 64u, 64};
  if (store_columns == 32)
    A.store_rows<32>(warp, row);
  else
    A.store_rows<16>(warp, row);
  tmem_wait_store();
  tcgen05_fence_before_thread_sync();
  sync_threads();
  tcgen05_fence_after_thread_sync();
  if_(t == 0, [&] {
    auto B = UmmaOperand<bf16>(sB, 64, "B");
    gemm(Atom{}, d, A, B, Bool(false));
    tcgen05_commit(done);
  });
  mbarrier_wait(done, 0);
  tcgen05_fence_after_thread_sync();
  Tensor<float> out = TmemAccumulator{d, 64}.load_row<64>(warp, 0);
  Tensor<float> C = make_tensor(c.data(), make_layout({128, 64}, LayoutRight{}));
  for (int i = 0; i < 64; ++i) C(t, i) = F32(out(i));
  tcgen05_fence_before_thread_sync();
  sync_threads();
  if_(warp == 0, [&] { tmem.free(d); });
}
}  // namespace

TEST_CASE("A stored to TMEM by rows lands where tcgen05.mma reads A, per the PTX ISA, for 16-, 8- and 32-bit elements", "[unit]") {
  check_store_rows_is_the_isa_layout<bf16>(64);
  check_store_rows_is_the_isa_layout<f8e4m3>(128);
  check_store_rows_is_the_isa_layout<float>(32);
}

TEST_CASE("tcgen05.mma with A in TMEM as an atom: tcgen05.st of A's rows, four MMAs a column step apart, STTM and UTCHMMA tmem[..]",
          "[unit]") {
  Kernel k{"umma_tmem_a", [](Tensor<bf16> a, Tensor<bf16> b, Tensor<f32> c) { tmem_a_tile(a, b, c, 32); }};
  auto args = [] { return std::tuple{test::vector_arg<bf16>(128 * 64, 256), test::vector_arg<bf16>(64 * 64, 256), test::vector_arg<float>(128 * 64, 256)}; };
  for (const char* t : {"sm_100a", "sm_103a", "sm_110a"}) {
    INFO(t);
    auto [a, b, c] = args();
    CompiledKernel kc = k.compile(Target::parse(t), a, b, c);
    CHECK(test::count(kc.ptx, "tcgen05.st.sync.aligned.32x32b.x32.b32") == 1);
    CHECK(test::count(kc.ptx, "tcgen05.mma.cta_group::1.kind::f16") == 4);
    // A at D's address + 64 columns, each later K step 8 columns on.
    for (int column : {64, 72, 80, 88}) CHECK(test::contains(kc.ptx, ", " + std::to_string(column) + ";"));
    std::string sass = test::disassemble(kc.cubin, "-sass");
    INFO(sass);
    CHECK(test::count(sass, "STTM") == 1);
    const std::regex tmem_a("UTCHMMA tmem\\[UR[0-9]+\\], gdesc\\[UR[0-9]+\\]");
    CHECK(std::distance(std::sregex_iterator(sass.begin(), sass.end(), tmem_a), std::sregex_iterator()) == 4);
    CHECK(test::count(sass, "LDTM") >= 1);
    test::check_no_local_memory(kc.cubin, kc.name, sass);
  }
  auto [a, b, c] = args();
  CHECK_THROWS_WITH(k.compile(Target::parse("sm_120a"), a, b, c), Contains("is not available on sm_120a"));
  Kernel narrow{"umma_tmem_a_short_store", [](Tensor<bf16> a, Tensor<bf16> b, Tensor<f32> c) { tmem_a_tile(a, b, c, 16); }};
  CHECK_THROWS_WITH(narrow.compile(Target::parse("sm_100a"), a, b, c),
                    Contains("test_sm100_tmem_a.cpp") && Contains("a row of this A tile is 32 TMEM columns (64 elements), not 16"));
}
