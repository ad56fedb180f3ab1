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
 * Compile-verified: no Blackwell GPU has run it.
 */
#pragma once

#include <utility>

#include "cutejit/arch/sm100/tcgen05.hpp"
#include "cutejit/pipeline/mbarrier.hpp"
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

}  // namespace cutejit
