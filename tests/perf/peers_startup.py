"""Triton's start-up with a warm cache, measured like cutejit_bench_startup: fresh processes,
the first one filling an empty cache, the next ones finding the kernel there. Reported: the
time from context creation to the first kernel launched and finished."""
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import sys, time
spawned = float(sys.argv[1])
import torch, triton, triton.language as tl
at_import = time.monotonic() - spawned

@triton.jit
def add_kernel(a, b, c, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(c + offs, tl.load(a + offs, mask=mask) + tl.load(b + offs, mask=mask), mask=mask)

x, y, z = (torch.empty(1 << 20, device="cuda") for _ in range(3))
torch.cuda.synchronize()
at_context = time.monotonic() - spawned
add_kernel[(1024,)](x, y, z, 1 << 20, BLOCK=1024)
torch.cuda.synchronize()
at_first = time.monotonic() - spawned
print(f"{at_import * 1e3:.2f} {at_context * 1e3:.2f} {at_first * 1e3:.2f}")
"""


def run(env, script):
    out = subprocess.run([sys.executable, script, str(time.monotonic())], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"triton start-up child failed:\n{out.stderr}")
    return [float(v) for v in out.stdout.split()]


def main():
    work = tempfile.mkdtemp(prefix="triton-startup-")
    script = os.path.join(work, "child.py")  # triton.jit reads the kernel's source from its file
    with open(script, "w") as f:
        f.write(CHILD)
    env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(work, "cache"))
    cold = run(env, script)
    warm = sorted((run(env, script) for _ in range(5)), key=lambda t: t[2] - t[1])
    m = warm[len(warm) // 2]
    print(f"triton_startup_vector_add: cold cache: first launch done {cold[2] - cold[1]:.1f} ms after the context | "
          f"warm cache (median of 5): torch+triton imported at {m[0]:.0f} ms, context at {m[1]:.0f} ms, "
          f"first launch done {m[2] - m[1]:.2f} ms after the context ({m[2]:.0f} ms from spawn)")


if __name__ == "__main__":
    main()
