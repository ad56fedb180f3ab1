import os, sys, time, ctypes
sys.path.insert(0, "/tmp/cj/python")
import torch, cutejit
lib = cutejit.load(os.environ["CUTEJIT_TEST_PLUGIN"])
add = lib.kernel("vector_add")
x, z = torch.empty(1024, device="cuda"), torch.empty(1024, device="cuda")
L = add(grid=1, block=256)
L(x, x, z); torch.cuda.synchronize()
def t(f, n=2000):
    f(); t0=time.perf_counter()
    for _ in range(n): f()
    return (time.perf_counter()-t0)*1e6/n
print("full launch", t(lambda: L(x, x, z)))
print("current_stream", t(lambda: torch.cuda.current_stream(x.device).cuda_stream))
print("dlpack no stream", t(lambda: x.__dlpack__()))
s = torch.cuda.current_stream().cuda_stream
print("stream value", s)
print("dlpack stream", t(lambda: x.__dlpack__(stream=s if s else None)))
print("dlpack stream=-1", t(lambda: x.__dlpack__(stream=-1)))
cap = x.__dlpack__()
print("capsule ptr", t(lambda: cutejit._capsule_pointer(cap, b"dltensor")))
packed = (cutejit._Arg * 3)()
p = cutejit._capsule_pointer(cap, b"dltensor")
for i in range(3): packed[i].kind, packed[i].tensor = 0, p
g = L._grid; b = L._block
print("native only", t(lambda: cutejit._native.cutejit_launch(add._handle, 0, g, b, 0, 0, packed, 3)))
print("_Arg alloc", t(lambda: (cutejit._Arg * 3)()))
