/** \file
 * `PipelineTmaUmma` (CuTeDSL's PipelineTmaUmma): a TMA producer feeding tcgen05.mma, sm_100
 * family. The producer side is PipelineTmaAsync's; the consumer is the one thread that issues
 * the MMAs, and it frees a stage with `tcgen05.commit` on the stage's "empty" mbarrier instead
 * of an arrival: the barrier then completes when the MMAs reading the stage are done, with no
 * thread waiting for them.
 *
 *   producer (one thread):              MMA issuer (one thread):
 *     pipe.producer_acquire(s);            pipe.consumer_wait(s);
 *     pipe.load(map, dst, s, {...});       gemm(atom, d, A(s), B(s), accumulate);
 *     pipe.producer_commit(s);             pipe.consumer_release(s);   // tcgen05.commit
 */
#pragma once

#include "cutejit/atom/sm100/umma.hpp"
#include "cutejit/pipeline/pipeline.hpp"

namespace cutejit {

class PipelineTmaUmma : public PipelineTmaAsync {
 public:
  /// `barriers`: barrier_bytes(stages) of shared memory; `stage_bytes`: the TMA bytes of a stage.
  PipelineTmaUmma(const Pointer<uint64_t>& barriers, int stages, int stage_bytes, detail::Where w = detail::Where::current())
      : PipelineTmaAsync(barriers, stages, /*consumers=*/1, stage_bytes, w) {}

  /// Frees stage `s` once the MMAs issued so far (those reading it included) are done.
  void consumer_release(const PipelineState& s, detail::Where w = detail::Where::current()) const {
    tcgen05_commit(empty(s.index), w);
  }
};

}  // namespace cutejit
