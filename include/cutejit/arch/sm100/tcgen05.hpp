/** \file
 * The sm_100 family's raw tensor-core instructions (tcgen05, cta_group::1), as the tracer emits
 * them (src/trace/emit_sm100.cpp): Tensor Memory allocation, the MMA, its commit to an mbarrier,
 * and loads and stores between TMEM and registers. Each is checked against the target when
 * traced (sm_100a/f, sm_103a/f, sm_110a/f). The atoms in atom/sm100 give them their meaning.
 *
 * A TMEM address is 32 bits: the lane (row) in bits 16-31, the column in bits 0-15.
 *
 * CTA groups: with cta_group::2 the CTAs of ranks 2k and 2k + 1 of a cluster act as one pair:
 * each allocates the same TMEM columns, and one MMA issued by the even CTA reads A and B from
 * both CTAs' shared memory (at the same offsets) and writes D into both CTAs' TMEM. Every
 * tcgen05 op of a kernel uses the same group (checked when traced), and a group of 2 needs the
 * kernel's declared cluster (cluster_shape) to pair CTAs along x.
 */
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cutejit/arch/sm100/descriptors.hpp"
#include "cutejit/dsl/trace_api.hpp"

namespace cutejit::sm100 {
/// The CTAs a tcgen05 op works for: this CTA, or the pair of CTAs 2k, 2k + 1 of the cluster.
enum class CtaGroup : int { one = 1, two = 2 };
}  // namespace cutejit::sm100

namespace cutejit::detail {

/// tcgen05.alloc: the warp allocates `columns` TMEM columns (a power of two, 32 to 512) and the
/// hardware writes their address to the 32-bit shared-memory word at `slot`. Warp-collective;
/// for a pair, one warp of each CTA allocates, with the same slot and columns.
void tmem_alloc(ValueId slot, int columns, sm100::CtaGroup group, Where where);
/// tcgen05.relinquish_alloc_permit: this CTA allocates no more (another CTA on the SM may).
void tmem_relinquish_alloc_permit(sm100::CtaGroup group, Where where);
/// tcgen05.dealloc of `columns` columns at `address`. Warp-collective.
void tmem_dealloc(ValueId address, int columns, sm100::CtaGroup group, Where where);

/// tcgen05.mma.cta_group::N.kind::`kind`: D (TMEM at `d`) = A * B + (accumulate ? D : 0), A and
/// B from the shared-memory descriptors, shapes and types from the 32-bit instruction
/// descriptor `idesc` (an sm100::InstrDescriptor of that kind). Issued by one thread (of the
/// even CTA, for a pair); completes asynchronously (tcgen05_commit).
void tcgen05_mma(sm100::MmaKind kind, ValueId d, ValueId desc_a, ValueId desc_b, uint32_t idesc, ValueId accumulate, sm100::CtaGroup group,
                 Where where);
/// The same with A in TMEM at `a` (the ".TS" form: the ISA's [a-tmem] operand), B from its
/// shared-memory descriptor. A is read K-major only: an `idesc` that transposes A is an error.
/// The atom that lays A out in TMEM and issues this is atom/sm100/umma_tmem_a.hpp's.
void tcgen05_mma_tmem_a(sm100::MmaKind kind, ValueId d, ValueId a, ValueId desc_b, uint32_t idesc, ValueId accumulate, Where where);
/// tcgen05.mma.cta_group::1.kind::`kind`.block_scale: D = (A * SFA)(B * SFB) + (accumulate ? D :
/// 0), the scale factors in TMEM at `scale_a` and `scale_b`, one per `vector` (16 or 32)
/// elements of K. The descriptor is an sm100::BlockScaledInstrDescriptor of that kind.
void tcgen05_mma_block_scaled(sm100::BlockScaledKind kind, int vector, ValueId d, ValueId desc_a, ValueId desc_b, uint32_t idesc, ValueId scale_a,
                              ValueId scale_b, ValueId accumulate, Where where);
/// tcgen05.cp.cta_group::1.<shape>: an asynchronous copy from shared memory (the matrix at
/// `desc`, a shared-memory descriptor) into TMEM at `address`, ordered before later tcgen05.mma
/// of this thread: how scale factors reach TMEM. `shape`: "128x256b", "4x256b", "128x128b",
/// "64x128b.warpx2::02_13", "64x128b.warpx2::01_23" or "32x128b.warpx4".
void tcgen05_cp(const char* shape, ValueId address, ValueId desc, Where where);
/// tcgen05.commit: the mbarrier at `bar` (shared memory) gets one arrival when every MMA this
/// thread issued before has completed.
void tcgen05_commit(ValueId bar, Where where);
/// The same for a pair's MMAs (cta_group::2): the mbarrier at `bar`'s offset in each CTA of the
/// cluster whose bit is set in `cta_mask` (an i32 holding 16 bits) gets the arrival.
void tcgen05_commit_multicast(ValueId bar, ValueId cta_mask, Where where);
/// A TMA tile load for a pair (cp.async.bulk.tensor .cta_group::2): the box lands in this CTA's
/// shared memory at `shared_dst`, and its bytes complete on the mbarrier at `bar`'s offset in
/// the pair's even CTA, whose MMA reads both CTAs' tiles. With `cta_mask` (an i32 holding 16
/// bits; a null ValueId for none) the box is multicast: it lands at `shared_dst`'s offset in
/// every CTA of the cluster whose bit is set, and completes on the barrier at `bar`'s offset in
/// each such CTA's even CTA (.multicast::cluster.cta_group::2).
void tma_load_pair(ValueId descriptor, ValueId shared_dst, ValueId bar, std::span<const ValueId> coords, ValueId cta_mask, Where where);

/// clusterlaunchcontrol.try_cancel (sm_100 and newer, every variant): asks to cancel the launch
/// of a cluster that has not started; the 16-byte answer is written to `response` (shared
/// memory, 16-byte aligned) and completes 16 transaction bytes on the mbarrier at `bar`.
void clc_try_cancel(ValueId response, ValueId bar, Where where);
/// Reads the answer at `response`: 1 if a cluster was canceled, else 0 (query_cancel.is_canceled).
ValueId clc_is_canceled(ValueId response, Where where);
/// Reads the answer at `response`: the x index of the canceled cluster's first CTA
/// (query_cancel.get_first_ctaid::x) when clc_is_canceled says 1, else 0 (the instruction itself is
/// undefined for an answer that cancelled nothing, so it is not executed then).
ValueId clc_first_ctaid_x(ValueId response, Where where);

/// The data-movement shapes of tcgen05.ld / st: lanes x bits per access (16x32bx2: two
/// 16-lane x 32-bit accesses, the second `half_offset` columns after the first).
enum class TmemShape { s32x32b, s16x64b, s16x128b, s16x256b, s16x32bx2 };
/// 32-bit registers per thread of one access of `shape` repeated `num` times (1, 2, 4 ... 128).
int tmem_registers(TmemShape shape, int num);
/// tcgen05.ld.sync.aligned.<shape>.x<num>.b32 from `address`, then tcgen05.wait::ld in the same
/// statement: the registers (u32 bits) are ready when this returns. Warp-collective.
/// `half_offset`: 16x32bx2's immediate, in columns (0 to 511); the other shapes take none.
std::vector<ValueId> tmem_load(TmemShape shape, int num, ValueId address, Where where, int half_offset = -1);
/// tcgen05.st.sync.aligned.<shape>.x<num>.b32 of `registers` (u32 or f32) to `address`.
void tmem_store(TmemShape shape, int num, ValueId address, const std::vector<ValueId>& registers, Where where, int half_offset = -1);
/// tcgen05.wait::st: this thread's TMEM stores are done (before an MMA reads what they wrote).
void tmem_wait_store(Where where);

}  // namespace cutejit::detail
