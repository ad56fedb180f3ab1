/** \file
 * The check every tensor view passes before a kernel may see it (DeviceTensor::make,
 * Buffer::view, DLPack and Python arguments). A launch packs each extent and stride as an
 * int32 (KernelParam<Tensor<T>>::pack) and the kernel indexes with 32-bit integers, as CuTe
 * does by default: so every extent, stride, element count and offset must fit in an int32, and
 * the arithmetic that checks them must not overflow itself (a stride of 2^62 + 2^30 wrapped the
 * int64 bound and became 2^30 elements past the buffer once packed).
 */
#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cutejit/core/error.hpp"
#include "cutejit/runtime/buffer.hpp"

namespace cutejit::detail {

namespace {
/// What a kernel argument's 32-bit extents, strides and offsets can hold.
constexpr int64_t int32_limit = (int64_t(1) << 31) - 1;
}  // namespace

void check_view(int rank, size_t elements, std::span<const int64_t> shape, std::span<const int64_t> stride, std::source_location where) {
  if (rank < 1 || rank > max_tensor_rank)
    throw Error(fmt::format("a kernel's tensor argument has 1 to {} modes, not {} (the specialization holds the facts of {}); inside a "
                            "kernel, tensors of any rank are made from a layout (local_tile, partitions)",
                            max_tensor_rank, rank, max_tensor_rank),
                where);
  if (shape.size() != stride.size())
    throw Error(fmt::format("a tensor view needs as many strides ({}) as shape entries ({})", stride.size(), shape.size()), where);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0 || stride[i] < 0) throw Error("tensor shapes and strides must not be negative", where);
    if (shape[i] > int32_limit || stride[i] > int32_limit)
      throw Error(fmt::format("mode {} of the tensor view has extent {} and stride {}, past the 32-bit indexing limit of a kernel's "
                              "tensor argument: each extent and stride travels as an int32, at most 2^31 - 1 = {}",
                              i, shape[i], stride[i], int32_limit),
                  where);
  }
  // An empty view reaches no element, whatever its strides.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return;
  // Up to four terms below 2^62 each can still pass 2^63: checked arithmetic throughout.
  int64_t last = 0, count = 1;
  bool overflow = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t reach = 0;
    overflow |= __builtin_mul_overflow(shape[i] - 1, stride[i], &reach);
    overflow |= __builtin_add_overflow(last, reach, &last);
    overflow |= __builtin_mul_overflow(count, shape[i], &count);
  }
  // Formatted only for an error: every launch from Python or a Buffer passes through here.
  auto view = [&] { return fmt::format("({}):({})", fmt::join(shape, ","), fmt::join(stride, ",")); };
  if (overflow || last > int32_limit || count > int32_limit)
    throw Error(fmt::format("the tensor view {} {}, past the 32-bit indexing limit of a kernel's tensor argument (offsets and element "
                            "counts up to 2^31 - 1 = {})",
                            view(), last > int32_limit || overflow ? "reaches past element 2^31 - 1" : "holds more than 2^31 - 1 elements",
                            int32_limit),
                where);
  if (elements != size_t(-1) && uint64_t(last) >= elements)
    throw Error(fmt::format("the view {} reaches element {} but the buffer holds {}", view(), last, elements), where);
}

}  // namespace cutejit::detail
