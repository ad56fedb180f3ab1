/** \file
 * Block-scaled matrix products on the Blackwell tensor cores, compiled into libcutejit, the
 * kernel picked for the device's architecture:
 *
 *     kernels::gemm_block_scaled(gpu, kernels::BlockScaledFormat::nvfp4, a, sfa, b, sfb, c);
 *
 * C (M, N) = alpha (A SFA)(B SFB)^T, with f32 accumulation: each run of `block` elements along K
 * of a row of A (of B) shares one scale, by which every element of the run is multiplied. The
 * epilogue is kernels::gemm's, in cuBLASLt's order, in f32 on each accumulated value x,
 *     C = hook(activation(alpha * x + beta * C + bias[col]), row, col),
 * rounded once to C's type: bf16, f16, or f8e4m3 (rounded to nearest and saturated to +-448; it
 * takes no beta and no bias, and alpha takes the output's scale). The formats (as cuBLAS,
 * CUTLASS and torch._scaled_mm name them):
 *   - nvfp4: e2m1 elements, a UE4M3 scale per 16;
 *   - mxfp4: e2m1 elements, a UE8M0 scale per 32;
 *   - mxfp8: e4m3 elements, a UE8M0 scale per 32.
 * A (M, K) and B (N, K) are K-major bytes as a quantiser writes them: row r of A is K / 2 bytes of
 * element pairs for FP4 (element 2i in the low nibble), K bytes for FP8; so a is (M, K / 2) or
 * (M, K) uint8, rows contiguous and 16-byte aligned. The scales are one byte each, in the 128x4
 * blocked layout cuBLAS and PyTorch use (layout/blocked_scales.hpp: `blocked_scales` writes it
 * from row-by-row scales): sfa holds blocked_scale_bytes(M, K / block) bytes, sfb
 * blocked_scale_bytes(N, K / block). C is row-major, starting on 16 bytes, its row stride a
 * multiple of 16 bytes.
 *
 * The kernel for each architecture (cutejit/kernels/gemm/):
 *   - sm_100a, sm_103a: the persistent tcgen05 GEMM with the scales in tensor memory
 *     (sm100_block_scaled.hpp), nvfp4 and mxfp8; K a multiple of 128 (FP4: 256), N of 8;
 *   - sm_120a, sm_121a: the TMA-fed mma.sync GEMM with its block-scaled atoms (sm120.hpp), all
 *     three formats; K a multiple of 256 for FP4 and 128 for FP8, N of 2.
 * M, N and K are otherwise any size from 1 (the tiles at the edges are partial). Other targets,
 * and formats a target has no kernel for, are an Error that names what would run; so is every
 * mistake in the operands, at the caller's line, and nothing is written.
 *
 * Emulator-verified (not run on hardware): no Blackwell GPU has run these kernels.
 */
#pragma once

#include <memory>
#include <optional>
#include <source_location>
#include <vector>

#include "cutejit/core/compiled.hpp"
#include "cutejit/core/target.hpp"
#include "cutejit/jit/prepared_launch.hpp"
#include "cutejit/kernels/gemm.hpp"
#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/device.hpp"

namespace cutejit::kernels {

enum class BlockScaledFormat : int { nvfp4, mxfp4, mxfp8 };

/// Elements of K that share a scale in `format`: 16 for nvfp4, 32 for mxfp4 and mxfp8.
constexpr int scale_block(BlockScaledFormat format) { return format == BlockScaledFormat::nvfp4 ? 16 : 32; }

struct BlockScaledOptions {
  /// A factor on every product, in f32: NVFP4's per-tensor scale (the product of A's and B's).
  float alpha = 1.0f;
  /// Nonzero: C is read, scaled by beta and added before the bias and the activation.
  float beta = 0.0f;
  /// N values added to every row, of C's type (bf16 or f16).
  std::optional<GemmBias> bias;
  Activation activation = Activation::none;
  /// A traced function of the caller's over each output value, applied last
  /// (kernels/gemm_hook.hpp, make_gemm_hook): gemm's hooks serve here too.
  std::shared_ptr<const GemmHook> hook;
  StreamHandle stream = nullptr;  ///< the stream the launch is queued on
};

/// C = epilogue(alpha (A SFA)(B SFB)^T) in `format`, C bf16, f16 or f8e4m3.
void gemm_block_scaled(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a, const DeviceTensor<uint8_t>& sfa,
                       const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb, const DeviceTensor<bf16>& c,
                       const BlockScaledOptions& options = {}, std::source_location where = std::source_location::current());
void gemm_block_scaled(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a, const DeviceTensor<uint8_t>& sfa,
                       const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb, const DeviceTensor<f16>& c,
                       const BlockScaledOptions& options = {}, std::source_location where = std::source_location::current());
void gemm_block_scaled(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a, const DeviceTensor<uint8_t>& sfa,
                       const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb, const DeviceTensor<f8e4m3>& c,
                       const BlockScaledOptions& options = {}, std::source_location where = std::source_location::current());

/// gemm_block_scaled resolved once: calling the result launches with no lookup and no
/// tensor-map encoding (the same tensors, the same memory, the same alpha and beta).
PreparedLaunch gemm_block_scaled_prepare(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a,
                                         const DeviceTensor<uint8_t>& sfa, const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb,
                                         const DeviceTensor<bf16>& c, const BlockScaledOptions& options = {},
                                         std::source_location where = std::source_location::current());
PreparedLaunch gemm_block_scaled_prepare(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a,
                                         const DeviceTensor<uint8_t>& sfa, const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb,
                                         const DeviceTensor<f16>& c, const BlockScaledOptions& options = {},
                                         std::source_location where = std::source_location::current());
PreparedLaunch gemm_block_scaled_prepare(const Device& device, BlockScaledFormat format, const DeviceTensor<uint8_t>& a,
                                         const DeviceTensor<uint8_t>& sfa, const DeviceTensor<uint8_t>& b, const DeviceTensor<uint8_t>& sfb,
                                         const DeviceTensor<f8e4m3>& c, const BlockScaledOptions& options = {},
                                         std::source_location where = std::source_location::current());

/// The kernel gemm_block_scaled launches on `target` for operands of these shapes and these
/// options, compiled with no GPU (into the disk cache, for cutejit-cache warm): tensors from
/// DeviceTensor<T>::for_compile serve, their pointers null.
std::vector<CompiledKernel> gemm_block_scaled_compile(const Target& target, BlockScaledFormat format, const DeviceTensor<uint8_t>& a,
                                                      const DeviceTensor<uint8_t>& sfa, const DeviceTensor<uint8_t>& b,
                                                      const DeviceTensor<uint8_t>& sfb, const DeviceTensor<bf16>& c,
                                                      const BlockScaledOptions& options = {},
                                                      std::source_location where = std::source_location::current());
std::vector<CompiledKernel> gemm_block_scaled_compile(const Target& target, BlockScaledFormat format, const DeviceTensor<uint8_t>& a,
                                                      const DeviceTensor<uint8_t>& sfa, const DeviceTensor<uint8_t>& b,
                                                      const DeviceTensor<uint8_t>& sfb, const DeviceTensor<f16>& c,
                                                      const BlockScaledOptions& options = {},
                                                      std::source_location where = std::source_location::current());
std::vector<CompiledKernel> gemm_block_scaled_compile(const Target& target, BlockScaledFormat format, const DeviceTensor<uint8_t>& a,
                                                      const DeviceTensor<uint8_t>& sfa, const DeviceTensor<uint8_t>& b,
                                                      const DeviceTensor<uint8_t>& sfb, const DeviceTensor<f8e4m3>& c,
                                                      const BlockScaledOptions& options = {},
                                                      std::source_location where = std::source_location::current());

}  // namespace cutejit::kernels
