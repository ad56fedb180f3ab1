/** \file
 * The two pipelines of an sm_100 GEMM (CuTeDSL's PipelineTmaUmma and PipelineUmmaAsync):
 *
 *  - `PipelineTmaUmma`: a TMA producer feeding tcgen05.mma. The producer side is
 *    PipelineTmaAsync's; the consumer is the one thread that issues the MMAs, and it frees a
 *    stage with `tcgen05.commit` on the stage's "empty" mbarrier instead of an arrival: the
 *    barrier then completes when the MMAs reading the stage are done, with no thread waiting.
 *  - `PipelineUmmaAsync`: the MMA thread feeding the epilogue through accumulator buffers in
 *    TMEM. The MMA thread acquires a buffer (waits until the epilogue has read it) and commits
 *    it with `tcgen05.commit` on its "full" barrier (complete when its MMAs are); the epilogue
 *    threads wait for it, read it, and each arrives on "empty".
 *
 *   TMA producer:          MMA issuer:                           epilogue threads:
 *     ab.producer_acquire    acc.producer_acquire(t)               acc.consumer_wait(t)
 *     ab.load ...            ab.consumer_wait(s) ...               tmem_load ...
 *     ab.producer_commit       gemm(...); ab.consumer_release(s)   acc.consumer_release(t)
 *                            acc.producer_commit(t)
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

class PipelineUmmaAsync : public detail::StageBarriers {
 public:
  /// `barriers`: barrier_bytes(stages) of shared memory; `consumers`: the arrivals that free a
  /// buffer (the epilogue's threads, or one per epilogue warp).
  PipelineUmmaAsync(const Pointer<uint64_t>& barriers, int stages, int consumers, detail::Where w = detail::Where::current())
      : StageBarriers(barriers, stages, consumers, w) {}

  /// One thread initialises every barrier; then fence_mbarrier_init() and a block barrier.
  void init(detail::Where w = detail::Where::current()) const { init_barriers(1, w); }
  /// The MMA thread: waits until the epilogue has read buffer `s` the last time.
  void producer_acquire(const PipelineState& s, detail::Where w = detail::Where::current()) const { wait_empty(s, w); }
  /// The MMA thread: buffer `s` is full once the MMAs issued so far are done.
  void producer_commit(const PipelineState& s, detail::Where w = detail::Where::current()) const { tcgen05_commit(full(s.index), w); }

  // ---- the epilogue: consumer_wait and consumer_release, as every barrier pipeline ----
};

}  // namespace cutejit
