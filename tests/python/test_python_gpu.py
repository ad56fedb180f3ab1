"""The Python module on the GPU with PyTorch tensors: results against torch, errors, the
framework's current stream, and the hot launch's host time against Triton's and CuTeDSL's in
the same process (gpu_timing.launch_overhead_us, as tests/perf/peers.py measures Triton)."""
import os
import time
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
sys.path.insert(0, os.path.join(here, "..", "perf"))
import torch  # noqa: E402
import cutejit  # noqa: E402
from gpu_timing import launch_overhead_us  # noqa: E402

failures = []


def check(condition, what):
    print(("ok     " if condition else "FAILED ") + what)
    if not condition:
        failures.append(what)


lib = cutejit.load(os.environ["CUTEJIT_TEST_PLUGIN"])
add, saxpy = lib.kernel("vector_add"), lib.kernel("saxpy")
n = 1 << 20
a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
c = torch.full((n,), float("nan"), device="cuda")
add(grid=n // 1024, block=256)(a, b, c)  # four elements a thread
torch.cuda.synchronize()
check(torch.equal(c, a + b), "vector_add on torch tensors equals a + b")

y = b.clone()
saxpy(grid=n // 256, block=256)(2.5, a, y)
torch.cuda.synchronize()
check(torch.allclose(y, 2.5 * a + b, rtol=0, atol=1e-6), "saxpy(2.5, x, y) equals 2.5 * x + y")

# On a side stream: the launch follows PyTorch's current stream, so it is ordered after the
# fill queued there and before the copy queued after it.
side = torch.cuda.Stream()
with torch.cuda.stream(side):
    a2 = torch.randn(n, device="cuda")
    c2 = torch.empty(n, device="cuda")
    add(grid=n // 1024, block=256)(a2, b, c2)
    out = c2.clone()
side.synchronize()
check(torch.equal(out, a2 + b), "a launch inside torch.cuda.stream(s) runs on s, in order")

# On a stream named explicitly: each tensor's producer (PyTorch, on its current stream) makes the
# tensor ready for that stream first, through DLPack.
other = torch.cuda.Stream()
a3 = torch.randn(n, device="cuda")
c3 = torch.empty(n, device="cuda")
add(grid=n // 1024, block=256, stream=other.cuda_stream)(a3, b, c3)
other.synchronize()
check(torch.equal(c3, a3 + b), "a launch on stream= runs there, after the tensors' producers")

# Through DLPack proper: PyTorch's tensors take a shortcut, so a producer that offers only the
# protocol shows that path works, and CuPy's arrays where CuPy is importable.
class OnlyDlpack:
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


c.fill_(float("nan"))
add(grid=n // 1024, block=256)(OnlyDlpack(a), OnlyDlpack(b), OnlyDlpack(c))
torch.cuda.synchronize()
check(torch.equal(c, a + b), "tensors that offer only __dlpack__ are read through DLPack")

# A producer still at work on its own stream: PyTorch writes the tensor on `producer`, its
# current stream, behind a long sleep; the launch goes to the legacy default stream (the
# wrapper hides the framework), so it must be made to wait through DLPack's stream protocol,
# or it reads the zeros.
producer = torch.cuda.Stream()
late = torch.zeros(n, device="cuda")
c.fill_(float("nan"))
torch.cuda.synchronize()
with torch.cuda.stream(producer):
    torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU cycles
    late.copy_(a)
    add(grid=n // 1024, block=256)(OnlyDlpack(late), OnlyDlpack(b), OnlyDlpack(c))
torch.cuda.synchronize()
check(torch.equal(c, a + b), "a tensor still being written on its producer's stream is waited for")
try:
    import cupy

    ca, cb = cupy.asarray(a.cpu().numpy()), cupy.asarray(b.cpu().numpy())
    cc = cupy.empty_like(ca)
    add(grid=n // 1024, block=256)(ca, cb, cc)
    cupy.cuda.get_current_stream().synchronize()
    check(bool((cc == ca + cb).all()), "CuPy arrays, on CuPy's current stream")
except ImportError:
    print("cupy: not importable here, not checked")

# A strided view: the tensor's strides reach the kernel (saxpy indexes through its layout).
base = torch.randn(2 * n, device="cuda")
view = base[::2]
y = b.clone()
saxpy(grid=n // 256, block=256)(2.5, view, y)
torch.cuda.synchronize()
check(torch.allclose(y, 2.5 * view + b, rtol=0, atol=1e-6), "a stride-2 view is read through its stride")


# A Constexpr<bool> and a Value<f16> from Python numbers.
scale = lib.kernel("scale_or_negate")
s1 = a.clone()
scale(grid=n // 256, block=256)(s1, True, 0.5)
s2 = a.clone()
scale(grid=n // 256, block=256)(s2, 0, 2)
torch.cuda.synchronize()
check(torch.equal(s1, -0.5 * a) and torch.equal(s2, 2 * a), "bool and f16 parameters take Python numbers")


def error_of(fn):
    try:
        fn()
    except cutejit.Error as e:
        return str(e)
    return ""


e = error_of(lambda: add(grid=1, block=32)(a.double(), b, c))
check("takes a f32 tensor" in e, "a float64 tensor is refused with the type it should be: " + e)
e = error_of(lambda: add(grid=1, block=32)(a.cpu(), b, c))
check("host memory" in e, "a CPU tensor is refused: " + e)
e = error_of(lambda: add(grid=1, block=32)(a, b))
check("takes 3 arguments, not 2" in e, "a missing argument is refused: " + e)

# The sum of seven tensors through each entry this process has: the direct one (where the
# native half was built with Python's headers and torch has its DLPack exchange API), TVM-FFI's
# (where tvm_ffi imports) and ctypes. The same results, the same errors, the same stream.
entries = {"ctypes": "ctypes"}
_, types = cutejit._ffi_entry()
if torch.Tensor in types:
    entries["TVM-FFI"] = "tvm-ffi"
if cutejit._direct_entry() and hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
    entries["direct"] = ""
print("launch entries: " + ", ".join(entries))


def use_entry(name):
    os.environ["CUTEJIT_PYTHON_FFI"] = entries[name]
    cutejit._ffi_launch, cutejit._ffi_types, cutejit._direct = None, None, None  # look for the entries again


sum7 = lib.kernel("sum7")
ins = [torch.randn(n, device="cuda") for _ in range(7)]
out = torch.full((n,), float("nan"), device="cuda")
for name in entries:
    use_entry(name)
    out.fill_(float("nan"))
    sum7(grid=n // 256, block=256)(*ins, out)
    torch.cuda.synchronize()
    check(torch.allclose(out, sum(ins[1:], ins[0]), rtol=1e-6, atol=1e-5), name + " entry: sum7 on eight torch tensors equals their sum")
    e = error_of(lambda: sum7(grid=1, block=32)(*ins[:6], ins[6].double(), out))
    check("argument 6 of kernel 'sum7'" in e and "takes a f32 tensor" in e, name + " entry: a float64 tensor is refused: " + e)
    e = error_of(lambda: sum7(grid=1, block=32)(*ins[:6], ins[6].cpu(), out))
    check("host memory" in e, name + " entry: a CPU tensor is refused: " + e)
    e = error_of(lambda: sum7(grid=1, block=32)(*ins[:6], 7, out))
    check("argument 6 of kernel 'sum7'" in e, name + " entry: a number for a tensor is refused: " + e)
    # A strided view of a tensor whose storage starts before it: the view's own address.
    y = b.clone()
    saxpy(grid=n // 256, block=256)(2.5, base[1::2], y)
    torch.cuda.synchronize()
    check(torch.allclose(y, 2.5 * base[1::2] + b, rtol=0, atol=1e-6), name + " entry: an offset stride-2 view")
    # On a side stream, as above: ordered after the fill queued there.
    side2 = torch.cuda.Stream()
    with torch.cuda.stream(side2):
        out.fill_(float("nan"))
        torch.cuda._sleep(20_000_000)
        ins[0].add_(1.0)
        sum7(grid=n // 256, block=256)(*ins, out)
        got = out.clone()
    torch.cuda.synchronize()
    check(torch.allclose(got, sum(ins[1:], ins[0]), rtol=1e-6, atol=1e-5), name + " entry: the launch runs on torch's current stream")

# Host time per launch, launches queued back to back, median of 200 rounds of 100: three and
# eight tensors, through each entry this process has, and the peers in the same process: Triton,
# and CuTeDSL through TVM-FFI (its fastest entry, the stream taken from torch's current one) where
# its package imports. Every contestant is timed in each of three passes, in turn, so that a drift
# of the machine during the run shows in the passes rather than in one contestant's figure.
small = 1024
x, z = torch.randn(small, device="cuda"), torch.empty(small, device="cuda")
eight = [torch.randn(small, device="cuda") for _ in range(8)]
contestants = {}  # (name, tensor count) -> a launch
for name in entries:
    use_entry(name)
    contestants[name, 3] = add(grid=1, block=256)
    contestants[name, 8] = sum7(grid=4, block=256)
    contestants[name, 3](x, x, z)
    contestants[name, 8](*eight)
    torch.cuda.synchronize()
    check(torch.allclose(eight[7], sum(eight[1:7], eight[0]), rtol=1e-6, atol=1e-5), name + " entry: the timed sum7 launch is right")
    contestants[name, 3] = (lambda f: lambda: f(x, x, z))(contestants[name, 3])
    contestants[name, 8] = (lambda f: lambda: f(*eight))(contestants[name, 8])
try:
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(p, q, r, m, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < m
        tl.store(r + offs, tl.load(p + offs, mask=mask) + tl.load(q + offs, mask=mask), mask=mask)

    @triton.jit
    def sum7_kernel(a, b, c, d, e, f, g, r, m, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        k = offs < m
        s = tl.load(a + offs, mask=k) + tl.load(b + offs, mask=k) + tl.load(c + offs, mask=k) + tl.load(d + offs, mask=k)
        s += tl.load(e + offs, mask=k) + tl.load(f + offs, mask=k) + tl.load(g + offs, mask=k)
        tl.store(r + offs, s, mask=k)

    add_kernel[(4,)](x, x, z, small, BLOCK=256)
    sum7_kernel[(4,)](*eight, small, BLOCK=256)
    torch.cuda.synchronize()
    contestants["Triton", 3] = lambda: add_kernel[(4,)](x, x, z, small, BLOCK=256)
    contestants["Triton", 8] = lambda: sum7_kernel[(4,)](*eight, small, BLOCK=256)
except ImportError:
    print("triton: not importable here, no peer figure")
try:
    import cuda.bindings.driver as cuda_driver
    import cutlass
    import cutlass.cute as cute

    @cute.kernel
    def cute_sum7_kernel(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, d: cute.Tensor, e: cute.Tensor,
                         f: cute.Tensor, g: cute.Tensor, r: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        i = bidx * 256 + tidx
        r[i] = a[i] + b[i] + c[i] + d[i] + e[i] + f[i] + g[i]

    @cute.jit
    def cute_sum7(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, d: cute.Tensor, e: cute.Tensor,
                  f: cute.Tensor, g: cute.Tensor, r: cute.Tensor, stream: cuda_driver.CUstream):
        cute_sum7_kernel(a, b, c, d, e, f, g, r).launch(grid=[small // 256, 1, 1], block=[256, 1, 1], stream=stream)

    fakes = [cute.runtime.make_fake_compact_tensor(cutlass.Float32, (small,), assumed_align=16) for _ in range(8)]
    t0 = time.perf_counter()
    cute_launch = cute.compile(cute_sum7, *fakes, cute.runtime.make_fake_stream(use_tvm_ffi_env_stream=True),
                               options="--enable-tvm-ffi")
    print(f"cutedsl_compile: {time.perf_counter() - t0:.2f} s (cute.compile of the eight-tensor sum, TVM-FFI)")
    eight[7].fill_(float("nan"))
    cute_launch(*eight)
    torch.cuda.synchronize()
    check(torch.allclose(eight[7], sum(eight[1:7], eight[0]), rtol=1e-6, atol=1e-5), "the CuTeDSL peer's sum7 is right")
    contestants["CuTeDSL (TVM-FFI)", 8] = lambda: cute_launch(*eight)
except ImportError as e:
    print(f"cutedsl: not importable here ({e}), no peer figure")
except Exception as e:  # the peer's own failure is reported, and is not this module's
    print(f"cutedsl: the peer failed ({type(e).__name__}: {e}), no peer figure")
    contestants.pop(("CuTeDSL (TVM-FFI)", 8), None)

passes = {key: [] for key in contestants}
for _ in range(3):
    for key, launch in contestants.items():
        if key[0] in entries:
            use_entry(key[0])  # a launcher made under one entry looks for its entry again when another was used
        passes[key].append(launch_overhead_us(launch))
for (name, count), figures in passes.items():
    print(f"launch_overhead[{name}, {count} tensors]: {sorted(figures)[1]:.3f} us (passes: "
          + ", ".join(f"{f:.3f}" for f in figures) + ")")
for count in (3, 8):
    for peer in ("Triton", "CuTeDSL (TVM-FFI)"):
        if (peer, count) not in passes:
            continue
        theirs = sorted(passes[peer, count])[1]
        for name in entries:
            print(f"  cutejit[{name}] / {peer}, {count} tensors: {sorted(passes[name, count])[1] / theirs:.2f}")

print("python module on the GPU: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
