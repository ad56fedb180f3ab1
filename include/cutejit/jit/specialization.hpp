/** \file
 * A specialization of a kernel as data: the kernel's name and the words that `Kernel` derives
 * from launch arguments (element types, ranks, alignment, divisibility, unit strides, static
 * values). The words alone decide what is traced, so a specialization recorded in one process
 * (`CUTEJIT_RECORD=FILE`) can be compiled in another (`cutejit-cache warm`) or exported ahead
 * of time (`cutejit-cache export`) with no arguments at hand.
 *
 * The words' encoding lives here, next to the code that reads them back outside the template
 * (the exporter's argument checks), so that the two cannot drift apart.
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cutejit/core/kernel_abi.hpp"
#include "cutejit/core/types.hpp"

namespace cutejit {

struct Specialization {
  std::string kernel;
  std::vector<uint64_t> words;
  std::string target;  ///< where it was recorded: the target it was launched on (may be empty)
  bool operator==(const Specialization&) const = default;
};

/// A manifest is JSON Lines: one JSON object per line,
///   {"kernel": "vector_add", "target": "sm_90a", "words": ["0x0109010400000401", ...]}
/// Lines can be appended by several processes at once, and `cat a b > c` merges manifests.
std::string manifest_line(const Specialization& s);
/// Every line of a manifest file, exact duplicates removed, in first-seen order. Throws
/// cutejit::Error naming the file and line of anything it cannot read.
std::vector<Specialization> read_manifest(const std::filesystem::path& file);
/// Appends one line to a manifest with a single write (O_APPEND), so that processes sharing the
/// file never interleave their lines. Returns an error message, empty on success.
std::string append_to_manifest(const std::filesystem::path& file, const Specialization& s);

namespace detail {

/// The first word of every parameter: its kind and element type in the top 16 bits.
enum class ParamKind : uint64_t { tensor = 1, scalar = 2, constant = 3, tensor_map = 4 };
constexpr uint64_t param_word(ParamKind k, DType t) { return uint64_t(k) << 56 | uint64_t(t) << 48; }
constexpr uint64_t param_header_mask = ~uint64_t(0) << 48;
constexpr ParamKind param_kind(uint64_t word) { return ParamKind(word >> 56); }
constexpr DType param_dtype(uint64_t word) { return DType(word >> 48 & 0xff); }
/// Words per parameter, the first one included.
constexpr int param_words(ParamKind k) { return k == ParamKind::constant || k == ParamKind::tensor_map ? 2 : 1; }

/// What a tensor parameter's word states about its argument. Each fact is a power of two the
/// argument is known to be a multiple of (log2, at most 4: 16), so tiles of it can be proven
/// aligned for vector accesses, as Triton's divisibility specialization does.
struct TensorFacts {
  static constexpr int max_rank = max_tensor_rank;  ///< the word has room for no more
  int rank = 0;
  int alignment_log2 = 0;               ///< of the data pointer, in bytes
  int shape_log2[max_rank] = {};        ///< divisibility of each extent
  int stride_log2[max_rank] = {};       ///< divisibility of each stride (unused for a unit stride)
  bool unit_stride[max_rank] = {};      ///< the stride is a static 1

  /// log2 of the power of two (at most 16) dividing x; 0 is divisible by everything.
  static constexpr int divisibility_log2(int64_t x) {
    if (x == 0) return 4;
    int n = 0;
    while (n < 4 && (uint64_t(x) >> n & 1) == 0) ++n;
    return n;
  }
  constexpr uint64_t encode(DType element) const {
    uint64_t w = param_word(ParamKind::tensor, element) | uint64_t(rank) << 40 | uint64_t(alignment_log2) << 32;
    for (int i = 0; i < rank; ++i) {
      w |= uint64_t(unit_stride[i]) << i;
      w |= uint64_t(shape_log2[i] | stride_log2[i] << 3) << (8 + 6 * i);
    }
    return w;
  }
  static constexpr TensorFacts decode(uint64_t w) {
    TensorFacts f;
    f.rank = int(w >> 40 & 0xff);
    f.alignment_log2 = int(w >> 32 & 0xff);
    for (int i = 0; i < f.rank && i < max_rank; ++i) {
      f.unit_stride[i] = (w >> i & 1) != 0;
      f.shape_log2[i] = int(w >> (8 + 6 * i) & 7);
      f.stride_log2[i] = int(w >> (8 + 6 * i + 3) & 7);
    }
    return f;
  }
};

/// What a tensor-map parameter's two words state: the rank, the swizzle and the box (extents
/// 1..256, 8 bits each). The encoded bytes of the map itself are an argument, not part of it.
struct TensorMapFacts {
  static constexpr int max_rank = 5;
  int rank = 0;
  int swizzle_bytes = 0;             ///< 0, 32, 64 or 128
  uint32_t box[max_rank] = {};       ///< in the tensor's mode order
  bool operator==(const TensorMapFacts&) const = default;

  struct Words {
    uint64_t first, box;
  };
  constexpr Words encode(DType element) const {
    uint64_t box_word = 0;
    for (int i = 0; i < rank && i < max_rank; ++i) box_word |= uint64_t(box[i] - 1) << (8 * i);
    return {param_word(ParamKind::tensor_map, element) | uint64_t(rank) << 40 | uint64_t(swizzle_bytes) << 32, box_word};
  }
  static constexpr TensorMapFacts decode(const uint64_t* w) {
    TensorMapFacts f;
    f.rank = int(w[0] >> 40 & 0xff);
    f.swizzle_bytes = int(w[0] >> 32 & 0xff);
    for (int i = 0; i < f.rank && i < max_rank; ++i) f.box[i] = uint32_t(w[1] >> (8 * i) & 0xff) + 1;
    return f;
  }
};

}  // namespace detail
}  // namespace cutejit
