/** \file
 * Framework tensors in and out through DLPack (PyTorch, CuPy, JAX, ...), with the ABI from
 * DLPack's own header (Debian's libdlpack-dev), not redefined here. Include this header only
 * where DLPack is used: it is not part of cutejit.hpp.
 *
 *     DeviceTensor<float> x = from_dlpack<float>(*managed->dl_tensor);   // a view, no copy
 *     DLManagedTensor* out = to_dlpack(std::move(buffer), {m, n}, gpu.ordinal());
 *
 * Everything a kernel could misread is checked: the device (CUDA memory, the expected GPU), the
 * element type, one lane, the rank (1 to 4, as DeviceTensor), and the alignment.
 */
#pragma once

#include <dlpack/dlpack.h>

#include <array>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cutejit/core/error.hpp"
#include "cutejit/jit/dynamic_arg.hpp"
#include "cutejit/runtime/buffer.hpp"

namespace cutejit {

namespace detail {

inline std::string dlpack_dtype_name(DLDataType t) {
  const char* code = t.code == kDLInt ? "int" : t.code == kDLUInt ? "uint" : t.code == kDLFloat ? "float" : t.code == kDLBfloat ? "bfloat" : nullptr;
  std::string s = code ? code : "type code " + std::to_string(int(t.code)) + " of ";
  s += std::to_string(int(t.bits));
  if (t.lanes != 1) s += "x" + std::to_string(int(t.lanes));
  return s;
}

/// The element type a DLPack dtype is, or nothing (sub-byte, complex, bool, FP8: DLPack 0.6
/// has no codes for the last two, and a guess would misread the bits).
inline std::optional<DType> dtype_from_dlpack(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  switch (t.code) {
    case kDLInt: return t.bits == 8 ? DType::i8 : t.bits == 16 ? DType::i16 : t.bits == 32 ? DType::i32 : t.bits == 64 ? std::optional(DType::i64) : std::nullopt;
    case kDLUInt: return t.bits == 8 ? DType::u8 : t.bits == 16 ? DType::u16 : t.bits == 32 ? DType::u32 : t.bits == 64 ? std::optional(DType::u64) : std::nullopt;
    case kDLFloat: return t.bits == 16 ? DType::f16 : t.bits == 32 ? DType::f32 : t.bits == 64 ? std::optional(DType::f64) : std::nullopt;
    case kDLBfloat: return t.bits == 16 ? std::optional(DType::bf16) : std::nullopt;
    default: return std::nullopt;
  }
}

inline DLDataType dlpack_dtype(DType t) {
  auto code = [&]() -> uint8_t {
    if (t == DType::bf16) return kDLBfloat;
    if (is_float(t)) return kDLFloat;
    return is_signed(t) ? kDLInt : kDLUInt;
  };
  if (is_fp8(t) || t == DType::i1)
    throw Error(std::string("a ") + std::string(name(t)) + " tensor has no DLPack type code in DLPack 0.6; export its bytes as uint8");
  return DLDataType{code(), uint8_t(8 * size_in_bytes(t)), 1};
}

/// The checks every DLPack tensor passes before cutejit reads it, as a DynamicArg.
inline DynamicArg dlpack_view(const DLTensor& t, int device) {
  auto fail = [](const std::string& why) { throw Error("cannot take this DLPack tensor: " + why); };
  if (t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost)
    fail("it is in host memory; move it to the GPU first (in PyTorch: .cuda())");
  if (t.device.device_type != kDLCUDA && t.device.device_type != kDLCUDAManaged)
    fail("its device type " + std::to_string(int(t.device.device_type)) + " is not CUDA memory (kDLCUDA or kDLCUDAManaged)");
  if (device >= 0 && t.device.device_id != device)
    fail("it is on GPU " + std::to_string(t.device.device_id) + ", and the kernel runs on GPU " + std::to_string(device));
  std::optional<DType> dtype = dtype_from_dlpack(t.dtype);
  if (!dtype)
    fail("its element type " + dlpack_dtype_name(t.dtype) + " is none cutejit takes (int, uint 8-64, float 16-64, bfloat16; one lane)");
  if (t.ndim < 1 || t.ndim > max_tensor_rank)
    fail("it has rank " + std::to_string(t.ndim) + "; a kernel's tensor argument has rank 1 to " + std::to_string(max_tensor_rank) +
         " (max_tensor_rank); view it with fewer modes");
  bool empty = false;
  for (int i = 0; i < t.ndim; ++i) empty |= t.shape[i] == 0;
  if (!t.data && t.byte_offset == 0 && !empty) fail("its data pointer is null");  // an empty tensor may have none
  const uint64_t ptr = reinterpret_cast<uint64_t>(t.data) + t.byte_offset;
  const int64_t element = size_in_bytes(*dtype);
  if (ptr % uint64_t(element) != 0) {
    char address[32];
    std::snprintf(address, sizeof address, "0x%llx", static_cast<unsigned long long>(ptr));
    fail(std::string("its address ") + address + " is not aligned to its element size (" + std::to_string(element) + " bytes)");
  }
  // Each mode written once, zeros past the rank: a DynamicArg set to zero and then filled cost as
  // much again as the checks above, and every launch from Python comes through here. No
  // strides: compact and row-major, as DLPack defines it.
  std::array<int64_t, max_tensor_rank> shape, stride;
  int64_t step = 1;
  for (int i = max_tensor_rank; i-- > 0;) {
    const bool mode = i < t.ndim;
    shape[size_t(i)] = mode ? t.shape[i] : 0;
    stride[size_t(i)] = mode ? (t.strides ? t.strides[i] : step) : 0;
    if (mode) step *= t.shape[i];
  }
  return DynamicArg{.kind = DynamicArg::Kind::tensor, .ptr = ptr, .dtype = *dtype, .rank = t.ndim, .shape = shape, .stride = stride};
}

/// The DLManagedTensor's manager: its shape and strides, and what it keeps alive.
template <class Owned>
struct DlpackHolder {
  DLManagedTensor managed{};
  std::array<int64_t, max_tensor_rank> shape{}, stride{};
  Owned owned;

  static DLManagedTensor* make(Owned owned, uint64_t ptr, DType dtype, int rank, const int64_t* shape, const int64_t* stride, int device) {
    const DLDataType type = dlpack_dtype(dtype);  // may throw: before anything is allocated or moved
    auto* h = new DlpackHolder{{}, {}, {}, std::move(owned)};
    for (int i = 0; i < rank; ++i) h->shape[size_t(i)] = shape[i], h->stride[size_t(i)] = stride[i];
    DLTensor& t = h->managed.dl_tensor;
    t.data = reinterpret_cast<void*>(ptr);
    t.device = DLDevice{kDLCUDA, device};
    t.ndim = rank;
    t.dtype = type;
    t.shape = h->shape.data();
    t.strides = h->stride.data();
    t.byte_offset = 0;
    h->managed.manager_ctx = h;
    h->managed.deleter = [](DLManagedTensor* self) { delete static_cast<DlpackHolder*>(self->manager_ctx); };
    return &h->managed;
  }
};
struct NothingOwned {};

}  // namespace detail

/// A view of a framework's CUDA tensor: no copy, strides in elements as DLPack's. `device` is
/// the GPU ordinal it must be on (-1: any). Throws cutejit::Error saying what is wrong and
/// what would do instead.
template <Element T>
DeviceTensor<T> from_dlpack(const DLTensor& tensor, int device = -1, std::source_location where = std::source_location::current()) {
  DynamicArg a;
  try {
    a = detail::dlpack_view(tensor, device);
  } catch (const Error& e) {
    throw Error(e.what(), where);
  }
  if (a.dtype != dtype_v<T>)
    throw Error("cannot take this DLPack tensor: its elements are " + std::string(name(a.dtype)) + ", not " + std::string(name(dtype_v<T>)),
                where);
  return DeviceTensor<T>::make(a.ptr, std::span<const int64_t>(a.shape.data(), size_t(a.rank)),
                               std::span<const int64_t>(a.stride.data(), size_t(a.rank)), where);
}

/// A framework tensor as a run-time-typed argument of a registered kernel (the Python path).
inline DynamicArg dynamic_arg_from_dlpack(const DLTensor& tensor, int device = -1) { return detail::dlpack_view(tensor, device); }

/// Hands `buffer` to a framework as a row-major tensor of `shape`, on GPU `device`; the memory
/// is freed when the framework calls the deleter. (A Python framework takes it wrapped in a
/// "dltensor" capsule, which the code that passes it to Python makes.)
template <Element T>
DLManagedTensor* to_dlpack(Buffer<T>&& buffer, std::initializer_list<int64_t> shape, int device,
                           std::source_location where = std::source_location::current()) {
  (void)detail::dlpack_dtype(dtype_v<T>);  // an element type DLPack cannot name: refused before the buffer is taken
  std::span<const int64_t> s(shape.begin(), shape.size());
  std::vector<int64_t> stride = detail::row_major_strides(s);
  DeviceTensor<T> view = DeviceTensor<T>::make(buffer.data(), s, stride, where);  // checks the rank
  int64_t elements = 1;
  for (int64_t e : shape) elements *= e;
  if (uint64_t(elements) != buffer.size())
    throw Error("to_dlpack: the shape has " + std::to_string(elements) + " elements and the buffer " + std::to_string(buffer.size()), where);
  return detail::DlpackHolder<Buffer<T>>::make(std::move(buffer), view.ptr, dtype_v<T>, view.rank, view.shape.data(), view.stride.data(),
                                               device);
}

/// A DLPack view of memory someone else owns, who keeps it alive while the framework uses it.
template <Element T>
DLManagedTensor* to_dlpack(const DeviceTensor<T>& view, int device) {
  return detail::DlpackHolder<detail::NothingOwned>::make({}, view.ptr, dtype_v<T>, view.rank, view.shape.data(), view.stride.data(), device);
}

}  // namespace cutejit
