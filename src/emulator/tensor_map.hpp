/** \file
 * Tensor maps on the emulated device. On a GPU, a CUtensorMap is 128 opaque bytes that the
 * driver's cuTensorMapEncodeTiled writes and the copy engine (TMA) reads; on the emulated device
 * the emulator writes its own encoding of what cuTensorMapEncodeTiled was given into those bytes,
 * and the bulk tensor copies (tensor_copy.hpp) read it back. The encoding starts with a magic and
 * version word, so that bytes the emulator did not write are refused rather than misread.
 *
 * It also holds the two facts about a map that several instructions need: the constraints the CUDA
 * driver documents for cuTensorMapEncodeTiled (checked at encode time, as the driver would refuse
 * the map), and the shared-memory swizzle of the PTX ISA's "Swizzling Modes" section.
 *
 * Every enumeration keeps the CUDA driver's numbering (cuda.h), so the emulated driver can pass the
 * caller's integers through without cuda.h:
 *   CUtensorMapDataType      UINT8 0, UINT16 1, UINT32 2, INT32 3, UINT64 4, INT64 5, FLOAT16 6,
 *                            FLOAT32 7, FLOAT64 8, BFLOAT16 9, FLOAT32_FTZ 10, TFLOAT32 11,
 *                            TFLOAT32_FTZ 12, 16U4_ALIGN8B 13, 16U4_ALIGN16B 14, 16U6_ALIGN16B 15
 *   CUtensorMapInterleave    NONE 0, 16B 1, 32B 2
 *   CUtensorMapSwizzle       NONE 0, 32B 1, 64B 2, 128B 3, 128B_ATOM_32B 4,
 *                            128B_ATOM_32B_FLIP_8B 5, 128B_ATOM_64B 6
 *   CUtensorMapL2promotion   NONE 0, L2_64B 1, L2_128B 2, L2_256B 3
 *   CUtensorMapFloatOOBfill  NONE 0 (zeros), NAN_REQUEST_ZERO_FMA 1
 * Dimensions are listed innermost first, as the driver takes them: dimension 0 is contiguous, and
 * global_strides[i] is the byte stride of dimension i + 1.
 */
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "emulator/fault.hpp"

namespace cutejit::emulator {

enum class TensorDataType : uint8_t {
  uint8 = 0, uint16 = 1, uint32 = 2, int32 = 3, uint64 = 4, int64 = 5, float16 = 6, float32 = 7, float64 = 8,
  bfloat16 = 9, float32_ftz = 10, tfloat32 = 11, tfloat32_ftz = 12, u4x16_align8 = 13, u4x16_align16 = 14,
  u6x16_align16 = 15,
};
enum class TensorInterleave : uint8_t { none = 0, b16 = 1, b32 = 2 };
enum class TensorSwizzle : uint8_t { none = 0, b32 = 1, b64 = 2, b128 = 3, b128_atom32 = 4, b128_atom32_flip8 = 5, b128_atom64 = 6 };
enum class TensorL2Promotion : uint8_t { none = 0, b64 = 1, b128 = 2, b256 = 3 };
enum class TensorOobFill : uint8_t { zeros = 0, nan_request_zero_fma = 1 };

/// The arguments of cuTensorMapEncodeTiled (the map's own address aside).
struct TensorMapDescription {
  TensorDataType data_type = TensorDataType::uint8;
  uint32_t rank = 1;
  uint64_t global_address = 0;
  std::array<uint64_t, 5> global_dims{};     ///< elements per dimension, innermost first
  std::array<uint64_t, 4> global_strides{};  ///< bytes, of dimensions 1 .. rank - 1
  std::array<uint32_t, 5> box_dims{};        ///< elements the box spans per dimension
  std::array<uint32_t, 5> element_strides{1, 1, 1, 1, 1};  ///< traversal strides (dimension 0's is ignored without interleave)
  TensorInterleave interleave = TensorInterleave::none;
  TensorSwizzle swizzle = TensorSwizzle::none;
  TensorL2Promotion l2_promotion = TensorL2Promotion::none;  ///< a cache hint: no effect here
  TensorOobFill oob_fill = TensorOobFill::zeros;
};

/// Bytes per element; 0 for the packed sub-byte types (13-15), whose values share bytes.
uint32_t tensor_element_bytes(TensorDataType type);
/// True for the floating-point types (the ones an OOB-NaN fill applies to).
bool is_float_tensor_type(TensorDataType type);

/// Empty when `d` meets every constraint cuTensorMapEncodeTiled documents (CUDA driver API,
/// "Tensor Map Object Management"); otherwise the first one it breaks, with the offending values:
/// rank 1-5 (3-5 with interleave); a 16-byte aligned address (32 with INTERLEAVE_32B or the
/// 16U4_ALIGN16B / 16U6_ALIGN16B types); dimensions 1 .. 2^32 (packed types: dimension 0 a multiple
/// of 128, or of 2 for 16U4_ALIGN8B); strides multiples of 16 (32 with INTERLEAVE_32B or the
/// ALIGN16B packed types) below 2^40; box dimensions 1-256, the box's inner dimension a multiple of
/// 16 bytes without interleave (exactly 128 values for the ALIGN16B packed types); element strides
/// 1-8; INTERLEAVE_32B only with SWIZZLE_32B; without interleave, a swizzled box's inner dimension
/// no wider than the swizzle span (32, 64 or 128 bytes); OOB-NaN fill only for float types.
std::string tensor_map_error(const TensorMapDescription& d);

/// Writes `d` into the 128 bytes of a CUtensorMap. Throws Fault with tensor_map_error's words when
/// `d` is not a valid map (the emulated cuTensorMapEncodeTiled reports them as its error).
void encode_tensor_map(const TensorMapDescription& d, std::span<uint8_t, 128> out);

/// The description encode_tensor_map wrote into `bytes`. Throws Fault when the bytes do not start
/// with the emulator's magic and version (a map the emulator did not make: a driver-encoded map,
/// or uninitialised or overwritten memory) or no longer describe a valid map.
TensorMapDescription decode_tensor_map(std::span<const uint8_t, 128> bytes);

/// The shared-memory address at which the copy engine puts (or, storing, reads) the bytes that
/// an unswizzled copy would put at `address`. The ISA defines each mode by a table of 16-byte
/// chunks in 128-byte lines whose pattern starts at a 256-, 512- or 1024-byte boundary (and, for a
/// destination off that boundary, by the "swizzle base offset" (address / 128) % 8, % 4 or % 2),
/// which is an XOR of address bits:
///   32B:               bit 4 ^= bit 7              (CuTe Swizzle<1,4,3>)
///   64B:               bits [4,6) ^= bits [7,9)    (Swizzle<2,4,3>)
///   128B:              bits [4,7) ^= bits [7,10)   (Swizzle<3,4,3>)
///   128B, 32B atoms:   bits [5,7) ^= bits [7,9)    (Swizzle<2,5,2>)
///   128B, 64B atoms:   bit 6 ^= bit 7              (Swizzle<1,6,1>)
/// Throws Fault for 128B_ATOM_32B_FLIP_8B, whose 8-byte flip the emulator does not model.
uint64_t tensor_swizzle_address(TensorSwizzle swizzle, uint64_t address);

}  // namespace cutejit::emulator
