"""PyTorch on the shapes bench_kernels measures, in the same device call and with the same method
(median of 30 after warm-up, rotating through copies of the data; bandwidth counts each byte read
or written once), eager and under torch.compile:
  - add + rms_norm: residual = x + residual; y = F.rms_norm(residual, (hidden,), weight);
  - silu * mul: F.silu(gate) * up;
  - rope: Hugging Face's rotate-half rotation with cos and sin tables precomputed (not timed);
  - a decode step's projections, F.linear (cuBLAS), eager only;
  - the prefill's projections at 8192 tokens: F.linear, torch.addmm for the residual (out of
    place: cuBLAS with C added), and gate/up as one F.linear of 2 n rows (the product alone:
    SiLU·mul is another kernel in torch), eager only."""
import sys

import torch
import torch.nn.functional as F

from gpu_timing import median_ms_rotated, rotation_sets


def add_rmsnorm(x, r, w):
    r = x + r
    return r, F.rms_norm(r, (r.shape[-1],), w, 1e-6)


def silu_mul(g, u):
    return F.silu(g) * u


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def report(what, nbytes, ms):
    print(f"{what:<52} {ms * 1e3:9.1f} us  {nbytes / (ms * 1e-3) / 1e9:7.0f} GB/s")


def main():
    bf = dict(device="cuda", dtype=torch.bfloat16)
    prefill_only = sys.argv[1:] == ["prefill"]  # the prefill's projections alone
    for mode in () if prefill_only else ("eager", "compiled"):
        wrap = (lambda f: f) if mode == "eager" else (lambda f: torch.compile(f, dynamic=False))
        f_norm, f_silu, f_rope = wrap(add_rmsnorm), wrap(silu_mul), wrap(rope)
        for rows in (1, 64, 4096):
            h = 4096
            nbytes = 2 * rows * h * 4 + 2 * h
            sets = rotation_sets(nbytes)
            xs = [torch.randn(rows, h, **bf) for _ in range(sets)]
            rs = [torch.randn(rows, h, **bf) for _ in range(sets)]
            w = torch.randn(h, **bf)
            report(f"torch {mode} add + rms_norm {rows} x {h}", nbytes, median_ms_rotated(lambda s: f_norm(xs[s], rs[s], w), sets))
        for rows in (64, 4096):
            n = 12288
            nbytes = 2 * rows * n * 3
            sets = rotation_sets(nbytes)
            gs = [torch.randn(rows, n, **bf) for _ in range(sets)]
            us = [torch.randn(rows, n, **bf) for _ in range(sets)]
            report(f"torch {mode} silu * mul {rows} x {n}", nbytes, median_ms_rotated(lambda s: f_silu(gs[s], us[s]), sets))
        for tokens in (64, 4096):
            heads, d = 32, 128
            nbytes = 2 * tokens * heads * d * 2
            sets = rotation_sets(nbytes)
            xs = [torch.randn(tokens, heads, d, **bf) for _ in range(sets)]
            inv = 1.0 / (1e6 ** (torch.arange(0, d, 2, device="cuda").float() / d))
            ang = torch.arange(tokens, device="cuda").float()[:, None] * inv[None, :]
            emb = torch.cat((ang, ang), dim=-1)[:, None, :]
            cos, sin = emb.cos().to(torch.bfloat16), emb.sin().to(torch.bfloat16)
            report(f"torch {mode} rope {tokens} x {heads} x {d}", nbytes, median_ms_rotated(lambda s: f_rope(xs[s], cos, sin), sets))
    # A decode step's projections: cuBLAS through torch (x @ w.T), as transformers calls it.
    for m in () if prefill_only else (1, 8):
        for n, k in ((4096, 4096), (1024, 4096), (12288, 4096), (4096, 12288)):
            nbytes = 2 * (n * k + m * k + m * n)
            sets = rotation_sets(nbytes)
            ws = [torch.randn(n, k, **bf) for _ in range(sets)]
            x = torch.randn(m, k, **bf)
            report(f"torch matmul {m} x {n} x {k}", nbytes, median_ms_rotated(lambda s: torch.nn.functional.linear(x, ws[s]), sets))

    # The prefill's projections at 8 x 1024 tokens, in TFLOP/s (bench_kernels' time_prefill_gemm).
    for n, k, how in ((6144, 4096, ""), (4096, 4096, ""), (4096, 4096, "residual"), (24576, 4096, ""), (4096, 12288, ""),
                      (4096, 12288, "residual")):
        m = 8192
        sets = rotation_sets(2 * (n * k + m * k + m * n))
        ws = [torch.randn(n, k, **bf) for _ in range(sets)]
        x = torch.randn(m, k, **bf)
        c = torch.randn(m, n, **bf)
        if how == "residual":
            ms = median_ms_rotated(lambda s: torch.addmm(c, x, ws[s].t()), sets)
        else:
            ms = median_ms_rotated(lambda s: torch.nn.functional.linear(x, ws[s]), sets)
        what = f"torch prefill gemm {m} x {n} x {k}" + (f" {how}" if how else "")
        print(f"{what:<52} {ms * 1e3:9.1f} us  {2 * m * n * k / (ms * 1e-3) / 1e12:7.1f} TFLOP/s")


if __name__ == "__main__":
    main()
