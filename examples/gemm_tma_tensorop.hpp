// Named kernels of cutejit/kernels/gemm/sm120.hpp, their launches and their checks.
#pragma once

#include "cutejit/kernels/gemm/sm120.hpp"

#include "gemm_sm80.hpp"

namespace examples {
using namespace cutejit;

/// The TMA-fed mma.sync GEMM for one atom and output type: gemm_tma_tensorop_{inputs}_{output}.
template <class Op, Element Out>
inline auto gemm_tma_tensorop =
    Kernel{"gemm_tma_tensorop_" + std::string(name(dtype_v<typename Op::ElementA>)) + "_" + std::string(name(dtype_v<Out>)),
           [](TmaDescriptor<typename Op::ElementA> a, TmaDescriptor<typename Op::ElementB> b, Tensor<Out> c, Int m, Int n, Int k) {
             gemm_sm120::kernel<Op, Out>(a, b, c, m, n, k);
           }};

/// The launch of C (m x n, row-major) = A (m x k) * B^T (B: n x k) on device buffers, the shape checked.
template <class Op, Element Out>
PreparedLaunch gemm_tma_tensorop_prepare(const Device& gpu, const Buffer<typename Op::ElementA>& a, const Buffer<typename Op::ElementB>& b,
                                         const Buffer<Out>& c, int64_t m, int64_t n, int64_t k, detail::Where w = detail::Where::current()) {
  using T = typename Op::ElementA;
  gemm_sm120::check_shape(gemm_tma_tensorop<Op, Out>.name(), m, n, k, int(sizeof(T)), w);
  return gemm_tma_tensorop<Op, Out>.prepare(gpu, gemm_sm120::launch(m, n, gemm_sm120::Resources<T>::shared_bytes), gemm_sm120::operand_map(a, m, k),
                                            gemm_sm120::operand_map(b, n, k), c.view({m, n}), int32_t(m), int32_t(n), int32_t(k));
}

/// C = A * B^T on the atom `Op` against a float64 product of random operands; cross-compiles
/// for sm_90a and the sm_120 family.
template <class Op, Element Out>
Example gemm_tma_tensorop_example(int64_t m, int64_t n, int64_t k, unsigned seed = 31) {
  using T = typename Op::ElementA;
  return {gemm_tma_tensorop<Op, Out>.name().c_str(),
          [=](const Device& gpu) {
            auto ha = gemm::random_operand<T>(size_t(m * k), seed), hb = gemm::random_operand<T>(size_t(n * k), seed + 1);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(gemm::poisoned<Out>(m, n));
            gemm_tma_tensorop_prepare<Op, Out>(gpu, a, b, c, m, n, k)();
            gpu.synchronize();
            return gemm::error(gemm::to_floats(c), gemm::reference(ha, hb, m, n, k, gemm_sm80::Major::k, gemm_sm80::Major::k));
          },
          [=](const Target& t) {
            return gemm_tma_tensorop<Op, Out>.compile(t, gemm_sm120::operand_map_for_compile<T>(), gemm_sm120::operand_map_for_compile<T>(),
                                                      DeviceTensor<Out>::make(256, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1}),
                                                      int32_t(m), int32_t(n), int32_t(k));
          },
          1e-2,
          {"sm_90a", "sm_120a", "sm_121a"}};
}

/// The block-scaled GEMM on the same ring: C (M x N) = epilogue((A SFA)(B SFB)^T) for a
/// block-scaled atom, A and B bytes (FP8, or FP4 pairs) stored K-major, the scales in the
/// blocked layout: gemm_tma_{nvfp4, mxfp4, mxfp8}_{output}. Compile-verified only (sm_120a,
/// sm_121a): no GPU here has block-scaled mma.sync.
template <class Op>
constexpr const char* block_scaled_format() {
  return Op::kind == ScaledMmaKind::mxf4nvf4 ? "nvfp4" : Op::kind == ScaledMmaKind::mxf4 ? "mxfp4" : "mxfp8";
}
template <class Op, Element Out, Epilogue E = Identity>
void gemm_tma_block_scaled_kernel(const TmaDescriptor<uint8_t>& a, const TmaDescriptor<uint8_t>& b, const Tensor<uint8_t>& sfa,
                                  const Tensor<uint8_t>& sfb, const Tensor<Out>& c, const Int& m, const Int& n, const Int& k,
                                  const E& epilogue = {}) {
  gemm_sm120::kernel<Op, Out>(a, b, c, m, n, k, epilogue, gemm_sm120::block_scaled<Op>(sfa, sfb, m, n, k));
}
template <class Op, Element Out>
inline auto gemm_tma_block_scaled = Kernel{
    std::string("gemm_tma_") + block_scaled_format<Op>() + "_" + std::string(name(dtype_v<Out>)),
    [](TmaDescriptor<u8> a, TmaDescriptor<u8> b, Tensor<u8> sfa, Tensor<u8> sfb, Tensor<Out> c, Int m, Int n, Int k) {
      gemm_tma_block_scaled_kernel<Op, Out>(a, b, sfa, sfb, c, m, n, k);
    }};

/// The launch of C (m x n, row-major) = (A SFA)(B SFB)^T on device buffers: A m x k and B n x k
/// elements (bytes: k / 2 a row for FP4), the scales in the blocked layout; shapes and sizes
/// checked at the caller's line.
template <class Op, Element Out>
PreparedLaunch gemm_tma_block_scaled_prepare(const Device& gpu, const Buffer<uint8_t>& a, const Buffer<uint8_t>& b, const Buffer<uint8_t>& sfa,
                                             const Buffer<uint8_t>& sfb, const Buffer<Out>& c, int64_t m, int64_t n, int64_t k,
                                             detail::Where w = detail::Where::current()) {
  const auto& kernel = gemm_tma_block_scaled<Op, Out>;
  gemm_sm120::check_block_scaled_shape<Op>(kernel.name(), m, n, k, w);
  const int64_t row_bytes = k / (Op::k_elements / Op::k);
  auto check_size = [&](const char* what, size_t have, int64_t need) {
    if (have < size_t(need))
      detail::fail(kernel.name() + "'s " + what + " needs " + std::to_string(need) + " bytes at " + std::to_string(m) + " x " +
                       std::to_string(n) + " x " + std::to_string(k) + ", not " + std::to_string(have),
                   w);
  };
  check_size("A", a.bytes(), m * row_bytes);
  check_size("B", b.bytes(), n * row_bytes);
  check_size("SFA (rows padded to 128)", sfa.bytes(), gemm_sm120::scale_bytes<Op>(m, k));
  check_size("SFB (rows padded to 128)", sfb.bytes(), gemm_sm120::scale_bytes<Op>(n, k));
  check_size("C", c.bytes(), m * n * int64_t(sizeof(Out)));
  return kernel.prepare(gpu, gemm_sm120::launch(m, n, gemm_sm120::Resources<uint8_t>::shared_bytes), gemm_sm120::operand_map(a, m, row_bytes),
                        gemm_sm120::operand_map(b, n, row_bytes), sfa.view({gemm_sm120::scale_bytes<Op>(m, k)}),
                        sfb.view({gemm_sm120::scale_bytes<Op>(n, k)}), c.view({m, n}), int32_t(m), int32_t(n), int32_t(k));
}

/// The block-scaled GEMM cross-compiled for `target` at an m x n x k shape (elements of K).
template <class Op, Element Out, class K>
CompiledKernel gemm_tma_block_scaled_compile(const K& kernel, const Target& target, int64_t m = 1000, int64_t n = 600, int64_t k = 1024,
                                             detail::Where w = detail::Where::current()) {
  gemm_sm120::check_block_scaled_shape<Op>(kernel.name(), m, n, k, w);
  return kernel.compile(target, gemm_sm120::operand_map_for_compile<uint8_t>(), gemm_sm120::operand_map_for_compile<uint8_t>(),
                        DeviceTensor<uint8_t>::for_compile({gemm_sm120::scale_bytes<Op>(m, k)}),
                        DeviceTensor<uint8_t>::for_compile({gemm_sm120::scale_bytes<Op>(n, k)}),
                        DeviceTensor<Out>::make(256, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1}), int32_t(m), int32_t(n),
                        int32_t(k));
}

/// The epilogue hook on the NVFP4 instance: C = relu((A SFA)(B SFB)^T + bias) in BF16, a bias
/// per column (f32).
inline Kernel gemm_tma_nvfp4_bias_relu{
    "gemm_tma_nvfp4_bias_relu", [](TmaDescriptor<u8> a, TmaDescriptor<u8> b, Tensor<u8> sfa, Tensor<u8> sfb, Tensor<bf16> c,
                                   Tensor<f32> bias, Int m, Int n, Int k) {
      gemm_tma_block_scaled_kernel<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN, bf16>(
          a, b, sfa, sfb, c, m, n, k, [&](F32 x, Int, Int col) { return max(x + F32(bias(col)), F32(0.0f)); });
    }};

/// The epilogue hook on the BF16 instance: C = relu(A * B^T + bias), a bias per column (f32).
inline Kernel gemm_tma_tensorop_bias_relu{
    "gemm_tma_tensorop_bias_relu", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, Tensor<bf16> c, Tensor<f32> bias, Int m, Int n, Int k) {
      gemm_sm120::kernel<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(a, b, c, m, n, k,
                                                             [&](F32 x, Int, Int col) { return max(x + F32(bias(col)), F32(0.0f)); });
    }};

/// gemm_tma_tensorop_bias_relu against relu(float64 product + bias) of random operands.
inline Example gemm_tma_tensorop_bias_relu_example(int64_t m, int64_t n, int64_t k, unsigned seed = 41) {
  return {"gemm_tma_tensorop_bias_relu",
          [=](const Device& gpu) {
            auto ha = gemm::random_operand<bf16>(size_t(m * k), seed), hb = gemm::random_operand<bf16>(size_t(n * k), seed + 1);
            std::vector<float> hbias = gemm::random_operand<float>(size_t(n), seed + 2);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto bias = gpu.upload(hbias);
            auto c = gpu.upload(gemm::poisoned<bf16>(m, n));
            gemm_sm120::check_shape(gemm_tma_tensorop_bias_relu.name(), m, n, k, 2);
            gemm_tma_tensorop_bias_relu.prepare(gpu, gemm_sm120::launch(m, n, gemm_sm120::Resources<bf16>::shared_bytes), gemm_sm120::operand_map(a, m, k),
                                                gemm_sm120::operand_map(b, n, k), c.view({m, n}), bias.view({n}), int32_t(m), int32_t(n),
                                                int32_t(k))();
            gpu.synchronize();
            std::vector<double> ref = gemm::reference(ha, hb, m, n, k, gemm_sm80::Major::k, gemm_sm80::Major::k);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) ref[size_t(i * n + j)] = std::max(ref[size_t(i * n + j)] + double(hbias[size_t(j)]), 0.0);
            return gemm::error(gemm::to_floats(c), ref);
          },
          [=](const Target& t) {
            return gemm_tma_tensorop_bias_relu.compile(t, gemm_sm120::operand_map_for_compile<bf16>(), gemm_sm120::operand_map_for_compile<bf16>(),
                                                       DeviceTensor<bf16>::make(256, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1}),
                                                       DeviceTensor<float>::make(0, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1}),
                                                       int32_t(m), int32_t(n), int32_t(k));
          },
          1e-2,
          {"sm_90a", "sm_120a", "sm_121a"}};
}

}  // namespace examples
