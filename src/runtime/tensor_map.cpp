// TMA tensor maps: every constraint cuTensorMapEncodeTiled places on its arguments is checked
// here first, so a mistake reads as a sentence naming the user's line instead of
// CUDA_ERROR_INVALID_VALUE.
#include "cutejit/runtime/tensor_map.hpp"

#include <string>

#include "cutejit/core/error.hpp"
#include "driver/driver.hpp"

namespace cutejit::detail {

namespace {

[[noreturn]] void fail(const std::string& message, std::source_location where) {
  throw Error("error: cannot make a TMA tensor map: " + message, where);
}

bool data_type(DType t, CUtensorMapDataType& out) {
  switch (t) {
    case DType::i8:
    case DType::u8: out = CU_TENSOR_MAP_DATA_TYPE_UINT8; return true;  // the copy engine moves bits
    case DType::i16:
    case DType::u16: out = CU_TENSOR_MAP_DATA_TYPE_UINT16; return true;
    case DType::u32: out = CU_TENSOR_MAP_DATA_TYPE_UINT32; return true;
    case DType::i32: out = CU_TENSOR_MAP_DATA_TYPE_INT32; return true;
    case DType::u64: out = CU_TENSOR_MAP_DATA_TYPE_UINT64; return true;
    case DType::i64: out = CU_TENSOR_MAP_DATA_TYPE_INT64; return true;
    case DType::f16: out = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; return true;
    case DType::bf16: out = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; return true;
    case DType::f32: out = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; return true;
    case DType::f64: out = CU_TENSOR_MAP_DATA_TYPE_FLOAT64; return true;
    // The copy engine only moves bytes; FP8 travels as UINT8 (the swizzle works on bytes too).
    case DType::f8e4m3:
    case DType::f8e5m2: out = CU_TENSOR_MAP_DATA_TYPE_UINT8; return true;
    case DType::i1: return false;
  }
  return false;
}

CUtensorMapSwizzle swizzle_mode(TmaSwizzle s) {
  switch (s) {
    case TmaSwizzle::none: return CU_TENSOR_MAP_SWIZZLE_NONE;
    case TmaSwizzle::bytes32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case TmaSwizzle::bytes64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case TmaSwizzle::bytes128: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

}  // namespace

TensorMapShape tensor_map_shape(DType element, int rank, std::initializer_list<uint32_t> box, TmaSwizzle swizzle,
                                std::source_location where) {
  CUtensorMapDataType unused;
  if (!data_type(element, unused)) fail("the copy engine cannot move elements of type " + std::string(name(element)), where);
  if (rank < 1 || rank > 5) fail("a tensor map has 1 to 5 modes, not " + std::to_string(rank), where);
  if (int(box.size()) != rank)
    fail("the box has " + std::to_string(box.size()) + " extent(s) but the tensor has " + std::to_string(rank) +
             " mode(s); give one box extent per mode",
         where);
  TensorMapShape s{element, rank, {}, swizzle};
  int i = 0;
  for (uint32_t b : box) {
    if (b < 1 || b > 256) fail("box extent " + std::to_string(b) + " of mode " + std::to_string(i) + " is not in 1..256", where);
    s.box[size_t(i++)] = b;
  }
  int64_t inner_bytes = int64_t(s.box[size_t(rank - 1)]) * size_in_bytes(element);
  if (inner_bytes % 16 != 0)
    fail("the box's contiguous (last) mode spans " + std::to_string(inner_bytes) + " bytes; it must be a multiple of 16", where);
  int span = int(swizzle);
  if (span != 0 && inner_bytes > span)
    fail("the box's contiguous (last) mode spans " + std::to_string(inner_bytes) + " bytes, more than the " +
             std::to_string(span) + "-byte swizzle span; use a wider swizzle or a narrower box",
         where);
  return s;
}

void encode_tensor_map(void* out, const TensorMapShape& s, uint64_t ptr, const int64_t* extents, const int64_t* strides,
                       std::source_location where) {
  int elem = size_in_bytes(s.element);
  if (ptr == 0) fail("the tensor is a null pointer", where);
  if (ptr % 16 != 0) fail("the tensor's base address must be 16-byte aligned (it is " + std::to_string(ptr % 16) + " bytes past)", where);
  int last = s.rank - 1;
  if (strides[last] != 1)
    fail("the tensor's last mode must be contiguous (stride 1), not stride " + std::to_string(strides[last]) +
             "; view the tensor so that its contiguous mode comes last",
         where);
  // The driver lists modes innermost first: reverse the tensor's order.
  cuuint64_t dims[5], byte_strides[4];
  cuuint32_t box[5], unit[5];
  for (int i = 0; i < s.rank; ++i) {
    int mode = last - i;
    if (extents[mode] < 1 || extents[mode] > (int64_t(1) << 32))
      fail("mode " + std::to_string(mode) + " has extent " + std::to_string(extents[mode]) + "; it must be in 1..2^32", where);
    // A box may overhang the tensor, even be larger than it: loads fill what lies outside
    // with zeros (and still count the whole box's bytes), stores skip it.
    dims[i] = cuuint64_t(extents[mode]);
    box[i] = s.box[size_t(mode)];
    unit[i] = 1;
    if (i > 0) {
      int64_t bytes = strides[mode] * elem;
      if (bytes % 16 != 0 || bytes <= 0 || bytes >= (int64_t(1) << 40))
        fail("the stride of mode " + std::to_string(mode) + " is " + std::to_string(bytes) +
                 " bytes; TMA needs positive multiples of 16 below 2^40",
             where);
      byte_strides[i - 1] = cuuint64_t(bytes);
    }
  }
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  data_type(s.element, type);  // checked by tensor_map_shape
  const Driver& d = Driver::owning(ptr);
  d.check(d.cuTensorMapEncodeTiled(static_cast<CUtensorMap*>(out), type, cuuint32_t(s.rank), reinterpret_cast<void*>(ptr), dims,
                                   byte_strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(s.swizzle),
                                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          "cuTensorMapEncodeTiled");
}

}  // namespace cutejit::detail
