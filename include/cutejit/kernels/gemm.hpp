/** \file
 * Matrix products on the tensor cores, compiled into libcutejit, the kernel picked for the
 * device's architecture:
 *
 *     kernels::gemm(gpu, a, b, c);                              // C = A B^T
 *     kernels::gemm(gpu, a, b, c, {.beta = 1});                 // C += A B^T (a residual add, in place)
 *     kernels::gemm(gpu, a, b, c, {.bias = bias, .activation = kernels::Activation::gelu_tanh});
 *
 * A is (M, K), B is (N, K) and C is (M, N), as CuTe names a GEMM's operands: C = A B^T, the sum
 * over K. A and B may each be K-major (unit stride along K: a row-major A; a B stored N x K, as
 * a linear layer's weight is) or MN-major (unit stride along M or N: a column-major A; a B stored
 * K x N, viewed as (N, K) by swapping its strides): the TN, NN, NT and TT GEMMs of BLAS. C is
 * row-major. Rows of every operand start 16 bytes apart (K, M or N a multiple of 8 along a
 * unit-stride mode, 16 for FP8); M, N and K are otherwise any size from 1.
 *
 * The element types (one overload each), with f32 accumulation:
 *   - A and B bf16, C bf16;
 *   - A and B f16, C f16;
 *   - A and B f8e4m3, C bf16, both operands K-major (the tensor cores read FP8 only along K),
 *     on sm_89 and newer. Dequantization scales known on the host go into alpha (alpha =
 *     scale_a * scale_b); those in device memory, per tensor or per row of A and of B, are
 *     GemmOptions::scales;
 *   - A and B f8e4m3, C f8e4m3 (rounded to nearest and saturated to +-448, as cvt.rn.satfinite
 *     does), the same targets: FP8 activations for the next FP8 product. alpha takes the output's
 *     scale too (scale_a * scale_b / scale_c); beta and the bias are refused.
 *
 * The epilogue works in f32 on each accumulated value x, in cuBLASLt's order,
 *     C = hook(activation(alpha * x + beta * C + bias[col]), row, col),
 * and rounds once to C's type; the hook (GemmOptions::hook, kernels/gemm_hook.hpp) is a traced
 * function of the caller's, none by default. With beta = 0, C is not read (it may hold NaNs).
 *
 * For a few rows of bf16 A (M up to gemm_fusion_max_m, A and B K-major: a decode step's
 * projections), two more steps fuse into the product, where they would otherwise each be a
 * launch of their own:
 *
 *     kernels::gemm(gpu, h, w_qkv, qkv, {.rmsnorm_a = kernels::RmsNorm{norm_weight, 1e-6f}});
 *     kernels::gemm(gpu, h, w_gate_up, act, {.rmsnorm_a = ..., .glu = kernels::Activation::silu});
 *
 * rmsnorm_a normalises A's rows as they are read; glu takes B as two halves [W; V] and gives
 * C = act(A W^T) * (A V^T) with half of B's rows as columns (SwiGLU with silu). They pay at
 * M = 1 or 2, where the kernel waits on the weights; at M = 8 the norm's arithmetic costs more
 * than the launch it saves (docs/kernels.md has the figures); from 3 rows glu alone is fused
 * on the tensor cores, up to gemm_few_rows_max_m rows. On sm_90a glu is fused for any M
 * too (the wgmma kernel pairs W's and V's rows in each tile), which saves writing and reading
 * back A [W; V]^T; gemm_fuses_glu says where.
 *
 * The kernel for each architecture (cutejit/kernels/gemm/):
 *   - sm_90a: the persistent warp-specialised wgmma GEMM (sm90.hpp), tiles 256, 128 or 64
 *     columns wide, the narrower ones when the wide tiles would not fill the GPU;
 *   - sm_100a, sm_103a: the persistent tcgen05 GEMM (sm100.hpp), A and B K-major;
 *   - sm_80, sm_86, sm_89, sm_120a, sm_121a: the multistage mma.sync GEMM (sm80.hpp);
 *   - up to gemm_few_rows_max_m rows of A, K-major: the few-row kernels on all, which read B
 *     once at the memory's pace: with f32 FMAs (small_m.hpp) for 1 or 2 rows, and up to
 *     gemm_fusion_max_m for FP8, with rmsnorm_a, or where N or K does not suit the other; on
 *     the tensor cores (mma.sync, small_m_mma.hpp) for 3 to gemm_few_rows_max_m rows of bf16 or
 *     f16 with N a multiple of 16 (8 for C's columns with glu) and K of 32. Past 8 rows, the
 *     wide kernels' grid of N / tile_n CTAs is too small to stream B (64 at N = 4096).
 * Other targets (and FP8 before sm_89) are an Error that names them. Every mistake (shapes that
 * disagree, strides the kernels cannot read, misaligned memory, a bias not of C's type) is an
 * Error at the caller's line, and nothing is written.
 */
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <vector>

#include "cutejit/core/compiled.hpp"
#include "cutejit/core/target.hpp"
#include "cutejit/jit/prepared_launch.hpp"
#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/device.hpp"

namespace cutejit::kernels {

class GemmHook;  // kernels/gemm_hook.hpp: a traced function of the caller's over each output value

/// The function the epilogue applies last. gelu_tanh is GELU's tanh approximation (with the
/// accurate tanh); silu is x / (1 + e^-x).
enum class Activation : int { none, relu, silu, gelu_tanh };

/// Which mode of an operand has the unit stride: K, or its M (of A) or N (of B) mode.
enum class Major : int { k, mn };

/// An RMSNorm of A's rows, fused into the GEMM (GemmOptions::rmsnorm_a): A's row x is used as
/// x * weight / sqrt(mean(x^2) + eps), in f32, not rounded to bf16 in between.
struct RmsNorm {
  DeviceTensor<bf16> weight;  ///< K values (rank 1, contiguous)
  float eps = 1e-6f;
};

/// The most rows of A for which rmsnorm_a is fused (the FMA few-row kernel's M).
inline constexpr int64_t gemm_fusion_max_m = 8;

/// The most rows of A the few-row kernels take (the tensor-core one past gemm_fusion_max_m),
/// and so the most for which glu is fused on every target. 16: where a whole decode step was
/// measured (Qwen3-8B at batch 16 on an H100: 0.70x the step time with the wgmma GEMM, the
/// kernel at its default 4 chunks in flight, where 2 run now, 1-4% faster alone); at 32 the
/// kernel alone is faster too, but no step has run it with 2 chunks, and with 4 it was slower.
inline constexpr int64_t gemm_few_rows_max_m = 16;

/// Whether gemm takes GemmOptions::glu for M rows of A on `target` (bf16, A and B K-major, and
/// past gemm_fusion_max_m rows K a multiple of 32): for M up to gemm_few_rows_max_m on every
/// target, and for any M on sm_90a.
bool gemm_fuses_glu(const Target& target, int64_t m);

/// Dequantization scales in device memory (GemmOptions::scales), f32, rank 1 and contiguous:
/// `a` holds one value (per tensor) or M values (one per row of A), `b` one value or N values
/// (one per row of B: a column of C), as torch._scaled_mm takes them. Each accumulated value
/// is multiplied by a's value of its row and b's of its column before alpha; they may change
/// between launches of a prepared gemm (they are read at run time).
struct GemmScales {
  DeviceTensor<f32> a, b;
};

/// The bias: N values of C's element type, rank 1 and contiguous. A DeviceTensor<bf16> or
/// DeviceTensor<f16> converts to it.
struct GemmBias {
  template <class T>
    requires std::same_as<T, bf16> || std::same_as<T, f16>
  GemmBias(const DeviceTensor<T>& t) : element(dtype_of<T>::value), ptr(t.ptr), rank(t.rank), shape(t.shape), stride(t.stride) {}
  DType element;
  uint64_t ptr;
  int rank;
  std::array<int64_t, max_tensor_rank> shape, stride;
};

struct GemmOptions {
  float alpha = 1.0f;
  /// Nonzero: C is read, scaled by beta and added before the bias and the activation.
  float beta = 0.0f;
  /// N values added to every row, of C's type.
  std::optional<GemmBias> bias;
  Activation activation = Activation::none;
  /// Scales of A's rows and B's rows in device memory (any element types; not with glu).
  std::optional<GemmScales> scales;
  /// A's rows RMS-normalised as they are read (bf16, M up to gemm_fusion_max_m, K-major A and B).
  std::optional<RmsNorm> rmsnorm_a;
  /// A gated linear unit: B (N, K) is two halves [W; V] and C is (M, N / 2),
  /// C = epilogue(act(A W^T) * (A V^T)), `act` this activation (silu: SwiGLU; none: bilinear).
  /// The epilogue (alpha, beta, bias of N / 2 values, activation) applies to that product.
  /// bf16, K-major A and B, where gemm_fuses_glu.
  std::optional<Activation> glu;
  /// Choose among the kernels the target has for this problem (on sm_90a, its tile widths) by
  /// timing each on this device, the first time the question is asked, and remember the answer
  /// on disk beside the kernel cache (jit/autotune.hpp): later calls and processes read it.
  /// The candidates run on a scratch C, so C is written once. Where a target has one kernel
  /// for the problem, it changes nothing. Without it, a rule picks (the widest tile whose
  /// tiles fill the GPU). A call that a record answers launches only the choice, so it may be
  /// captured into a graph; tune before capturing.
  bool tune = false;
  /// A traced function of the caller's over each output value, applied after every other term
  /// (kernels/gemm_hook.hpp, make_gemm_hook).
  std::shared_ptr<const GemmHook> hook;
  StreamHandle stream = nullptr;  ///< the stream the launch is queued on
  /// Launch with programmatic dependent launch where the kernel chosen supports it (the few-row
  /// kernel, on sm_90 and newer; elsewhere the launch is as usual): its blocks may be scheduled
  /// once the kernel before it in the stream has no block left running, load their first
  /// weights, and wait for its completion before reading A or C. Overlaps a launch and a memory
  /// latency between the short kernels of a decode step. Any kernel launched after it with the
  /// attribute must wait (griddepcontrol_wait) before reading what it writes.
  bool programmatic_dependent_launch = false;
};

/// C = activation(alpha A B^T + beta C + bias), with f32 accumulation: A and B bf16 and C bf16,
/// all f16, or A and B f8e4m3 and C bf16 or f8e4m3.
void gemm(const Device& device, const DeviceTensor<bf16>& a, const DeviceTensor<bf16>& b, const DeviceTensor<bf16>& c,
          const GemmOptions& options = {}, std::source_location where = std::source_location::current());
void gemm(const Device& device, const DeviceTensor<f16>& a, const DeviceTensor<f16>& b, const DeviceTensor<f16>& c,
          const GemmOptions& options = {}, std::source_location where = std::source_location::current());
void gemm(const Device& device, const DeviceTensor<f8e4m3>& a, const DeviceTensor<f8e4m3>& b, const DeviceTensor<bf16>& c,
          const GemmOptions& options = {}, std::source_location where = std::source_location::current());
void gemm(const Device& device, const DeviceTensor<f8e4m3>& a, const DeviceTensor<f8e4m3>& b, const DeviceTensor<f8e4m3>& c,
          const GemmOptions& options = {}, std::source_location where = std::source_location::current());

/// gemm resolved once: calling the result launches with no lookup and no tensor-map encoding
/// (the same tensors, the same memory, the same alpha and beta).
PreparedLaunch gemm_prepare(const Device& device, const DeviceTensor<bf16>& a, const DeviceTensor<bf16>& b, const DeviceTensor<bf16>& c,
                            const GemmOptions& options = {}, std::source_location where = std::source_location::current());
PreparedLaunch gemm_prepare(const Device& device, const DeviceTensor<f16>& a, const DeviceTensor<f16>& b, const DeviceTensor<f16>& c,
                            const GemmOptions& options = {}, std::source_location where = std::source_location::current());
PreparedLaunch gemm_prepare(const Device& device, const DeviceTensor<f8e4m3>& a, const DeviceTensor<f8e4m3>& b, const DeviceTensor<bf16>& c,
                            const GemmOptions& options = {}, std::source_location where = std::source_location::current());
PreparedLaunch gemm_prepare(const Device& device, const DeviceTensor<f8e4m3>& a, const DeviceTensor<f8e4m3>& b, const DeviceTensor<f8e4m3>& c,
                            const GemmOptions& options = {}, std::source_location where = std::source_location::current());

/// Every kernel gemm may launch on `target` for these operands and options (on sm_90a one for
/// each tile width it may pick, as that depends on the GPU's multiprocessors), compiled with no
/// GPU: for warming the cache. The tensors are descriptions (DeviceTensor::for_compile), bias
/// included: their shapes and strides are what a kernel is specialised for.
std::vector<CompiledKernel> gemm_compile(const Target& target, const DeviceTensor<bf16>& a, const DeviceTensor<bf16>& b,
                                         const DeviceTensor<bf16>& c, const GemmOptions& options = {},
                                         std::source_location where = std::source_location::current());
std::vector<CompiledKernel> gemm_compile(const Target& target, const DeviceTensor<f16>& a, const DeviceTensor<f16>& b,
                                         const DeviceTensor<f16>& c, const GemmOptions& options = {},
                                         std::source_location where = std::source_location::current());
std::vector<CompiledKernel> gemm_compile(const Target& target, const DeviceTensor<f8e4m3>& a, const DeviceTensor<f8e4m3>& b,
                                         const DeviceTensor<bf16>& c, const GemmOptions& options = {},
                                         std::source_location where = std::source_location::current());
std::vector<CompiledKernel> gemm_compile(const Target& target, const DeviceTensor<f8e4m3>& a, const DeviceTensor<f8e4m3>& b,
                                         const DeviceTensor<f8e4m3>& c, const GemmOptions& options = {},
                                         std::source_location where = std::source_location::current());

}  // namespace cutejit::kernels
