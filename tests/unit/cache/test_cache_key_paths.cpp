// The key reads each location's file by its name alone: a header reached through two spellings
// of its path (an absolute include directory in one translation unit, a relative one in another,
// as ccache's base_dir writes them, or another build's checkout) is one kernel and one entry,
// while its file's name, its lines and its columns stay in the key. The kernels below stand for
// one header's kernel as several translation units see it: `#line` gives each body the path and
// line that unit's compiler would have recorded.
#include <catch2/catch.hpp>

#include "cache_test_support.hpp"
#include "cutejit/dsl/cuda_function.hpp"

using namespace cache_test;

namespace {
/// The `index`th copy of the kernel below: 0 and 1 at the same line of scale.hpp in two
/// directories, 2 at that line of a file of another name, 3 a line further down scale.hpp.
cutejit::CompiledKernel compile_scale_copy(int index);
/// The `index`th copy of a kernel with a device assertion, at the same line of checked.hpp in
/// two directories.
cutejit::CompiledKernel compile_checked_copy(int index);
/// The `index`th copy of a kernel calling a cuda_function, each declared and called at the same
/// lines of negate.hpp and calls_negate.hpp in two directories.
cutejit::CompiledKernel compile_cuda_call_copy(int index);

/// Copies 0 and 1 of a kernel (`compile_copy`'s), compiled into an empty cache: the second is
/// the first's entry, found under the same key.
struct TwoDirectories {
  cutejit::CompiledKernel first, other_directory;
};
TwoDirectories require_one_entry(cutejit::CompiledKernel (*compile_copy)(int)) {
  TwoDirectories c{compile_copy(0), {}};
  REQUIRE(c.first.cache_key.size() == 32);
  c.other_directory = compile_copy(1);
  CHECK(c.other_directory.cache_key == c.first.cache_key);
  CHECK(c.other_directory.from_cache);
  return c;
}
}  // namespace

TEST_CASE("the cache key ignores the directory a kernel's file was reached through, not its name or lines", "[cache]") {
  TempCache tmp;
  const auto [first, other_directory] = require_one_entry(compile_scale_copy);
  CHECK(compile_scale_copy(2).cache_key != first.cache_key);
  CHECK(compile_scale_copy(3).cache_key != first.cache_key);
  // The entry keeps the spelling of the process that compiled it, in its PTX's line info.
  CHECK(other_directory.ptx.find("/one/checkout/kernels/scale.hpp") != std::string::npos);
}

TEST_CASE("a device assertion's message names its file without the directory, so that the key does not depend on it either",
          "[cache]") {
  TempCache tmp;
  const cutejit::CompiledKernel first = require_one_entry(compile_checked_copy).first;
  // The message, as the PTX holds its bytes.
  std::string bytes;
  for (char ch : std::string("checked.hpp:200: device assertion failed: one value a thread"))
    bytes += (bytes.empty() ? "" : ", ") + std::to_string(int(ch));
  CHECK(first.ptx.find("{" + bytes) != std::string::npos);
}

TEST_CASE("where a cuda_function was declared is read by its file's name too", "[cache]") {
  TempCache tmp;
  require_one_entry(compile_cuda_call_copy);
}

// Each copy's line sets the path and line its body is traced at; the four bodies are the same
// text at the same column.
namespace {
using namespace cutejit;
#line 100 "/one/checkout/kernels/scale.hpp"
Kernel scale_0{"path_spelling_scale", [](Tensor<f32> x) { x(thread_idx().x) = x(thread_idx().x) * 2.0f; }};
#line 100 "../kernels/scale.hpp"
Kernel scale_1{"path_spelling_scale", [](Tensor<f32> x) { x(thread_idx().x) = x(thread_idx().x) * 2.0f; }};
#line 100 "../kernels/scale_copy.hpp"
Kernel scale_2{"path_spelling_scale", [](Tensor<f32> x) { x(thread_idx().x) = x(thread_idx().x) * 2.0f; }};
#line 101 "../kernels/scale.hpp"
Kernel scale_3{"path_spelling_scale", [](Tensor<f32> x) { x(thread_idx().x) = x(thread_idx().x) * 2.0f; }};
#line 200 "/one/checkout/kernels/checked.hpp"
Kernel checked_0{"path_spelling_checked", [](Tensor<f32> x) { device_assert(thread_idx().x < 128, "one value a thread"); x(thread_idx().x) = 1.0f; }};
#line 200 "../kernels/checked.hpp"
Kernel checked_1{"path_spelling_checked", [](Tensor<f32> x) { device_assert(thread_idx().x < 128, "one value a thread"); x(thread_idx().x) = 1.0f; }};
#line 300 "/one/checkout/kernels/negate.hpp"
const auto negate_0 = cuda_function<float(float)>("negate", "__device__ float negate(float x) { return -x; }");
#line 300 "../kernels/negate.hpp"
const auto negate_1 = cuda_function<float(float)>("negate", "__device__ float negate(float x) { return -x; }");
#line 310 "/one/checkout/kernels/calls_negate.hpp"
Kernel calls_0{"path_spelling_cuda_call", [](Tensor<f32> x) { x(thread_idx().x) = negate_0(x(thread_idx().x)); }};
#line 310 "../kernels/calls_negate.hpp"
Kernel calls_1{"path_spelling_cuda_call", [](Tensor<f32> x) { x(thread_idx().x) = negate_1(x(thread_idx().x)); }};

CompiledKernel compile_scale_copy(int index) {
  const Target sm90 = Target::parse("sm_90a");
  const auto x = DeviceTensor<f32>::for_compile({128});
  switch (index) {
    case 0: return scale_0.compile(sm90, x);
    case 1: return scale_1.compile(sm90, x);
    case 2: return scale_2.compile(sm90, x);
    default: return scale_3.compile(sm90, x);
  }
}
/// Copy `index` (0 or 1) of a pair, compiled for sm_90a on 128 values.
template <class K0, class K1>
CompiledKernel compile_one_of(int index, K0& copy_0, K1& copy_1) {
  const Target sm90 = Target::parse("sm_90a");
  const auto x = DeviceTensor<f32>::for_compile({128});
  return index == 0 ? copy_0.compile(sm90, x) : copy_1.compile(sm90, x);
}
CompiledKernel compile_checked_copy(int index) { return compile_one_of(index, checked_0, checked_1); }
CompiledKernel compile_cuda_call_copy(int index) { return compile_one_of(index, calls_0, calls_1); }
}  // namespace
