"""cutejit from Python: launch the kernels a C++ plugin library registers on framework tensors.

    import torch, cutejit
    lib = cutejit.load("libmykernels.so")        # a library with CUTEJIT_REGISTER(...) lines
    saxpy = lib.kernel("saxpy")
    saxpy(grid=(n // 256,), block=(256,))(2.0, x, y)   # x, y: CUDA tensors of any framework

Tensors go in with no copy, through DLPack (`__dlpack__`); PyTorch's are read field by field
instead (address, shape, strides, element type: what DLPack would carry), which saves making a
capsule per tensor. Numbers go in as the kernel's parameter types take them. Arguments are
numbered from 0, as in cutejit's C++ messages. A launch runs on the framework's current stream (PyTorch's or CuPy's) unless
`stream=` gives another (an integer CUstream). The first launch of a specialization compiles
it, as in C++; later ones cost the launch. Errors are `cutejit.Error`, with cutejit's message.

The native half is libcutejit_python.so, found through $CUTEJIT_PYTHON_LIBRARY, next to this
package, in the build tree, or on the library path.
"""

import ctypes
import os
import struct
import sys

__all__ = ["Error", "Library", "Kernel", "load", "kernel_names"]


class Error(RuntimeError):
    """A cutejit error: what went wrong, where, and what would be valid."""


# One launch is one buffer (python/cutejit_python.cpp has the C layout): a header (device,
# shared bytes, stream, grid, block), then a record per argument (kind, DLPack type code and
# bits, rank, the tensor's GPU, an address or integer, a float, shape[4], stride[4]).
_HEADER = struct.Struct("<iIQ3I3I")
_RECORD = struct.Struct("<BBBBiQd4q4q")
_NO_DIMS = (0, 0, 0, 0)


def _find_native():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("CUTEJIT_PYTHON_LIBRARY", ""),
                  os.path.join(here, "libcutejit_python.so"),
                  os.path.join(here, "..", "..", "build", "python", "libcutejit_python.so"),
                  os.path.join(here, "..", "libcutejit_python.so")]
    for path in candidates:
        if path and os.path.exists(path):
            return ctypes.CDLL(os.path.abspath(path))
    return ctypes.CDLL("libcutejit_python.so")


_native = _find_native()
_native.cutejit_last_error.restype = ctypes.c_char_p
_native.cutejit_load_plugin.argtypes = [ctypes.c_char_p]
_native.cutejit_kernel_names.restype = ctypes.c_char_p
_native.cutejit_find_kernel.argtypes = [ctypes.c_char_p]
_native.cutejit_find_kernel.restype = ctypes.c_void_p
_native.cutejit_release_kernel.argtypes = [ctypes.c_void_p]
_native.cutejit_launch.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _raise():
    raise Error(_native.cutejit_last_error().decode(errors="replace"))


def kernel_names():
    """The names of every kernel registered in this process."""
    names = _native.cutejit_kernel_names().decode()
    return names.split(",") if names else []


def _dim3(v, what):
    if isinstance(v, int):
        v = (v,)
    v = tuple(v)
    if not 1 <= len(v) <= 3 or not all(isinstance(x, int) and x >= 1 for x in v):
        raise Error("error: %s is an int or a tuple of 1 to 3 positive ints, not %r" % (what, v))
    return v + (1,) * (3 - len(v))


_torch_types = None


def _torch_type(dtype):
    """A torch dtype's DLPack (code, bits), or None for those cutejit takes only through DLPack."""
    global _torch_types
    if _torch_types is None:
        import torch
        _torch_types = {torch.float32: (2, 32), torch.float16: (2, 16), torch.float64: (2, 64), torch.bfloat16: (4, 16),
                        torch.int8: (0, 8), torch.int16: (0, 16), torch.int32: (0, 32), torch.int64: (0, 64), torch.uint8: (1, 8)}
    return _torch_types.get(dtype)


def _torch_stream(device_index):
    import torch
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # an int, without making a Stream object
    return raw(device_index) if raw else torch.cuda.current_stream(device_index).cuda_stream


def _current_stream(args):
    """The current stream of the framework whose tensors these are, and the GPU they are on."""
    for a in args:
        module = type(a).__module__
        if module.startswith("torch") and getattr(a, "is_cuda", False):
            index = a.device.index or 0
            return _torch_stream(index), index
        if module.startswith("cupy"):
            import cupy
            return cupy.cuda.get_current_stream().ptr, a.device.id
    for a in args:
        if hasattr(a, "__dlpack_device__"):
            return 0, a.__dlpack_device__()[1]
    return 0, 0


class _Launch:
    __slots__ = ("_kernel", "_grid", "_block", "_shared", "_stream")

    def __init__(self, kernel, grid, block, shared_bytes, stream):
        self._kernel, self._grid, self._block, self._shared, self._stream = kernel, grid, block, shared_bytes, stream

    def __call__(self, *args):
        stream, device = _current_stream(args)
        # On the framework's current stream, the tensors' producers (the framework's own work on
        # that stream) are already ordered before the kernel: DLPack is asked for no
        # synchronization (-1). On another stream, each producer makes its tensor ready for it.
        sync = -1
        if self._stream is not None and int(self._stream) != stream:
            stream = sync = int(self._stream)
            if sync == 0:
                sync = 1  # DLPack's name for the legacy default stream
        packed = [_HEADER.pack(device, self._shared, stream, *self._grid, *self._block)]
        capsules = []  # alive until the launch has read them
        for i, a in enumerate(args):
            if isinstance(a, bool) or isinstance(a, int):
                packed.append(_RECORD.pack(1, 0, 0, 0, 0, a & 0xFFFFFFFFFFFFFFFF, 0.0, *_NO_DIMS, *_NO_DIMS))
            elif isinstance(a, float):
                packed.append(_RECORD.pack(2, 0, 0, 0, 0, 0, a, *_NO_DIMS, *_NO_DIMS))
            elif sync == -1 and type(a).__module__.startswith("torch") and getattr(a, "is_cuda", False) and 1 <= a.dim() <= 4 \
                    and _torch_type(a.dtype):
                # PyTorch's tensors field by field: what DLPack would say, without making a capsule.
                code, bits = _torch_type(a.dtype)
                shape, strides = tuple(a.shape) + _NO_DIMS, a.stride() + _NO_DIMS
                packed.append(_RECORD.pack(3, code, bits, a.dim(), a.device.index or 0, a.data_ptr(), 0.0, *shape[:4], *strides[:4]))
            elif hasattr(a, "__dlpack__"):
                capsule = a.__dlpack__(stream=sync)
                capsules.append(capsule)
                packed.append(_RECORD.pack(0, 0, 0, 0, 0, _capsule_pointer(capsule, b"dltensor"), 0.0, *_NO_DIMS, *_NO_DIMS))
            else:
                raise Error("error: argument %d of kernel '%s' is a %s; give a tensor with __dlpack__, an int or a float"
                            % (i, self._kernel.name, type(a).__name__))
        if _native.cutejit_launch(self._kernel._handle, b"".join(packed), len(args)) != 0:
            _raise()


class Kernel:
    """A registered kernel. `kernel(grid=..., block=...)` gives a launcher; call it with the arguments."""

    def __init__(self, name):
        self.name = name
        self._handle = _native.cutejit_find_kernel(name.encode())
        if not self._handle:
            _raise()

    def __del__(self):
        if getattr(self, "_handle", None):
            _native.cutejit_release_kernel(self._handle)

    def __call__(self, grid, block, shared_bytes=0, stream=None):
        return _Launch(self, _dim3(grid, "grid"), _dim3(block, "block"), int(shared_bytes), stream)


class Library:
    """A plugin library of registered kernels, loaded into this process."""

    def __init__(self, path):
        self.path = path
        if _native.cutejit_load_plugin(os.fspath(path).encode()) != 0:
            _raise()

    def kernel(self, name):
        return Kernel(name)


def load(path):
    """Loads a shared library whose CUTEJIT_REGISTER lines register its kernels."""
    return Library(path)
