"""Peer figures measured in the same device call as cutejit_bench: torch.add bandwidth on
3 x 1 GiB f32, and Triton's first-call time and launch overhead for a vector add."""
import os
import tempfile
import time

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="triton-cold-"))  # cold cache

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from gpu_timing import launch_overhead_us, median_ms  # noqa: E402


@triton.jit
def add_kernel(a, b, c, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(c + offs, tl.load(a + offs, mask=mask) + tl.load(b + offs, mask=mask), mask=mask)


def main():
    n = 1 << 28
    a = torch.rand(n, device="cuda") * 2 - 1
    b = torch.rand(n, device="cuda") * 2 - 1
    c = torch.empty_like(a)
    t = median_ms(lambda: torch.add(a, b, out=c))
    print(f"torch_add_bandwidth: {t:.3f} ms per call, {3 * n * 4 / (t * 1e-3) / 1e9:.1f} GB/s (3 x 1 GiB f32)")

    a2, b2 = a[: 8192 * 8192].view(8192, 8192), b[: 8192 * 8192].view(8192, 8192)
    c2 = torch.empty_like(a2)
    t = median_ms(lambda: torch.add(a2, b2, out=c2))
    print(f"torch_add_8192x8192: {t:.3f} ms per call, {3 * a2.numel() * 4 / (t * 1e-3) / 1e9:.1f} GB/s")
    t = median_ms(lambda: c2.copy_(a2.t()))
    print(f"torch_transpose_8192x8192: {t:.3f} ms per call, {2 * a2.numel() * 4 / (t * 1e-3) / 1e9:.1f} GB/s (copy_ of .t())")

    small = 1024
    x, y, z = (torch.empty(small, device="cuda") for _ in range(3))
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    add_kernel[(4,)](x, y, z, small, BLOCK=256)
    torch.cuda.synchronize()
    print(f"triton_first_call: {(time.perf_counter() - t0) * 1e3:.1f} ms (cold cache, in a warm process)")

    t = launch_overhead_us(lambda: add_kernel[(4,)](x, y, z, small, BLOCK=256))
    print(f"triton_launch_overhead: {t:.3f} us per launch (host time, same method as cutejit_bench)")


if __name__ == "__main__":
    main()
