"""cuBLAS through PyTorch on the shapes bench_gemm measures, in the same device call and with
the same method (median of 30 after warm-up, rotating through copies of A, B and C so that no
run finds its inputs in L2):
- BF16: torch.matmul(a, b.t()), B stored N x K and multiplied transposed, as cutejit's
  gemm_bf16 does ("TN"); the same in f16 (kernels_gemm_f16);
- FP8: torch._scaled_mm with e4m3 A (M x K, row-major) and B given as b.t() of an N x K
  tensor (column-major K x N), float32 scalar scales and a bf16 output, as gemm_fp8 does. It
  is timed twice: with cuBLAS's default accumulation (which periodically promotes partial sums
  to a full f32 accumulator) and with use_fast_accum=True (the tensor cores' own accumulator
  throughout, which is what gemm_fp8 does: the like-for-like figure);
- FP8 with an e4m3 output (scale_result, saturated), on the two square shapes, as
  gemm_fp8_e4m3_out does."""
import torch

from gpu_timing import median_ms_rotated, rotation_sets

SHAPES = ((8192, 8192, 8192), (4096, 4096, 4096), (8192, 8192, 1024), (16384, 1024, 8192), (128, 8192, 8192))


def report(name, m, n, k, t):
    print(f"{name} {m}x{n}x{k}: {t:.3f} ms, {2 * m * n * k / (t * 1e-3) / 1e12:.1f} TFLOP/s")


def main():
    # bf16, then f16 in and out (as kernels_gemm_f16)
    for dtype, name in ((torch.bfloat16, "torch_matmul_bf16"), (torch.float16, "torch_matmul_f16")):
        for m, n, k in SHAPES:
            sets = rotation_sets((m * k + n * k) * 2 + m * n * 2)
            a = [torch.rand(m, k, device="cuda", dtype=dtype) * 2 - 1 for _ in range(sets)]
            b = [torch.rand(n, k, device="cuda", dtype=dtype) * 2 - 1 for _ in range(sets)]
            c = [torch.empty(m, n, device="cuda", dtype=dtype) for _ in range(sets)]
            t = median_ms_rotated(lambda i: torch.matmul(a[i], b[i].t(), out=c[i]), sets)
            report(name, m, n, k, t)
            del a, b, c
    scale_a = torch.tensor(0.5, device="cuda", dtype=torch.float32)
    scale_b = torch.tensor(0.25, device="cuda", dtype=torch.float32)
    for m, n, k in SHAPES:
        sets = rotation_sets(m * k + n * k + m * n * 2)
        a = [(torch.rand(m, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn) for _ in range(sets)]
        b = [(torch.rand(n, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn) for _ in range(sets)]
        for fast, name in ((False, "torch_scaled_mm_fp8"), (True, "torch_scaled_mm_fp8_fast_accum")):
            t = median_ms_rotated(
                lambda i: torch._scaled_mm(a[i], b[i].t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16,
                                           use_fast_accum=fast), sets)
            report(name, m, n, k, t)
        del a, b
    scale_c = torch.tensor(4.0, device="cuda", dtype=torch.float32)
    for m, n, k in SHAPES[:2]:
        sets = rotation_sets(m * k + n * k + m * n)
        a = [(torch.rand(m, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn) for _ in range(sets)]
        b = [(torch.rand(n, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn) for _ in range(sets)]
        for fast, name in ((False, "torch_scaled_mm_fp8_e4m3_out"), (True, "torch_scaled_mm_fp8_e4m3_out_fast_accum")):
            try:
                t = median_ms_rotated(
                    lambda i: torch._scaled_mm(a[i], b[i].t(), scale_a=scale_a, scale_b=scale_b, scale_result=scale_c,
                                               out_dtype=torch.float8_e4m3fn, use_fast_accum=fast), sets)
                report(name, m, n, k, t)
            except RuntimeError as e:  # an FP8 output this PyTorch or cuBLAS does not offer
                print(f"{name} {m}x{n}x{k}: not available ({str(e).splitlines()[0]})")
        del a, b


if __name__ == "__main__":
    main()
