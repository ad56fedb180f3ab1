"""PyTorch's scaled_dot_product_attention backward on the shapes bench_fmha_backward measures,
in the same device call and with the same method (median of 30 after warm-up, rotating through
copies of the inputs): 16k tokens (batch x sequence length), 16 heads, sequence lengths 1k to
8k, head dims 64 and 128, causal and not, BF16, (B, S, H, D) tensors seen as (B, H, S, D). Only
the backward is timed (torch.autograd.grad of a forward run once per copy), with the cuDNN
backend (the goal's peer) and the FlashAttention-2 backend. FLOPs: 10 B H S^2 D, halved for
causal."""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_timing import median_ms_rotated, rotation_sets


def main():
    heads = 16
    for backend, name in ((SDPBackend.FLASH_ATTENTION, "sdpa_flash_bwd"), (SDPBackend.CUDNN_ATTENTION, "sdpa_cudnn_bwd")):
        for d in (64, 128):
            for causal in (False, True):
                for s in (1024, 2048, 4096, 8192):
                    batch = 16384 // s
                    elements = batch * s * heads * d
                    sets = rotation_sets(8 * elements * 2)
                    make = lambda: (torch.rand(batch, s, heads, d, device="cuda", dtype=torch.bfloat16) * 2 - 1).transpose(1, 2)
                    try:
                        with sdpa_kernel(backend):
                            work = []
                            for _ in range(sets):
                                q, k, v = (make().requires_grad_() for _ in range(3))
                                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                                work.append((o, (q, k, v), make()))
                            t = median_ms_rotated(
                                lambda i: torch.autograd.grad(work[i][0], work[i][1], work[i][2], retain_graph=True), sets)
                        flops = 10 * batch * heads * s * s * d / (2 if causal else 1)
                        print(f"{name} b{batch} h{heads} s{s} d{d}{' causal' if causal else ''}: {t:.3f} ms, "
                              f"{flops / (t * 1e-3) / 1e12:.1f} TFLOP/s")
                    except RuntimeError as e:
                        print(f"{name} s{s} d{d}: not available ({str(e).splitlines()[0]})")
                    work = None


if __name__ == "__main__":
    main()
