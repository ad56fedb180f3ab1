/** \file
 * A TMA producer feeding MMA consumers through a ring of shared-memory stages (CuTeDSL's
 * PipelineTmaAsync). Per stage there is a "full" mbarrier (the producer's arrival plus the TMA
 * bytes) and an "empty" one (one arrival per consumer). The loop of each side is
 *
 *   producer (one thread):              consumers:
 *     pipe.producer_acquire(s);            pipe.consumer_wait(s);
 *     pipe.load(map, dst, s, {...});       ... wgmma on stage s.index ...
 *     pipe.producer_commit(s);             pipe.consumer_release(s);   // one thread per consumer
 *
 * with `s = PipelineState::at(k, stages)` for iteration k. What the tracer can see statically,
 * it checks, and a mistake is an error at the user's line instead of a kernel that hangs: the
 * bytes a stage's loads bring must equal the bytes the stage expects (a shortfall leaves the
 * full barrier waiting forever), loads go to an acquired stage, and acquire / commit
 * alternate. Stage counts are 1 to 32.
 */
#pragma once

#include <string>

#include "cutejit/atom/sm90/tma.hpp"
#include "cutejit/pipeline/mbarrier.hpp"

namespace cutejit {

/// Where iteration `k` of a ring of `stages` stages is: the stage and the parity of the pass
/// through the ring. Derived from the iteration counter, so a loop carries no extra state; a
/// power-of-two stage count makes it a mask and a shift.
struct PipelineState {
  Int index;
  Int phase;
  static PipelineState at(const Int& k, int stages) { return {k % stages, (k / stages) & 1}; }
};

class PipelineTmaAsync {
 public:
  /// Shared memory the barriers take: two per stage.
  static constexpr int barrier_bytes(int stages) { return 16 * stages; }

  /// `barriers`: barrier_bytes(stages) of shared memory, 8-byte aligned. `consumers`: the
  /// arrivals that free a stage (one per consumer warpgroup). `stage_bytes`: what the TMA loads
  /// of one stage bring in together.
  PipelineTmaAsync(const Pointer<uint64_t>& barriers, int stages, int consumers, int stage_bytes,
                   detail::Where w = detail::Where::current())
      : barriers_(barriers), stages_(stages), consumers_(consumers), stage_bytes_(stage_bytes) {
    if (stages < 1 || stages > 32) detail::fail("a pipeline has 1 to 32 stages, not " + std::to_string(stages), w);
    if (consumers < 1) detail::fail("a pipeline needs at least one consumer, not " + std::to_string(consumers), w);
    if (stage_bytes <= 0 || stage_bytes % 16 != 0)
      detail::fail("a pipeline stage's TMA bytes are a positive multiple of 16, not " + std::to_string(stage_bytes), w);
  }

  int stages() const { return stages_; }

  /// One thread initialises every barrier; then fence_mbarrier_init() and a block (or
  /// cluster) barrier before either side uses the pipeline.
  void init(detail::Where w = detail::Where::current()) const {
    for (int s = 0; s < stages_; ++s) {
      mbarrier_init(full(Int(s, w)), Operand<int32_t>(1, w));
      mbarrier_init(empty(Int(s, w)), Operand<int32_t>(consumers_, w));
    }
  }

  // ---- producer: one thread ----

  /// Waits until the consumers have freed stage `s`, then arms its full barrier with the
  /// stage's bytes.
  void producer_acquire(const PipelineState& s, detail::Where w = detail::Where::current()) {
    if (acquired_)
      detail::fail("producer_acquire on a pipeline whose previous acquire was not committed; call producer_commit(state) "
                   "after a stage's loads",
                   w);
    acquired_ = true;
    loaded_bytes_ = 0;
    mbarrier_wait(empty(s.index), Operand<int32_t>(s.phase ^ 1, w));
    mbarrier_arrive_expect_tx(full(s.index), Operand<int32_t>(stage_bytes_, w));
  }

  /// A TMA load into the acquired stage, completing on its full barrier.
  template <Element T>
  void load(const TmaDescriptor<T>& map, const Pointer<T>& dst, const PipelineState& s, std::initializer_list<Operand<int32_t>> coords,
            detail::Where w = detail::Where::current()) {
    if (!acquired_) detail::fail("a TMA load onto a pipeline stage that was not acquired; call producer_acquire(state) first", w);
    loaded_bytes_ += map.box_bytes();
    map.load(dst, full(s.index), coords, w);
  }

  /// Closes the stage's loads: the TMA bytes complete its phase. Checks that they are what
  /// the stage expects.
  void producer_commit(const PipelineState&, detail::Where w = detail::Where::current()) {
    if (!acquired_) detail::fail("producer_commit without producer_acquire", w);
    if (loaded_bytes_ != stage_bytes_)
      detail::fail("the TMA loads of this pipeline stage bring " + std::to_string(loaded_bytes_) + " bytes but the stage expects " +
                       std::to_string(stage_bytes_) + "; its full barrier would never complete (the consumers would hang)",
                   w);
    acquired_ = false;
  }

  // ---- consumers ----

  /// Waits until stage `s` is full.
  void consumer_wait(const PipelineState& s, detail::Where w = detail::Where::current()) const {
    mbarrier_wait(full(s.index), Operand<int32_t>(s.phase, w));
  }
  /// Frees stage `s` for the producer: one arrival, from one thread of each consumer, once
  /// the consumer has finished reading the stage (for wgmma: after the wait_group that covers it).
  void consumer_release(const PipelineState& s, detail::Where w = detail::Where::current()) const {
    mbarrier_arrive(empty(s.index), w);
  }

 private:
  Pointer<uint64_t> full(const Int& index) const { return barriers_ + index; }
  Pointer<uint64_t> empty(const Int& index) const { return barriers_ + (index + stages_); }

  Pointer<uint64_t> barriers_;
  int stages_, consumers_, stage_bytes_;
  // What the trace has seen: an acquire not yet committed, and the bytes loaded since.
  bool acquired_ = false;
  int loaded_bytes_ = 0;
};

}  // namespace cutejit
