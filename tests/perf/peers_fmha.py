"""PyTorch's scaled_dot_product_attention on the shapes bench_fmha measures, in the same device
call and with the same method (median of 30 after warm-up, rotating through copies of Q, K, V
and O): 32k tokens (batch x sequence length), 16 heads, sequence lengths 1k to 16k, head dims
64, 128 and 256, causal and not, BF16. Q, K and V are (B, S, H, D) tensors seen as (B, H, S, D),
the layout cutejit's kernels read. Timed with the cuDNN backend (the goal's peer) and the
FlashAttention-2 backend. FLOPs: 4 B H S^2 D, halved for causal."""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_timing import median_ms_rotated, rotation_sets


def main():
    heads = 16
    for backend, name in ((SDPBackend.FLASH_ATTENTION, "sdpa_flash"), (SDPBackend.CUDNN_ATTENTION, "sdpa_cudnn")):
        for d in (64, 128, 256):
            for causal in (False, True):
                for s in (1024, 2048, 4096, 8192, 16384):
                    batch = 32768 // s
                    elements = batch * s * heads * d
                    sets = rotation_sets(4 * elements * 2)
                    make = lambda: (torch.rand(batch, s, heads, d, device="cuda", dtype=torch.bfloat16) * 2 - 1).transpose(1, 2)
                    q = [make() for _ in range(sets)]
                    k = [make() for _ in range(sets)]
                    v = [make() for _ in range(sets)]
                    try:
                        with sdpa_kernel(backend):
                            t = median_ms_rotated(lambda i: F.scaled_dot_product_attention(q[i], k[i], v[i], is_causal=causal), sets)
                        flops = 4 * batch * heads * s * s * d / (2 if causal else 1)
                        print(f"{name} b{batch} h{heads} s{s} d{d}{' causal' if causal else ''}: {t:.3f} ms, "
                              f"{flops / (t * 1e-3) / 1e12:.1f} TFLOP/s")
                    except RuntimeError as e:
                        print(f"{name} s{s} d{d}: not available ({str(e).splitlines()[0]})")
                    del q, k, v


if __name__ == "__main__":
    main()
