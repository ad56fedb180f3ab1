#include "emulator/tensor_map.hpp"

#include <cstring>

namespace cutejit::emulator {

namespace {

/// "CJTM" in the first four bytes, then the encoding's version: a layout change bumps it, so a
/// stale map is refused rather than misread.
constexpr uint32_t magic = 0x4D544A43u;
constexpr uint16_t version = 1;

// Byte offsets of the fields in the 128 bytes.
constexpr size_t at_magic = 0, at_version = 4, at_type = 6, at_rank = 7, at_interleave = 8, at_swizzle = 9, at_l2 = 10,
                 at_oob = 11, at_address = 16, at_dims = 24, at_strides = 64, at_box = 96, at_element_strides = 116,
                 at_end = 121;

std::string str(uint64_t v) { return std::to_string(v); }

/// Bits of memory per value, packed types included (16 values in 8 or 16 bytes).
uint32_t value_bits(TensorDataType t) {
  switch (t) {
    case TensorDataType::u4x16_align8: return 4;
    case TensorDataType::u4x16_align16:
    case TensorDataType::u6x16_align16: return 8;
    default: return 8 * tensor_element_bytes(t);
  }
}

bool align16_packed(TensorDataType t) { return t == TensorDataType::u4x16_align16 || t == TensorDataType::u6x16_align16; }

uint32_t swizzle_span(TensorSwizzle s) {
  switch (s) {
    case TensorSwizzle::none: return 0;
    case TensorSwizzle::b32: return 32;
    case TensorSwizzle::b64: return 64;
    default: return 128;
  }
}

template <class T>
void put(std::span<uint8_t, 128> out, size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof v);
}
template <class T>
T get(std::span<const uint8_t, 128> in, size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  return v;
}

}  // namespace

uint32_t tensor_element_bytes(TensorDataType type) {
  switch (type) {
    case TensorDataType::uint8: return 1;
    case TensorDataType::uint16:
    case TensorDataType::float16:
    case TensorDataType::bfloat16: return 2;
    case TensorDataType::uint32:
    case TensorDataType::int32:
    case TensorDataType::float32:
    case TensorDataType::float32_ftz:
    case TensorDataType::tfloat32:
    case TensorDataType::tfloat32_ftz: return 4;
    case TensorDataType::uint64:
    case TensorDataType::int64:
    case TensorDataType::float64: return 8;
    default: return 0;
  }
}

bool is_float_tensor_type(TensorDataType type) {
  switch (type) {
    case TensorDataType::float16:
    case TensorDataType::float32:
    case TensorDataType::float64:
    case TensorDataType::bfloat16:
    case TensorDataType::float32_ftz:
    case TensorDataType::tfloat32:
    case TensorDataType::tfloat32_ftz: return true;
    default: return false;
  }
}

std::string tensor_map_error(const TensorMapDescription& d) {
  if (uint32_t(d.data_type) > 15) return "tensor map: data type " + str(uint32_t(d.data_type)) + " is not a CUtensorMapDataType (0-15)";
  if (uint32_t(d.interleave) > 2) return "tensor map: interleave " + str(uint32_t(d.interleave)) + " is not a CUtensorMapInterleave (0-2)";
  if (uint32_t(d.swizzle) > 6) return "tensor map: swizzle " + str(uint32_t(d.swizzle)) + " is not a CUtensorMapSwizzle (0-6)";
  if (uint32_t(d.l2_promotion) > 3)
    return "tensor map: L2 promotion " + str(uint32_t(d.l2_promotion)) + " is not a CUtensorMapL2promotion (0-3)";
  if (uint32_t(d.oob_fill) > 1) return "tensor map: OOB fill " + str(uint32_t(d.oob_fill)) + " is not a CUtensorMapFloatOOBfill (0-1)";
  const bool interleaved = d.interleave != TensorInterleave::none;
  if (d.rank < 1 || d.rank > 5) return "tensor map: rank " + str(d.rank) + " is not in 1-5";
  if (interleaved && d.rank < 3) return "tensor map: an interleaved layout needs rank 3 or more, not " + str(d.rank);

  const TensorDataType t = d.data_type;
  const bool packed = tensor_element_bytes(t) == 0;
  const uint64_t address_alignment = (d.interleave == TensorInterleave::b32 || align16_packed(t)) ? 32 : 16;
  if (d.global_address % address_alignment)
    return "tensor map: the global address " + str(d.global_address) + " is not " + str(address_alignment) + "-byte aligned";

  for (uint32_t i = 0; i < d.rank; ++i)
    if (d.global_dims[i] < 1 || d.global_dims[i] > (uint64_t(1) << 32))
      return "tensor map: global dimension " + str(i) + " is " + str(d.global_dims[i]) + ", not in 1 .. 2^32";
  if (align16_packed(t) && d.global_dims[0] % 128)
    return "tensor map: with a 16U4_ALIGN16B / 16U6_ALIGN16B type, global dimension 0 must be a multiple of 128, not " +
           str(d.global_dims[0]);
  if (t == TensorDataType::u4x16_align8 && d.global_dims[0] % 2)
    return "tensor map: with the 16U4_ALIGN8B type, global dimension 0 must be even, not " + str(d.global_dims[0]);

  const uint64_t stride_multiple = (d.interleave == TensorInterleave::b32 || align16_packed(t)) ? 32 : 16;
  for (uint32_t i = 0; i + 1 < d.rank; ++i) {
    const uint64_t s = d.global_strides[i];
    if (s % stride_multiple || s >= (uint64_t(1) << 40))
      return "tensor map: the stride of dimension " + str(i + 1) + " is " + str(s) + " bytes; it must be a multiple of " +
             str(stride_multiple) + " below 2^40";
  }

  for (uint32_t i = 0; i < d.rank; ++i) {
    if (d.box_dims[i] < 1 || d.box_dims[i] > 256) return "tensor map: box dimension " + str(i) + " is " + str(d.box_dims[i]) + ", not in 1-256";
    if (d.element_strides[i] < 1 || d.element_strides[i] > 8)
      return "tensor map: element stride " + str(i) + " is " + str(d.element_strides[i]) + ", not in 1-8";
  }
  const uint64_t inner_bits = uint64_t(d.box_dims[0]) * value_bits(t);
  if (!interleaved && inner_bits % 128)
    return "tensor map: the box's inner dimension spans " + str(inner_bits / 8) + (inner_bits % 8 ? ".5" : "") +
           " bytes; without interleave it must be a multiple of 16";
  if (align16_packed(t) && d.box_dims[0] != 128)
    return "tensor map: with a 16U4_ALIGN16B / 16U6_ALIGN16B type, box dimension 0 must be 128, not " + str(d.box_dims[0]);

  if (d.interleave == TensorInterleave::b32 && d.swizzle != TensorSwizzle::b32)
    return "tensor map: INTERLEAVE_32B needs SWIZZLE_32B, not swizzle " + str(uint32_t(d.swizzle));
  const uint32_t span = swizzle_span(d.swizzle);
  if (!interleaved && span && inner_bits > 8 * uint64_t(span))
    return "tensor map: the box's inner dimension spans " + str(inner_bits / 8) + " bytes, more than the " + str(span) +
           "-byte swizzle span";
  if (d.oob_fill == TensorOobFill::nan_request_zero_fma && (!is_float_tensor_type(t) || packed))
    return "tensor map: the OOB-NaN fill needs a floating-point data type, not type " + str(uint32_t(t));
  return {};
}

void encode_tensor_map(const TensorMapDescription& d, std::span<uint8_t, 128> out) {
  if (std::string e = tensor_map_error(d); !e.empty()) throw Fault(e);
  std::memset(out.data(), 0, out.size());
  put(out, at_magic, magic);
  put(out, at_version, version);
  put(out, at_type, uint8_t(d.data_type));
  put(out, at_rank, uint8_t(d.rank));
  put(out, at_interleave, uint8_t(d.interleave));
  put(out, at_swizzle, uint8_t(d.swizzle));
  put(out, at_l2, uint8_t(d.l2_promotion));
  put(out, at_oob, uint8_t(d.oob_fill));
  put(out, at_address, d.global_address);
  for (size_t i = 0; i < 5; ++i) {
    put(out, at_dims + 8 * i, d.global_dims[i]);
    put(out, at_box + 4 * i, d.box_dims[i]);
    put(out, at_element_strides + i, uint8_t(d.element_strides[i]));
  }
  for (size_t i = 0; i < 4; ++i) put(out, at_strides + 8 * i, d.global_strides[i]);
}

TensorMapDescription decode_tensor_map(std::span<const uint8_t, 128> bytes) {
  const uint32_t m = get<uint32_t>(bytes, at_magic);
  const uint16_t v = get<uint16_t>(bytes, at_version);
  bool padding_clear = get<uint32_t>(bytes, 12) == 0;
  for (size_t i = at_end; i < 128; ++i) padding_clear = padding_clear && bytes[i] == 0;
  if (m != magic || v != version || !padding_clear)
    throw Fault("the tensor map's 128 bytes were not made by the emulated device's cuTensorMapEncodeTiled (magic " +
                str(m) + ", version " + str(v) + "; a driver-encoded map, or memory that is not a tensor map)");
  TensorMapDescription d;
  d.data_type = TensorDataType(bytes[at_type]);
  d.rank = bytes[at_rank];
  d.interleave = TensorInterleave(bytes[at_interleave]);
  d.swizzle = TensorSwizzle(bytes[at_swizzle]);
  d.l2_promotion = TensorL2Promotion(bytes[at_l2]);
  d.oob_fill = TensorOobFill(bytes[at_oob]);
  d.global_address = get<uint64_t>(bytes, at_address);
  for (size_t i = 0; i < 5; ++i) {
    d.global_dims[i] = get<uint64_t>(bytes, at_dims + 8 * i);
    d.box_dims[i] = get<uint32_t>(bytes, at_box + 4 * i);
    d.element_strides[i] = bytes[at_element_strides + i];
  }
  for (size_t i = 0; i < 4; ++i) d.global_strides[i] = get<uint64_t>(bytes, at_strides + 8 * i);
  if (std::string e = tensor_map_error(d); !e.empty()) throw Fault(e + " (the map's bytes were changed after encoding)");
  return d;
}

uint64_t tensor_swizzle_address(TensorSwizzle swizzle, uint64_t a) {
  switch (swizzle) {
    case TensorSwizzle::none: return a;
    case TensorSwizzle::b32: return a ^ ((a >> 7 & 1u) << 4);
    case TensorSwizzle::b64: return a ^ ((a >> 7 & 3u) << 4);
    case TensorSwizzle::b128: return a ^ ((a >> 7 & 7u) << 4);
    case TensorSwizzle::b128_atom32: return a ^ ((a >> 7 & 3u) << 5);
    case TensorSwizzle::b128_atom64: return a ^ ((a >> 7 & 1u) << 6);
    default: break;
  }
  throw Fault("tensor map swizzle " + str(uint32_t(swizzle)) +
              " (128-byte with 32-byte atoms and the 8-byte flip) is not modelled by the emulator");
}

}  // namespace cutejit::emulator
