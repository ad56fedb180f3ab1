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
 * unit-stride mode); M, N and K are otherwise any size from 1.
 *
 * The epilogue works in f32 on each accumulated value x, in cuBLASLt's order,
 *     C = activation(alpha * x + beta * C + bias[col]),
 * and rounds once to bf16. With beta = 0, C is not read (it may hold NaNs).
 *
 * For a few rows of A (M up to gemm_fusion_max_m, A and B K-major: a decode step's
 * projections), two more steps fuse into the product, where they would otherwise each be a
 * launch of their own:
 *
 *     kernels::gemm(gpu, h, w_qkv, qkv, {.rmsnorm_a = kernels::RmsNorm{norm_weight, 1e-6f}});
 *     kernels::gemm(gpu, h, w_gate_up, act, {.rmsnorm_a = ..., .glu = kernels::Activation::silu});
 *
 * rmsnorm_a normalises A's rows as they are read; glu takes B as two halves [W; V] and gives
 * C = act(A W^T) * (A V^T) with half of B's rows as columns (SwiGLU with silu). They pay at
 * M = 1 or 2, where the kernel waits on the weights; at M = 8 the norm's arithmetic costs more
 * than the launch it saves (docs/kernels.md has the figures).
 *
 * The kernel for each architecture (cutejit/kernels/gemm/):
 *   - sm_90a: the persistent warp-specialised wgmma GEMM (sm90.hpp), tiles 256, 128 or 64
 *     columns wide, the narrower ones when the wide tiles would not fill the GPU;
 *   - sm_100a, sm_103a: the persistent tcgen05 GEMM (sm100.hpp), A and B K-major;
 *   - sm_80, sm_86, sm_89, sm_120a, sm_121a: the multistage mma.sync GEMM (sm80.hpp).
 * Other targets are an Error that names them. Every mistake (shapes that disagree, strides the
 * kernels cannot read, misaligned memory) is an Error at the caller's line, and nothing is written.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <vector>

#include "cutejit/core/compiled.hpp"
#include "cutejit/core/target.hpp"
#include "cutejit/jit/prepared_launch.hpp"
#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/device.hpp"

namespace cutejit::kernels {

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

/// The most rows of A for which rmsnorm_a and glu are fused (the few-row kernel's M).
inline constexpr int64_t gemm_fusion_max_m = 8;

struct GemmOptions {
  float alpha = 1.0f;
  /// Nonzero: C is read, scaled by beta and added before the bias and the activation.
  float beta = 0.0f;
  /// N values added to every row (rank 1, contiguous).
  std::optional<DeviceTensor<bf16>> bias;
  Activation activation = Activation::none;
  /// A's rows RMS-normalised as they are read (M up to gemm_fusion_max_m, K-major A and B).
  std::optional<RmsNorm> rmsnorm_a;
  /// A gated linear unit: B (N, K) is two halves [W; V] and C is (M, N / 2),
  /// C = epilogue(act(A W^T) * (A V^T)), `act` this activation (silu: SwiGLU; none: bilinear).
  /// The epilogue (alpha, beta, bias of N / 2 values, activation) applies to that product.
  /// M up to gemm_fusion_max_m, K-major A and B.
  std::optional<Activation> glu;
  StreamHandle stream = nullptr;  ///< the stream the launch is queued on
};

/// C = activation(alpha A B^T + beta C + bias), for bf16 A, B, C and bias with f32 accumulation.
void gemm(const Device& device, const DeviceTensor<bf16>& a, const DeviceTensor<bf16>& b, const DeviceTensor<bf16>& c,
          const GemmOptions& options = {}, std::source_location where = std::source_location::current());

/// gemm resolved once: calling the result launches with no lookup and no tensor-map encoding
/// (the same tensors, the same memory, the same alpha and beta).
PreparedLaunch gemm_prepare(const Device& device, const DeviceTensor<bf16>& a, const DeviceTensor<bf16>& b, const DeviceTensor<bf16>& c,
                            const GemmOptions& options = {}, std::source_location where = std::source_location::current());

/// Every kernel gemm may launch on `target` for these operands and options (on sm_90a one for
/// each tile width it may pick, as that depends on the GPU's multiprocessors), compiled with no
/// GPU: for warming the cache. The tensors are descriptions (DeviceTensor::for_compile), bias
/// included: their shapes and strides are what a kernel is specialised for.
std::vector<CompiledKernel> gemm_compile(const Target& target, const DeviceTensor<bf16>& a, const DeviceTensor<bf16>& b,
                                         const DeviceTensor<bf16>& c, const GemmOptions& options = {},
                                         std::source_location where = std::source_location::current());

}  // namespace cutejit::kernels
