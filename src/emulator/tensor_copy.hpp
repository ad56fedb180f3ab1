/** \file
 * The bulk copies of sm_90 and later as the PTX ISA defines them ("Tensor copy",
 * "cp.async.bulk", and the tiled mode of "Tensors": bounding box, traversal stride, out-of-bound
 * access, swizzling): what a bulk tensor load writes into shared memory and what its mbarrier is
 * told, what a tensor store or reduction does to global memory, and the plain bulk copy. The
 * interpreter decides when they happen (they are asynchronous); these functions do the copy.
 *
 * The box (TensorMapDescription's box_dims, elements innermost first) lands in shared memory
 * densely, innermost dimension first: ceil(box[i] / element_stride[i]) elements along dimension i
 * (box[0] along dimension 0, whose traversal stride is ignored without interleave), element j of
 * dimension i at tensor coordinate coords[i] + j * element_stride[i]. Every 16-byte chunk then moves
 * to tensor_swizzle_address of its address (tensor_map.hpp), applied to the absolute shared::cta
 * address, which is what the ISA's tables and its "swizzle base offset" for destinations off the
 * pattern's boundary describe. A chunk of a box whose size is not a multiple of 128 bytes can thus
 * land past the box's end within its last 128-byte line.
 *
 * Coordinates are signed. A load fills elements outside the tensor with zeros, or with a NaN under
 * the OOB-NaN fill (the canonical quiet NaN of the type here: the ISA names an "OOB-NaN" without
 * giving its bits), and its complete_tx counts the whole box's bytes. A store or reduction skips
 * elements outside the tensor; the ISA requires its starting coordinates to be non-negative.
 *
 * Not modelled (each a Fault that says so): interleaved maps, the packed sub-byte types, the FTZ
 * and TF32 types, swizzle 128B_ATOM_32B_FLIP_8B, and the load modes other than .tile (im2col,
 * gather4, scatter4). The number-format decoders the reductions use are private to
 * tensor_copy.cpp.
 */
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "emulator/fault.hpp"
#include "emulator/tensor_map.hpp"

namespace cutejit::emulator {

enum class TensorReduceOp : uint8_t { add, min, max, inc, dec, bit_and, bit_or, bit_xor };

/// A cp{.reduce}.async.bulk.tensor opcode's qualifiers.
struct BulkTensorCopy {
  bool to_shared = true;       ///< .shared::{cta,cluster}.global (a load), or .global.shared::cta
  bool shared_cluster = false; ///< the destination is named .shared::cluster (it may be another CTA's)
  uint32_t rank = 1;           ///< .1d - .5d: the number of coordinates
  bool reduce = false;         ///< cp.reduce.async.bulk.tensor
  TensorReduceOp op = TensorReduceOp::add;
  bool multicast = false;      ///< .multicast::cluster: a 16-bit CTA mask operand follows the mbarrier
  uint32_t cta_group = 1;      ///< .cta_group::2: the mbarrier may be the peer CTA's
  bool cache_hint = false;     ///< .L2::cache_hint: a 64-bit cache-policy operand comes last
};

/// Reads a full dotted opcode, e.g.
///   "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
///   "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group"
///   "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group.L2::cache_hint"
/// Its operands: a load  [dstMem], [tensorMap, {c0 .. cN-1}], [mbar] {, ctaMask} {, cache-policy};
///               a store or reduction  [tensorMap, {c0 .. cN-1}], [srcMem] {, cache-policy}.
/// Throws Fault for load modes other than .tile, the .override and report qualifiers, and
/// qualifiers the ISA does not define for the direction.
BulkTensorCopy parse_bulk_tensor(std::string_view opcode);

/// Bytes the box occupies in shared memory, out-of-bound elements included: the complete_tx count
/// of a load, per destination CTA.
uint32_t tensor_box_bytes(const TensorMapDescription& map);

/// cp.async.bulk.tensor global -> shared: writes the box at `coords` (one per dimension,
/// innermost first) into `shared` at `shared_address` (a shared::cta address, 128-byte aligned as
/// the CUDA programming guide's TMA table requires), swizzled, and returns the byte count for the
/// mbarrier's complete_tx. A multicast load is this, once per CTA of the mask, at the same address.
uint32_t tensor_load(const TensorMapDescription& map, std::span<const int32_t> coords, Memory& global, Memory& shared,
                     uint64_t shared_address);

/// cp.async.bulk.tensor shared::cta -> global: writes the box read from `shared_address` (128-byte
/// aligned, swizzled as a load would have written it) to the tensor's elements at `coords` that lie
/// inside it.
void tensor_store(const TensorMapDescription& map, std::span<const int32_t> coords, Memory& shared, uint64_t shared_address,
                  Memory& global);

/// cp.reduce.async.bulk.tensor's element-wise operation on raw bits of the map's type: `old` is the
/// global element, `source` the shared one. add: u32, s32, u64 (wrapping), f32, f16, bf16 (round to
/// nearest even, subnormals kept); min/max: u32, s32, u64, s64, f16, bf16 (a NaN operand yields
/// the other operand, two NaNs the canonical NaN; -0 < +0); inc/dec: u32, as atom.inc/.dec
/// ((old >= source) ? 0 : old + 1; (old == 0 || old > source) ? source : old - 1); and/or/xor:
/// 32- and 64-bit integer types. Results that are NaN are the canonical NaN (0x7fff, 0x7fffffff).
/// Throws Fault for a type the ISA's table does not give the operation.
uint64_t tensor_reduce_element(TensorReduceOp op, TensorDataType type, uint64_t old, uint64_t source);

/// Where a reduction's results go. The ISA makes each element's reduction atomic (.relaxed.gpu):
/// an implementation replaces the element at `address` by tensor_reduce_element(op, type, old,
/// source) so that no other write to it intervenes.
class ReduceMemory {
 public:
  virtual ~ReduceMemory() = default;
  virtual void reduce(uint64_t address, TensorReduceOp op, TensorDataType type, uint64_t source) = 0;
};

/// Reads, combines and writes through a Memory: atomic only when nothing else writes meanwhile.
class UnsynchronizedReduce final : public ReduceMemory {
 public:
  explicit UnsynchronizedReduce(Memory& memory) : memory_(memory) {}
  void reduce(uint64_t address, TensorReduceOp op, TensorDataType type, uint64_t source) override;

 private:
  Memory& memory_;
};

/// cp.reduce.async.bulk.tensor: reduces every element of the box read from `shared_address` into
/// the tensor's element at its coordinates, skipping those outside the tensor. Checks the
/// operation against the map's type before touching memory.
void tensor_reduce(TensorReduceOp op, const TensorMapDescription& map, std::span<const int32_t> coords, Memory& shared,
                   uint64_t shared_address, ReduceMemory& global);

/// cp.async.bulk (not tensor): `size` bytes from `source` in `from` to `destination` in `to`, as
/// one copy. Throws Fault unless both addresses are 16-byte aligned and `size` is a multiple of 16
/// (the ISA leaves anything else undefined). Its complete_tx count is `size`.
void bulk_copy(Memory& from, uint64_t source, Memory& to, uint64_t destination, uint32_t size);

}  // namespace cutejit::emulator
