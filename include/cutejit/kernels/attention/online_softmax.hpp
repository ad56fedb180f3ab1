// The online softmax of FlashAttention over a thread's accumulator rows, which the FA2 forward
// (attention/sm80.hpp) and the Hopper forward (attention/sm90.hpp) share: the masking of a block of
// scores, the running maximum and sum of each row, and the epilogue that divides O by the sums
// and writes it and the log-sum-exp. Rows and columns are those of accumulator_rowcol: a row of
// S and of O is one query, spread over `row_lanes` consecutive lanes.
#pragma once

#include <cmath>

#include "cutejit/cutejit.hpp"

namespace cutejit::kernels {

/// The scores of a block that `keep` rejects become -inf: `s_rows` is the accumulator as rows
/// and columns (accumulator_rowcol), `coords` holds each score's coordinates in the sequence (a
/// (query, key), or a (key, query) for transposed scores), `keep(first, second)` of them says
/// whether it is seen.
template <class Keep>
void mask_scores(const Tensor<float>& s_rows, const CoordTensor& coords, Keep&& keep) {
  const int64_t rows = size(mode(s_rows.layout(), 0)).value(), cols = size(mode(s_rows.layout(), 1)).value();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      Int first = coordinate<0>(coords(IntTuple(r), IntTuple(c))), second = coordinate<1>(coords(IntTuple(r), IntTuple(c)));
      s_rows(IntTuple(r), IntTuple(c)) = select(keep(first, second), F32(s_rows(IntTuple(r), IntTuple(c))), F32(-INFINITY));
    }
}

class OnlineSoftmax {
 public:
  /// `rows` accumulator rows per thread, each over `row_lanes` lanes; every maximum -inf, every
  /// sum 0.
  OnlineSoftmax(int64_t rows, int row_lanes)
      : rows_(rows), row_lanes_(row_lanes), max_(make_rmem_tensor<f32>(IntTuple{rows})), sum_(make_rmem_tensor<f32>(IntTuple{rows})) {
    for (int64_t r = 0; r < rows; ++r) {
      max_(IntTuple(r)) = -INFINITY;
      sum_(IntTuple(r)) = 0.0f;
    }
  }

  int64_t rows() const { return rows_; }
  int row_lanes() const { return row_lanes_; }

  /// The maximum (or the sum) of `x` over the lanes that share its row.
  F32 row_reduce(F32 x, bool is_max) const {
    for (int lane = 1; lane < row_lanes_; lane *= 2) {
      F32 y = shuffle_xor(x, lane);
      x = is_max ? max(x, y) : x + y;
    }
    return x;
  }

  /// Scores a row and column of the block do not see become -inf (mask_scores).
  template <class Keep>
  void mask(const Tensor<float>& s_rows, const CoordTensor& coords, Keep&& keep) const {
    mask_scores(s_rows, coords, keep);
  }

  /// Row r of a block of scores: the row's maximum (log2 units) rises to the block's, the
  /// scores become P = exp2(S scale - max) in place, and the sum takes them in. Returns what
  /// the row of O computed so far must be multiplied by.
  F32 update(const Tensor<float>& s_rows, int64_t r, const F32& scale_log2) const {
    const int64_t cols = size(mode(s_rows.layout(), 1)).value();
    F32 block_max = s_rows(IntTuple(r), IntTuple(0));
    for (int64_t c = 1; c < cols; ++c) block_max = max(block_max, F32(s_rows(IntTuple(r), IntTuple(c))));
    block_max = row_reduce(block_max, true);
    F32 old_max = max_(IntTuple(r));
    F32 new_max = max(old_max, block_max * scale_log2);
    // A row that has seen only masked keys keeps its maximum at -inf; 0 keeps exp2 finite.
    F32 base = select(new_max == F32(-INFINITY), F32(0.0f), new_max);
    F32 rescale = fast::exp2(old_max - base);
    max_(IntTuple(r)) = new_max;
    F32 sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      F32 p = fast::exp2(fma(F32(s_rows(IntTuple(r), IntTuple(c))), scale_log2, -base));
      s_rows(IntTuple(r), IntTuple(c)) = p;
      sum = sum + p;
    }
    sum_(IntTuple(r)) = F32(sum_(IntTuple(r))) * rescale + sum;  // this thread's columns; reduced at the end
    return rescale;
  }

  /// Row r's end. Its sum, reduced over the row's lanes; what its row of O is multiplied by
  /// (1 / sum, 0 for a row that saw no key); its log-sum-exp (natural log, -inf there).
  F32 row_sum(int64_t r) const { return row_reduce(sum_(IntTuple(r)), false); }
  static F32 normalizer(const F32& sum) { return select(sum == F32(0.0f), F32(0.0f), 1.0f / sum); }
  F32 log_sum_exp(int64_t r, const F32& sum) const {
    F32 m = max_(IntTuple(r));
    return select(sum == F32(0.0f), F32(-INFINITY), m * float(M_LN2) + log(sum));
  }

  /// The epilogue: O / sum in T, stored into `g_out` (this thread's part by `thr`) where it lies
  /// inside the sequence (`o_coords`, the (query, column) of each of acc_o's values, bounded by
  /// `q_bound`; `row_coords`, the same by rows and columns), and the log-sum-exp of
  /// each row (natural log, -inf for a row that saw no key), written by the first lane of the
  /// row (`t`: the thread in the tiling) at lse(head, q_start + query).
  template <Element T, class ThrMma>
  void store(const ThrMma& thr, const Tensor<float>& acc_o, const Tensor<float>& o_rows, const CoordTensor& o_coords,
             const CoordTensor& row_coords, const IntTuple& q_bound, const Tensor<T>& g_out, const Tensor<f32>& lse, const Int& t,
             const Int& head, const Int& q_start, const Int& q_len) const {
    const int64_t o_cols = size(mode(o_rows.layout(), 1)).value();
    for (int64_t r = 0; r < rows_; ++r) {
      F32 sum = row_sum(r), inv = normalizer(sum);
      for (int64_t c = 0; c < o_cols; ++c) o_rows(IntTuple(r), IntTuple(c)) = F32(o_rows(IntTuple(r), IntTuple(c))) * inv;
      Int row = coordinate<0>(row_coords(IntTuple(r), IntTuple(0)));
      if_(t % row_lanes_ == 0 && row < q_len, [&] { lse(head, q_start + row) = log_sum_exp(r, sum); });
    }
    auto out = make_rmem_tensor<T>(acc_o.layout());
    for (int64_t i = 0; i < size(acc_o.layout()).value(); ++i) out(IntTuple(i)) = cast<T>(F32(acc_o(IntTuple(i))));
    copy_if(o_coords, q_bound, out, thr.partition_C(g_out));
  }

 private:
  int64_t rows_;
  int row_lanes_;
  Tensor<f32> max_, sum_;  ///< per row: the running maximum of the scaled scores (log2 units), the sum of exp2 below it
};

}  // namespace cutejit::kernels
