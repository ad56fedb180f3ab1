"""cuBLAS through torch.matmul, BF16, on the shapes bench_gemm measures (run in the same device
call): B is stored N x K and multiplied transposed, as cutejit's gemm_bf16 does ("TN")."""
import torch

from gpu_timing import median_ms


def main():
    for size in (8192, 4096):
        m = n = k = size
        a = torch.rand(m, k, device="cuda", dtype=torch.bfloat16) * 2 - 1
        b = torch.rand(n, k, device="cuda", dtype=torch.bfloat16) * 2 - 1
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        t = median_ms(lambda: torch.matmul(a, b.t(), out=c))
        print(f"torch_matmul_bf16 {m}x{n}x{k}: {t:.3f} ms, {2 * m * n * k / (t * 1e-3) / 1e12:.1f} TFLOP/s")


if __name__ == "__main__":
    main()
