/** \file
 * Pipelines over a ring of shared-memory stages, as CuTeDSL's:
 *
 *  - `PipelineTmaAsync`: a TMA producer feeding MMA consumers. Per stage a "full" mbarrier
 *    (the producer's arrival plus the TMA bytes) and an "empty" one (one arrival per consumer).
 *  - `PipelineAsync`: producers and consumers that are both threads: the producers write the
 *    stage with ordinary stores and arrive on "full".
 *  - `PipelineCpAsync`: producer threads fill the stage with cp.async; each one's arrival on
 *    "full" comes when its copies land (cp.async.mbarrier.arrive.noinc).
 *  - `PipelineTmaStore`: TMA stores out of a ring of shared-memory buffers, without barriers:
 *    a buffer is reused once the bulk-store group that read it has finished reading.
 *
 * The loop of each side of a TMA pipeline is
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

#include "cutejit/arch/sm80.hpp"
#include "cutejit/atom/sm90/tma.hpp"
#include "cutejit/atom/sm90/tma_partition.hpp"
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

namespace detail {
/// The "full" and "empty" mbarrier of each stage, and the consumer side every barrier pipeline
/// shares.
class StageBarriers {
 public:
  /// Shared memory the barriers take: two per stage.
  static constexpr int barrier_bytes(int stages) { return 16 * stages; }

  int stages() const { return stages_; }

  /// Waits until stage `s` is full.
  void consumer_wait(const PipelineState& s, Where w = Where::current()) const {
    mbarrier_wait(full(s.index), Operand<int32_t>(s.phase, w));
  }
  /// Frees stage `s` for the producers: one arrival, from one thread of each consumer, once
  /// the consumer has finished reading the stage (for wgmma: after the wait_group that covers it).
  void consumer_release(const PipelineState& s, Where w = Where::current()) const { mbarrier_arrive(empty(s.index), w); }
  /// The same arrival on stage `s` of the cluster's CTA `cta`: with multicast loads, that CTA's
  /// producer writes into this CTA's stage too, so it must wait for this CTA's consumers.
  void consumer_release(const PipelineState& s, const Int& cta, Where w = Where::current()) const {
    mbarrier_arrive_cluster(empty(s.index), Operand<int32_t>(cta, w));
  }

 protected:
  StageBarriers(const Pointer<uint64_t>& barriers, int stages, int consumers, Where w)
      : barriers_(barriers), stages_(stages), consumers_(consumers) {
    if (stages < 1 || stages > 32) fail("a pipeline has 1 to 32 stages, not " + std::to_string(stages), w);
    if (consumers < 1) fail("a pipeline needs at least one consumer, not " + std::to_string(consumers), w);
  }
  void init_barriers(int producer_arrivals, Where w) const {
    for (int s = 0; s < stages_; ++s) {
      mbarrier_init(full(Int(s, w)), Operand<int32_t>(producer_arrivals, w));
      mbarrier_init(empty(Int(s, w)), Operand<int32_t>(consumers_, w));
    }
  }
  void wait_empty(const PipelineState& s, Where w) const { mbarrier_wait(empty(s.index), Operand<int32_t>(s.phase ^ 1, w)); }
  Pointer<uint64_t> full(const Int& index) const { return barriers_ + index; }
  Pointer<uint64_t> empty(const Int& index) const { return barriers_ + (index + stages_); }

  Pointer<uint64_t> barriers_;
  int stages_, consumers_;
};
}  // namespace detail

namespace detail {
/// Stage barriers whose producers are threads, each arriving once per stage: what
/// PipelineAsync and PipelineCpAsync share; they differ in how a producer commits.
class ThreadProducerStages : public StageBarriers {
 public:
  /// One thread initialises every barrier; then fence_mbarrier_init() and a block barrier.
  void init(Where w = Where::current()) const { init_barriers(producers_, w); }
  /// Waits until the consumers have freed stage `s`.
  void producer_acquire(const PipelineState& s, Where w = Where::current()) const { wait_empty(s, w); }

 protected:
  /// `producers`: the arrivals that fill a stage; `consumers`: the arrivals that free it.
  ThreadProducerStages(const Pointer<uint64_t>& barriers, int stages, int producers, int consumers, Where w)
      : StageBarriers(barriers, stages, consumers, w), producers_(producers) {
    if (producers < 1) fail("a pipeline needs at least one producer, not " + std::to_string(producers), w);
  }

 private:
  int producers_;
};
}  // namespace detail

/// Producer threads writing stages with ordinary stores; consumers reading them.
class PipelineAsync : public detail::ThreadProducerStages {
 public:
  /// `producers`: the arrivals that fill a stage (e.g. 32 when every thread of a warp writes
  /// and arrives); `consumers`: the arrivals that free it.
  PipelineAsync(const Pointer<uint64_t>& barriers, int stages, int producers, int consumers,
                detail::Where w = detail::Where::current())
      : ThreadProducerStages(barriers, stages, producers, consumers, w) {}
  /// This thread's writes to stage `s` are done: one arrival (release semantics, so the
  /// consumers' wait sees the writes).
  void producer_commit(const PipelineState& s, detail::Where w = detail::Where::current()) const { mbarrier_arrive(full(s.index), w); }
};

/// cp.async producers feeding consumers (CuTeDSL's PipelineCpAsync): PipelineAsync whose
/// producer commit is cp.async.mbarrier.arrive.noinc, so that a stage is full once every
/// producer thread's copies into it have landed. No wait_group and no block barrier: producers
/// and consumers can be different warps, each a stage apart.
class PipelineCpAsync : public detail::ThreadProducerStages {
 public:
  /// `producers`: the threads that copy into a stage and commit it (each commits once per
  /// stage); `consumers`: the arrivals that free it.
  PipelineCpAsync(const Pointer<uint64_t>& barriers, int stages, int producers, int consumers,
                  detail::Where w = detail::Where::current())
      : ThreadProducerStages(barriers, stages, producers, consumers, w) {}
  /// This thread's cp.async into stage `s` are issued: the stage's "full" barrier gets its
  /// arrival when they complete.
  void producer_commit(const PipelineState& s, detail::Where w = detail::Where::current()) const {
    detail::cp_async_mbarrier_arrive(full(s.index).id(), w);
  }
};

/// TMA stores out of `stages` shared-memory buffers, one bulk-store group per buffer: before
/// writing buffer k again, wait until at most `stages - 1` groups are still reading theirs.
class PipelineTmaStore {
 public:
  explicit PipelineTmaStore(int stages, detail::Where w = detail::Where::current()) : stages_(stages) {
    if (stages < 1 || stages > 32) detail::fail("a TMA store pipeline has 1 to 32 stages, not " + std::to_string(stages), w);
  }
  int stages() const { return stages_; }
  /// Before writing the next buffer: the group that last read it has finished reading.
  void producer_acquire(detail::Where w = detail::Where::current()) const { detail::tma_store_wait(stages_ - 1, /*read_only=*/true, w); }
  /// After the buffer's TMA stores: closes their group.
  void producer_commit(detail::Where w = detail::Where::current()) const { tma_store_commit(w); }
  /// At the end: every store has landed in global memory.
  void tail(detail::Where w = detail::Where::current()) const { detail::tma_store_wait(0, /*read_only=*/false, w); }

 private:
  int stages_;
};

namespace detail {
/// What the trace has seen of a TMA producer's stages, to check them: an acquire not yet
/// committed, and the bytes its loads bring, which must be the stage's.
class StageLoadCheck {
 public:
  StageLoadCheck(int stage_bytes, Where w) : stage_bytes_(stage_bytes) {
    if (stage_bytes <= 0 || stage_bytes % 16 != 0)
      fail("a pipeline stage's TMA bytes are a positive multiple of 16, not " + std::to_string(stage_bytes), w);
  }
  int stage_bytes() const { return stage_bytes_; }
  void acquire(Where w) {
    if (acquired_)
      fail("producer_acquire on a pipeline whose previous acquire was not committed; call producer_commit(state) after a stage's loads", w);
    acquired_ = true;
    loaded_bytes_ = 0;
  }
  void load(int bytes, Where w) {
    if (!acquired_) fail("a TMA load onto a pipeline stage that was not acquired; call producer_acquire(state) first", w);
    loaded_bytes_ += bytes;
  }
  void commit(Where w) {
    if (!acquired_) fail("producer_commit without producer_acquire", w);
    if (loaded_bytes_ != stage_bytes_)
      fail("the TMA loads of this pipeline stage bring " + std::to_string(loaded_bytes_) + " bytes but the stage expects " +
               std::to_string(stage_bytes_) + "; its full barrier would never complete (the consumers would hang)",
           w);
    acquired_ = false;
  }

 private:
  int stage_bytes_;
  bool acquired_ = false;
  int loaded_bytes_ = 0;
};
}  // namespace detail

class PipelineTmaAsync : public detail::StageBarriers {
 public:

  /// `barriers`: barrier_bytes(stages) of shared memory, 8-byte aligned. `consumers`: the
  /// arrivals that free a stage (one per consumer warpgroup). `stage_bytes`: what the TMA loads
  /// of one stage bring in together.
  PipelineTmaAsync(const Pointer<uint64_t>& barriers, int stages, int consumers, int stage_bytes,
                   detail::Where w = detail::Where::current())
      : StageBarriers(barriers, stages, consumers, w), check_(stage_bytes, w) {}

  /// One thread initialises every barrier; then fence_mbarrier_init() and a block (or
  /// cluster) barrier before either side uses the pipeline.
  void init(detail::Where w = detail::Where::current()) const { init_barriers(1, w); }

  // ---- producer: one thread ----

  /// Waits until the consumers have freed stage `s`, then arms its full barrier with the
  /// stage's bytes.
  void producer_acquire(const PipelineState& s, detail::Where w = detail::Where::current()) {
    check_.acquire(w);
    wait_empty(s, w);
    mbarrier_arrive_expect_tx(full(s.index), Operand<int32_t>(check_.stage_bytes(), w));
  }

  /// A TMA load into the acquired stage, completing on its full barrier.
  template <Element T>
  void load(const TmaDescriptor<T>& map, const Pointer<T>& dst, const PipelineState& s, std::initializer_list<Operand<int32_t>> coords,
            detail::Where w = detail::Where::current()) {
    check_.load(map.box_bytes(), w);
    map.load(dst, full(s.index), coords, w);
  }

  /// A TMA load multicast into the acquired stage of each of the `ctas` CTAs in `cta_mask`
  /// (this one included), completing on each one's full barrier. For the byte check it counts
  /// `ctas` boxes: the other CTAs of the mask issue the matching loads into this one.
  template <Element T>
  void load_multicast(const TmaDescriptor<T>& map, const Pointer<T>& dst, const PipelineState& s,
                      std::initializer_list<Operand<int32_t>> coords, const Operand<int32_t>& cta_mask, int ctas,
                      detail::Where w = detail::Where::current()) {
    check_.load(ctas * map.box_bytes(), w);
    map.load_multicast(dst, full(s.index), coords, cta_mask, w);
  }

  /// The TMA loads of a partitioned tile (tma_partition) into the acquired stage: every box,
  /// or one of them.
  template <Element T>
  void load(const TmaDescriptor<T>& map, const TmaPartition<T>& tile, const PipelineState& s,
            detail::Where w = detail::Where::current()) {
    for (const TmaBox<T>& box : tile.boxes()) load(map, box, s, w);
  }
  template <Element T>
  void load(const TmaDescriptor<T>& map, const TmaBox<T>& box, const PipelineState& s, detail::Where w = detail::Where::current()) {
    check_.load(map.box_bytes(), w);
    map.load(box.smem, full(s.index), box.coords, w);
  }
  template <Element T>
  void load_multicast(const TmaDescriptor<T>& map, const TmaBox<T>& box, const PipelineState& s, const Operand<int32_t>& cta_mask,
                      int ctas, detail::Where w = detail::Where::current()) {
    check_.load(ctas * map.box_bytes(), w);
    map.load_multicast(box.smem, full(s.index), box.coords, cta_mask, w);
  }

  /// Closes the stage's loads: the TMA bytes complete its phase. Checks that they are what
  /// the stage expects.
  void producer_commit(const PipelineState&, detail::Where w = detail::Where::current()) { check_.commit(w); }

  // ---- consumers: consumer_wait and consumer_release, as every barrier pipeline ----

 private:
  detail::StageLoadCheck check_;
};

}  // namespace cutejit
