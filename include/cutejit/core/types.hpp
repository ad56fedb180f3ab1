/** \file
 * Element types. A kernel's values are typed by ordinary C++ types (float, int32_t, ...) plus
 * storage types for the 16-bit and 8-bit floats; `DType` is their run-time name, used in
 * signatures, cache keys and error messages.
 */
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace cutejit {

/// IEEE half precision, stored as its bits on the host.
struct f16 {
  uint16_t bits = 0;
  f16() = default;
  explicit f16(float x);
  explicit operator float() const;
};

/// bfloat16, stored as its bits on the host.
struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float x);
  explicit operator float() const;
};

/// OCP FP8 E4M3 ("E4M3FN": 4 exponent bits, bias 7, 3 mantissa bits, no infinities, 0x7F/0xFF
/// NaN, largest finite 448), stored as its bits on the host. Converting a float rounds to
/// nearest even and saturates: anything beyond +-448, infinities included, becomes +-448, and
/// NaN becomes 0x7F, as the GPU's `cvt.rn.satfinite` does.
struct f8e4m3 {
  uint8_t bits = 0;
  f8e4m3() = default;
  explicit f8e4m3(float x);
  explicit operator float() const;
};

/// OCP FP8 E5M2 (5 exponent bits, bias 15, 2 mantissa bits, IEEE-style infinities and NaNs,
/// largest finite 57344), stored as its bits. Converting a float rounds to nearest even and
/// saturates finite overflow and infinities to +-57344; NaN becomes 0x7F.
struct f8e5m2 {
  uint8_t bits = 0;
  f8e5m2() = default;
  explicit f8e5m2(float x);
  explicit operator float() const;
};

using i1 = bool;
using i8 = int8_t;
using i16 = int16_t;
using i32 = int32_t;
using i64 = int64_t;
using u8 = uint8_t;
using u16 = uint16_t;
using u32 = uint32_t;
using u64 = uint64_t;
using f32 = float;
using f64 = double;

// New entries go last: a DType's number is part of cache keys.
enum class DType : uint8_t { i1, i8, i16, i32, i64, u32, u64, f16, bf16, f32, f64, f8e4m3, f8e5m2, u8, u16 };

std::string_view name(DType t);
int size_in_bytes(DType t);
bool is_float(DType t);
bool is_signed(DType t);
/// The 8-bit floats: storage only in a kernel (load, store, cast, select), no arithmetic.
bool is_fp8(DType t);

template <class T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::i1; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::i8; };
template <> struct dtype_of<int16_t> { static constexpr DType value = DType::i16; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::u8; };
template <> struct dtype_of<uint16_t> { static constexpr DType value = DType::u16; };
template <> struct dtype_of<uint32_t> { static constexpr DType value = DType::u32; };
template <> struct dtype_of<uint64_t> { static constexpr DType value = DType::u64; };
template <> struct dtype_of<f16> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<bf16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<f8e4m3> { static constexpr DType value = DType::f8e4m3; };
template <> struct dtype_of<f8e5m2> { static constexpr DType value = DType::f8e5m2; };

/// True for the element types a kernel can be written over.
template <class T>
concept Element = requires { dtype_of<T>::value; };

template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;
template <class T> inline constexpr bool is_floating_v =
    std::is_floating_point_v<T> || std::is_same_v<T, f16> || std::is_same_v<T, bf16> || std::is_same_v<T, f8e4m3> ||
    std::is_same_v<T, f8e5m2>;
template <class T> inline constexpr bool is_integer_v = Element<T> && !is_floating_v<T>;

}  // namespace cutejit
