/** \file
 * A cluster of CTA pairs that share operands by TMA multicast (sm_100 family, 2-CTA MMAs).
 *
 * `PairCluster<PM, PN>` is PM x PN pairs, PM along M and PN along N, in a one-dimensional
 * cluster of 2 PM PN CTAs: rank r = v + 2 (pm + PM pn), v the CTA's place in its pair (0 the
 * even CTA, which issues the pair's MMAs). Pairs in one row (the same pm) need the same rows of
 * A, pairs in one column (the same pn) the same rows of B. So each CTA loads 1 / PN of its half
 * of A's stage and multicasts it to the CTAs of its place in the pairs of its row (`a_mask`),
 * and 1 / PM of its half of B's to those of its column (`b_mask`); every CTA then holds its
 * whole half, each slice arriving once. A stage of a CTA is written by the CTAs of its row and
 * column, so it may be written again only when every pair that any of them writes into has
 * read it: each pair's MMA frees a stage in every CTA of its row and column (`release_mask`),
 * and each CTA's "empty" barrier counts `releasers` = PM + PN - 1 such frees.
 *
 * The masks are functions of the rank, over `int` on the host (where the tests check them
 * against a simulation of who writes where) or a traced `Int` in a kernel.
 */
#pragma once

namespace cutejit {

template <int PM, int PN>
struct PairCluster {
  static_assert(PM >= 1 && PN >= 1 && 2 * PM * PN <= 8, "a cluster holds at most 8 CTAs: 4 pairs");
  static constexpr int pairs_m = PM, pairs_n = PN, ctas = 2 * PM * PN;
  /// The pairs that free a stage of each CTA: those of its row and of its column.
  static constexpr int releasers = PM + PN - 1;

  /// The CTA's place in its pair, and its pair's row and column in the cluster.
  template <class I>
  static I place(const I& rank) { return rank & I(1); }
  template <class I>
  static I pair_m(const I& rank) { return (rank >> I(1)) % I(PM); }
  template <class I>
  static I pair_n(const I& rank) { return (rank >> I(1)) / I(PM); }

  /// The CTAs this CTA's slice of A goes to: its place in each pair of its row (its slice is
  /// number pair_n of them).
  template <class I>
  static I a_mask(const I& rank) { return I(row_pattern()) << (place(rank) + I(2) * pair_m(rank)); }
  /// The CTAs this CTA's slice of B goes to: its place in each pair of its column (its slice is
  /// number pair_m of them).
  template <class I>
  static I b_mask(const I& rank) { return I(column_pattern()) << (place(rank) + I(2 * PM) * pair_n(rank)); }
  /// The CTAs whose stage a pair's MMAs free: both CTAs of every pair in its row and column.
  template <class I>
  static I release_mask(const I& rank) {
    return (I(3 * row_pattern()) << (I(2) * pair_m(rank))) | (I((1 << (2 * PM)) - 1) << (I(2 * PM) * pair_n(rank)));
  }

 private:
  /// Bit 2 PM n for each pair column n: the even CTAs of the pairs of row 0.
  static constexpr int row_pattern() {
    int p = 0;
    for (int n = 0; n < PN; ++n) p |= 1 << (2 * PM * n);
    return p;
  }
  /// Bit 2 m for each pair row m: the even CTAs of the pairs of column 0.
  static constexpr int column_pattern() {
    int p = 0;
    for (int m = 0; m < PM; ++m) p |= 1 << (2 * m);
    return p;
  }
};

}  // namespace cutejit
