/** \file
 * A dynamic persistent tile scheduler by cluster launch control (sm_100 and newer; CuTeDSL's
 * and CUTLASS's "CLC" scheduler). The grid has one CTA per tile. A CTA computes its own tile
 * (`first_tile()`, its block index), then asks the hardware to cancel the launch of a CTA that
 * has not started yet and takes that CTA's tile instead, until no CTA is left to cancel. So the
 * CTAs that fit on the GPU do all the tiles, handed out in launch order as each frees up: a
 * persistent kernel whose tiles of unequal length (causal attention, ragged batches) balance
 * as the hardware's own dispatch would, with none of the launch overhead of the CTAs it cancels.
 *
 *     ClcTileScheduler clc(response, barrier);    // 16 bytes and an mbarrier of shared memory
 *     if_(thread_idx().x == 0, [&] { clc.init(); fence_mbarrier_init(); });
 *     sync_threads();
 *     Var<int32_t> tile = clc.first_tile(), asks = 0;
 *     Var<int32_t> more = 1;
 *     while_([&] { return Int(more) != 0; }, [&] {
 *       if_(thread_idx().x == 0, [&] { clc.request(); });  // ask while this tile is computed
 *       ... compute tile `tile` ...
 *       auto [got, next] = clc.answer(asks);              // every thread waits for the answer
 *       sync_threads();                                   // all have read it before the next ask
 *       more = select(got, 1, 0); tile = next; asks += 1;
 *     });
 *
 * The rules the ISA sets: one thread asks; a CTA asks again only after reading a successful
 * answer (asking after a failed one is undefined), and never reads the tile of a failed one.
 *
 * A warp-specialised kernel, whose roles reach a tile's end at different times, shares the
 * answers through `PipelineClc`: a ring of responses, each freed once every role has read it.
 * Compile-verified: no Blackwell GPU has run either.
 */
#pragma once

#include <utility>

#include "cutejit/arch/sm100/tcgen05.hpp"
#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/pipeline/mbarrier.hpp"
#include "cutejit/pipeline/pipeline.hpp"
#include "cutejit/tensor/pointer.hpp"

namespace cutejit {

class ClcTileScheduler {
 public:
  /// `response`: 16 bytes of shared memory, 16-byte aligned, where the hardware writes each
  /// answer; `barrier`: an mbarrier the answer completes.
  ClcTileScheduler(const Pointer<uint32_t>& response, const Pointer<uint64_t>& barrier) : response_(response), barrier_(barrier) {}

  /// One thread, then fence_mbarrier_init() and a block barrier before the first request.
  void init(detail::Where w = detail::Where::current()) const { mbarrier_init(barrier_, Operand<int32_t>(1, w)); }
  /// The CTA's own tile: its block index.
  Int first_tile() const { return block_idx().x; }
  /// One thread: asks to cancel a CTA not yet launched. The answer arrives asynchronously,
  /// completing the barrier's phase with its 16 bytes.
  void request(detail::Where w = detail::Where::current()) const {
    mbarrier_arrive_expect_tx(barrier_, Operand<int32_t>(16, w));
    detail::clc_try_cancel(response_.id(), barrier_.id(), w);
  }
  /// Every thread that needs it: waits for the answer to request number `k` (from 0) and reads
  /// whether it got a tile, and which (the canceled CTA's block index; 0 when it got none).
  std::pair<Bool, Int> answer(const Int& k, detail::Where w = detail::Where::current()) const {
    mbarrier_wait(barrier_, Operand<int32_t>(k % 2, w));
    Bool got = Int(Value<int32_t>(detail::clc_is_canceled(response_.id(), w))) != 0;
    Int tile = select(got, Int(Value<int32_t>(detail::clc_first_ctaid_x(response_.id(), w))), Int(0));
    return {got, tile};
  }

 private:
  Pointer<uint32_t> response_;
  Pointer<uint64_t> barrier_;
};

/// Cluster launch control answers shared by the roles of a warp-specialised kernel: a ring of
/// `slots` 16-byte responses, each written by one try_cancel (completing its "full" barrier)
/// and freed once each of `readers` has read it. One thread, the requester, asks for the tile
/// after its k-th while that tile is computed; every role reads answer k at the end of its
/// k-th tile:
///
///     Var<int32_t> k = 0, tile = clc.first_tile(), more = 1;
///     while_([&] { return Int(more) != 0; }, [&] {
///       if (requester) clc.request(k);
///       ... tile `tile` ...
///       auto [got, next] = clc.answer(k);   // each thread of the role that uses it
///       clc.release(k);                     // one thread of the role, after they all read it
///       more = select(got, 1, 0); tile = next; k = k + 1;
///     });
///
/// The requester asks again only after reading a successful answer, as the ISA requires.
class PipelineClc : public detail::StageBarriers {
 public:
  /// Shared memory the responses take (16-byte aligned); the barriers take barrier_bytes(slots).
  static constexpr int response_bytes(int slots) { return 16 * slots; }

  PipelineClc(const Pointer<uint32_t>& responses, const Pointer<uint64_t>& barriers, int slots, int readers,
              detail::Where w = detail::Where::current())
      : StageBarriers(barriers, slots, readers, w), responses_(responses) {}

  /// One thread, then fence_mbarrier_init() and a block barrier before the first request.
  void init(detail::Where w = detail::Where::current()) const { init_barriers(1, w); }
  /// The CTA's own tile: its block index.
  Int first_tile() const { return block_idx().x; }
  /// The requester: asks for the tile after its `k`-th (from 0), into slot k % slots, once every
  /// reader has freed what that slot held.
  void request(const Int& k, detail::Where w = detail::Where::current()) const {
    PipelineState s = PipelineState::at(k, stages_);
    wait_empty(s, w);
    mbarrier_arrive_expect_tx(full(s.index), Operand<int32_t>(16, w));
    detail::clc_try_cancel(response(s.index).id(), full(s.index).id(), w);
  }
  /// A reader's thread: waits for answer `k` and reads whether it got a tile, and which (0 when
  /// it got none).
  std::pair<Bool, Int> answer(const Int& k, detail::Where w = detail::Where::current()) const {
    PipelineState s = PipelineState::at(k, stages_);
    consumer_wait(s, w);
    Pointer<uint32_t> r = response(s.index);
    Bool got = Int(Value<int32_t>(detail::clc_is_canceled(r.id(), w))) != 0;
    return {got, select(got, Int(Value<int32_t>(detail::clc_first_ctaid_x(r.id(), w))), Int(0))};
  }
  /// One thread per reader, once the reader's threads have read answer `k`: frees its slot.
  void release(const Int& k, detail::Where w = detail::Where::current()) const {
    consumer_release(PipelineState::at(k, stages_), w);
  }

 private:
  Pointer<uint32_t> response(const Int& slot) const { return responses_ + slot * 4; }
  Pointer<uint32_t> responses_;
};

}  // namespace cutejit
