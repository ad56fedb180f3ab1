/** \file
 * The pipelines around tcgen05.mma (CuTeDSL's PipelineTmaUmma, PipelineAsyncUmma and PipelineUmmaAsync):
 *
 *  - `PipelineTmaUmma`: a TMA producer feeding tcgen05.mma. The producer side is
 *    PipelineTmaAsync's; the consumer is the one thread that issues the MMAs, and it frees a
 *    stage with `tcgen05.commit` on the stage's "empty" mbarrier instead of an arrival: the
 *    barrier then completes when the MMAs reading the stage are done, with no thread waiting.
 *  - `PipelineAsyncUmma`: producer threads that write a stage with ordinary stores (a
 *    mixed-input GEMM's converted operand, attention's P) feeding tcgen05.mma. The MMA reads
 *    shared memory through the async proxy, so each producer's commit first orders its own
 *    generic writes before the async proxy's reads (fence.proxy.async.shared::cta), then
 *    arrives; the MMA thread frees a stage with `tcgen05.commit`, as in PipelineTmaUmma.
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
 *
 * Their pair forms, for 2-CTA MMAs (the CTAs 2k and 2k + 1 of a cluster, each with its own
 * barriers at the same offsets; the MMA thread runs in the even CTA only):
 *
 *  - `PipelineTmaUmmaPair`: each CTA's producer loads its halves of a stage into its own shared
 *    memory, and the bytes complete on the even CTA's full barrier, which alone expects both
 *    CTAs' bytes; the MMAs' commit frees the stage in both CTAs (a multicast commit to both
 *    empty barriers).
 *  - `PipelineAsyncUmmaPair`: each CTA's producer threads store their halves of a stage into
 *    their own shared memory, fence them for the async proxy and arrive on the even CTA's full
 *    barrier, which counts both CTAs' producers; the MMAs' commit frees the stage in both CTAs.
 *    The arrival has the default semantics (release at CTA scope) across the cluster, as
 *    CUTLASS's and CuTeDSL's PipelineAsyncUmma arrive for 2-CTA MMAs.
 *  - `PipelineUmmaAsyncPair`: the commit fills the accumulator in both CTAs' full barriers; each
 *    CTA's epilogue threads wait on their own and arrive on the even CTA's empty barrier, which
 *    counts both CTAs' threads.
 */
#pragma once

#include "cutejit/atom/sm100/umma.hpp"
#include "cutejit/dsl/control.hpp"
#include "cutejit/pipeline/mbarrier.hpp"
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

class PipelineAsyncUmma : public detail::ThreadProducerStages {
 public:
  /// `barriers`: barrier_bytes(stages) of shared memory; `producers`: the threads that write a
  /// stage, each committing it once.
  PipelineAsyncUmma(const Pointer<uint64_t>& barriers, int stages, int producers, detail::Where w = detail::Where::current())
      : ThreadProducerStages(barriers, stages, producers, /*consumers=*/1, w) {}

  /// This thread's writes to stage `s` are done: they are made visible to the tensor core's
  /// async-proxy reads, then one arrival.
  void producer_commit(const PipelineState& s, detail::Where w = detail::Where::current()) const {
    fence_proxy_async_shared(w);
    mbarrier_arrive(full(s.index), w);
  }
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

/// The rank of this CTA's pair's even CTA in the cluster, and the mask of both CTAs.
inline Int cta_pair_leader(detail::Where w = detail::Where::current()) { return cluster_cta_rank(w) & ~1; }
inline Int cta_pair_mask(detail::Where w = detail::Where::current()) { return Int(3, w) << cta_pair_leader(w); }

class PipelineTmaUmmaPair : public detail::StageBarriers {
 public:
  /// `barriers`: barrier_bytes(stages) of shared memory in each CTA; `stage_bytes`: the TMA
  /// bytes of one CTA's half of a stage; `releasers`: the pairs whose MMAs read what this CTA's
  /// loads bring (1, or with multicast between pairs every pair a load reaches).
  PipelineTmaUmmaPair(const Pointer<uint64_t>& barriers, int stages, int stage_bytes, int releasers = 1,
                      detail::Where w = detail::Where::current())
      : StageBarriers(barriers, stages, releasers, w), check_(stage_bytes, w) {}

  /// One thread of each CTA initialises its barriers; then fence_mbarrier_init() and a cluster
  /// barrier (the other CTA's loads and commits reach these).
  void init(detail::Where w = detail::Where::current()) const { init_barriers(1, w); }

  /// Each CTA's producer: waits until the pair's MMAs have freed stage `s` (in this CTA); the
  /// even CTA's then arms its full barrier with both CTAs' bytes.
  void producer_acquire(const PipelineState& s, detail::Where w = detail::Where::current()) {
    check_.acquire(w);
    wait_empty(s, w);
    if_((cluster_cta_rank(w) & 1) == 0,
        [&] { mbarrier_arrive_expect_tx(full(s.index), Operand<int32_t>(2 * check_.stage_bytes(), w)); }, w);
  }
  /// A TMA load into this CTA's half of stage `s`, completing on the even CTA's full barrier.
  template <Element T>
  void load(const TmaDescriptor<T>& map, const Pointer<T>& dst, const PipelineState& s, std::initializer_list<Operand<int32_t>> coords,
            detail::Where w = detail::Where::current()) {
    check_.load(map.box_bytes(), w);
    map.load_pair(dst, full(s.index), coords, w);
  }
  /// A slice of this CTA's half multicast to the `ctas` CTAs of `cta_mask` (this one among them),
  /// which each receive it at `dst`'s offset; the group's slices make up each one's half.
  template <Element T>
  void load_multicast(const TmaDescriptor<T>& map, const Pointer<T>& dst, const PipelineState& s,
                      std::initializer_list<Operand<int32_t>> coords, const Operand<int32_t>& cta_mask, int ctas,
                      detail::Where w = detail::Where::current()) {
    check_.load(ctas * map.box_bytes(), w);
    map.load_pair_multicast(dst, full(s.index), coords, cta_mask, w);
  }
  /// The TMA loads of a partitioned tile (tma_partition) into this CTA's half of stage `s`:
  /// every box, or one of them; and one box multicast as above.
  template <Element T>
  void load(const TmaDescriptor<T>& map, const TmaPartition<T>& tile, const PipelineState& s,
            detail::Where w = detail::Where::current()) {
    for (const TmaBox<T>& box : tile.boxes()) load(map, box, s, w);
  }
  template <Element T>
  void load(const TmaDescriptor<T>& map, const TmaBox<T>& box, const PipelineState& s, detail::Where w = detail::Where::current()) {
    check_.load(map.box_bytes(), w);
    map.load_pair(box.smem, full(s.index), box.coords, w);
  }
  template <Element T>
  void load_multicast(const TmaDescriptor<T>& map, const TmaBox<T>& box, const PipelineState& s, const Operand<int32_t>& cta_mask,
                      int ctas, detail::Where w = detail::Where::current()) {
    check_.load(ctas * map.box_bytes(), w);
    map.load_pair_multicast(box.smem, full(s.index), box.coords, cta_mask, w);
  }
  /// Checks that this CTA's loads of the stage bring its half's bytes.
  void producer_commit(const PipelineState&, detail::Where w = detail::Where::current()) { check_.commit(w); }
  /// After the producer's last stage: waits until every stage has been freed by all its
  /// releasers, so that no MMA commit from another pair reaches this CTA after it has exited.
  /// `iterations`: the ring iterations the producer ran.
  void producer_tail(const Int& iterations, detail::Where w = detail::Where::current()) const {
    for (int i = 0; i < stages(); ++i) wait_empty(PipelineState::at(iterations + i, stages()), w);
  }

  /// The even CTA's MMA thread: consumer_wait(s) as every pipeline; then this frees stage `s`
  /// in both CTAs once the MMAs issued so far are done.
  void consumer_release(const PipelineState& s, detail::Where w = detail::Where::current()) const {
    tcgen05_commit(empty(s.index), Operand<int32_t>(cta_pair_mask(w), w));
  }
  /// The same, freeing stage `s` in every CTA of `cta_mask`: with multicast, every CTA whose
  /// loads wrote into this pair's stage.
  void consumer_release(const PipelineState& s, const Operand<int32_t>& cta_mask, detail::Where w = detail::Where::current()) const {
    tcgen05_commit(empty(s.index), cta_mask);
  }

 private:
  detail::StageLoadCheck check_;
};

class PipelineAsyncUmmaPair : public detail::ThreadProducerStages {
 public:
  /// `barriers`: barrier_bytes(stages) of shared memory in each CTA; `producers`: the threads of
  /// one CTA that write its half of a stage, each committing it once.
  PipelineAsyncUmmaPair(const Pointer<uint64_t>& barriers, int stages, int producers, detail::Where w = detail::Where::current())
      : ThreadProducerStages(barriers, stages, 2 * producers, /*consumers=*/1, w) {}

  /// This thread's writes to its CTA's half of stage `s` are done: fenced for the tensor core's
  /// async-proxy reads, then one arrival on the even CTA's full barrier.
  void producer_commit(const PipelineState& s, detail::Where w = detail::Where::current()) const {
    fence_proxy_async_shared(w);
    mbarrier_arrive_cluster(full(s.index), Operand<int32_t>(cta_pair_leader(w), w));
  }
  /// The even CTA's MMA thread: consumer_wait(s) as every pipeline; then this frees stage `s`
  /// in both CTAs once the MMAs issued so far are done.
  void consumer_release(const PipelineState& s, detail::Where w = detail::Where::current()) const {
    tcgen05_commit(empty(s.index), Operand<int32_t>(cta_pair_mask(w), w));
  }
};

class PipelineUmmaAsyncPair : public detail::StageBarriers {
 public:
  /// `barriers`: barrier_bytes(stages) of shared memory in each CTA; `consumers`: the arrivals
  /// of one CTA's epilogue that free a buffer (the even CTA's empty barrier counts both CTAs').
  PipelineUmmaAsyncPair(const Pointer<uint64_t>& barriers, int stages, int consumers, detail::Where w = detail::Where::current())
      : StageBarriers(barriers, stages, 2 * consumers, w) {}

  void init(detail::Where w = detail::Where::current()) const { init_barriers(1, w); }
  /// The even CTA's MMA thread: waits until both CTAs' epilogues have read buffer `s`.
  void producer_acquire(const PipelineState& s, detail::Where w = detail::Where::current()) const { wait_empty(s, w); }
  /// The even CTA's MMA thread: buffer `s` is full in both CTAs once the MMAs issued so far are.
  void producer_commit(const PipelineState& s, detail::Where w = detail::Where::current()) const {
    tcgen05_commit(full(s.index), Operand<int32_t>(cta_pair_mask(w), w));
  }
  /// Each epilogue thread, after consumer_wait(s) and its loads: one arrival on the even CTA's
  /// empty barrier.
  void consumer_release(const PipelineState& s, detail::Where w = detail::Where::current()) const {
    StageBarriers::consumer_release(s, cta_pair_leader(w), w);
  }
};

}  // namespace cutejit
