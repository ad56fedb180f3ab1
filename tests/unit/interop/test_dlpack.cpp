// DLPack in and out, on the host: DLTensors as a framework would hand them over, with every
// property a kernel could misread checked. No memory is touched, so no GPU is needed.
#include <catch2/catch.hpp>

#include <cutejit/cutejit.hpp>
#include <cutejit/interop/dlpack.hpp>

using namespace cutejit;
using Catch::Contains;

namespace {
/// A DLTensor of a CUDA tensor that is not there (the address is never read).
struct FakeTensor {
  std::vector<int64_t> shape, strides;
  DLTensor t{};
  FakeTensor(std::vector<int64_t> s, std::vector<int64_t> st, DLDataType dtype = {kDLFloat, 32, 1}, uint64_t address = 0x7f0000000000)
      : shape(std::move(s)), strides(std::move(st)) {
    t.data = reinterpret_cast<void*>(address);
    t.device = {kDLCUDA, 0};
    t.ndim = int32_t(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
  }
};
}  // namespace

TEST_CASE("from_dlpack: a framework's CUDA tensor becomes a view with its shape and strides", "[unit]") {
  FakeTensor x({4, 8}, {16, 2});  // a strided view, as torch's x[:, ::2] of a 4 x 16
  x.t.byte_offset = 64;
  DeviceTensor<float> v = from_dlpack<float>(x.t);
  CHECK(v.ptr == 0x7f0000000000 + 64);
  CHECK(v.rank == 2);
  CHECK((v.shape[0] == 4 && v.shape[1] == 8 && v.stride[0] == 16 && v.stride[1] == 2));
  // No strides: compact row-major, by DLPack's definition.
  FakeTensor compact({3, 5, 7}, {});
  DeviceTensor<float> c = from_dlpack<float>(compact.t);
  CHECK((c.stride[0] == 35 && c.stride[1] == 7 && c.stride[2] == 1));
  FakeTensor half({16}, {}, {kDLBfloat, 16, 1});
  CHECK(from_dlpack<bf16>(half.t).shape[0] == 16);
  CHECK(dynamic_arg_from_dlpack(half.t).dtype == DType::bf16);
}

TEST_CASE("from_dlpack: what a kernel could misread is refused with what would do", "[unit][error]") {
  FakeTensor x({4, 8}, {});
  CHECK_THROWS_WITH(from_dlpack<bf16>(x.t), Contains("its elements are f32, not bf16"));
  FakeTensor host = x;
  host.t.shape = host.shape.data();
  host.t.device = {kDLCPU, 0};
  CHECK_THROWS_WITH(from_dlpack<float>(host.t), Contains("host memory") && Contains(".cuda()"));
  FakeTensor other = x;
  other.t.shape = other.shape.data();
  other.t.device = {kDLCUDA, 3};
  CHECK_THROWS_WITH(from_dlpack<float>(other.t, 0), Contains("it is on GPU 3, and the kernel runs on GPU 0"));
  CHECK_NOTHROW(from_dlpack<float>(other.t));  // no device asked for
  FakeTensor vulkan = x;
  vulkan.t.shape = vulkan.shape.data();
  vulkan.t.device = {kDLVulkan, 0};
  CHECK_THROWS_WITH(from_dlpack<float>(vulkan.t), Contains("device type 7 is not CUDA memory"));
  FakeTensor complex({4}, {}, {kDLComplex, 64, 1});
  CHECK_THROWS_WITH(from_dlpack<float>(complex.t), Contains("element type type code 5 of 64 is none cutejit takes"));
  FakeTensor lanes({4}, {}, {kDLFloat, 32, 4});
  CHECK_THROWS_WITH(from_dlpack<float>(lanes.t), Contains("float32x4"));
  FakeTensor rank5({2, 2, 2, 2, 2}, {});
  CHECK_THROWS_WITH(from_dlpack<float>(rank5.t), Contains("test_dlpack.cpp:") && Contains("rank 5; a kernel's tensor argument has rank 1 to 4"));
  FakeTensor scalar({}, {});
  CHECK_THROWS_WITH(from_dlpack<float>(scalar.t), Contains("rank 0"));
  FakeTensor odd({4}, {}, {kDLFloat, 32, 1}, 0x7f0000000002);
  CHECK_THROWS_WITH(from_dlpack<float>(odd.t), Contains("address 0x7f0000000002 is not aligned to its element size (4 bytes)"));
  FakeTensor null({4}, {}, {kDLFloat, 32, 1}, 0);
  CHECK_THROWS_WITH(from_dlpack<float>(null.t), Contains("data pointer is null"));
}

TEST_CASE("to_dlpack: a view or an owned buffer handed to a framework, freed by its deleter", "[unit]") {
  DeviceTensor<float> v = DeviceTensor<float>::make(0x7f0000001000, std::array<int64_t, 2>{6, 10}, std::array<int64_t, 2>{12, 1});
  DLManagedTensor* m = to_dlpack(v, 1);
  const DLTensor& t = m->dl_tensor;
  CHECK(t.data == reinterpret_cast<void*>(0x7f0000001000));
  CHECK((t.device.device_type == kDLCUDA && t.device.device_id == 1));
  CHECK((t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1));
  CHECK((t.ndim == 2 && t.shape[0] == 6 && t.shape[1] == 10 && t.strides[0] == 12 && t.strides[1] == 1));
  // And back: the round trip is the identity.
  DeviceTensor<float> back = from_dlpack<float>(t, 1);
  CHECK((back.ptr == v.ptr && back.shape == v.shape && back.stride == v.stride));
  m->deleter(m);
  DLManagedTensor* h = to_dlpack(DeviceTensor<bf16>::make(0x7f0000002000, std::array<int64_t, 1>{8}, std::array<int64_t, 1>{1}), 0);
  CHECK((h->dl_tensor.dtype.code == kDLBfloat && h->dl_tensor.dtype.bits == 16));
  h->deleter(h);
  // An owned buffer must match its shape (a Buffer that owns nothing: nothing to free).
  CHECK_THROWS_WITH(to_dlpack(Buffer<float>(), {2, 3}, 0), Contains("the shape has 6 elements and the buffer 0"));
}

TEST_CASE("every error reads \"file:line: error: ...\" or \"error: ...\", never twice", "[unit][error]") {
  CHECK(std::string(Error("error: error: x").what()) == "error: x");
  CHECK(std::string(Error("x").what()) == "error: x");
  CHECK(std::string(Error("a.cpp:12: error: error: x").what()) == "a.cpp:12: error: x");
  CHECK(std::string(Error("a.cpp:12: x").what()) == "a.cpp:12: error: x");
  CHECK_THAT(Error("x", std::source_location::current()).what(), Catch::Matches(".*test_dlpack\\.cpp:[0-9]+: error: x"));
  CHECK(Error("x", std::source_location::current()).located());
  CHECK_FALSE(Error("x 12: y").located());
  CHECK(std::string(Error("/home/a b/k.cpp:7: error: error: z").what()) == "/home/a b/k.cpp:7: error: z");  // a blank in the path
  CHECK(std::string(Error("error: /data/m.jsonl:3: not a manifest line").what()) == "error: /data/m.jsonl:3: not a manifest line");
  // A layout error inside a kernel, which knows no line of its own, is put on the kernel's.
  Kernel k{"bad_layout", [](Tensor<f32> a) { a(0) = cast<float>(Int(size(make_layout(IntTuple(4), IntTuple{1, 2})))); }};
  const int defined = __LINE__ - 1;
  CHECK_THROWS_WITH(k.compile(Target::parse("sm_90a"), DeviceTensor<float>::for_compile({16})),
                    Contains("test_dlpack.cpp:" + std::to_string(defined) + ": error: in kernel 'bad_layout' (defined here): "));
}
