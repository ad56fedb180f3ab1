"""cutejit from Python: launch the kernels a C++ plugin library registers on framework tensors.

    import torch, cutejit
    lib = cutejit.load("libmykernels.so")        # a library with CUTEJIT_REGISTER(...) lines
    saxpy = lib.kernel("saxpy")
    saxpy(grid=(n // 256,), block=(256,))(2.0, x, y)   # x, y: CUDA tensors of any framework

Tensors go in through DLPack (`__dlpack__`), with no copy; numbers as the kernel's parameter
types take them. A launch runs on the framework's current stream (PyTorch's or CuPy's) unless
`stream=` gives another (an integer CUstream). The first launch of a specialization compiles
it, as in C++; later ones cost the launch. Errors are `cutejit.Error`, with cutejit's message.

The native half is libcutejit_python.so, found through $CUTEJIT_PYTHON_LIBRARY, next to this
package, in the build tree, or on the library path.
"""

import ctypes
import os
import sys

__all__ = ["Error", "Library", "Kernel", "load", "kernel_names"]


class Error(RuntimeError):
    """A cutejit error: what went wrong, where, and what would be valid."""


class _Arg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("tensor", ctypes.c_void_p), ("integer", ctypes.c_int64), ("real", ctypes.c_double)]


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
_native.cutejit_launch.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                                   ctypes.c_uint32, ctypes.c_uint64, ctypes.POINTER(_Arg), ctypes.c_int]

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
    return (ctypes.c_uint32 * 3)(*(v + (1,) * (3 - len(v))))


def _current_stream(args):
    """The stream of the framework whose tensors these are, and the GPU they are on."""
    for a in args:
        module = type(a).__module__
        if module.startswith("torch"):
            import torch
            return torch.cuda.current_stream(a.device).cuda_stream, a.device.index or 0
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
        if self._stream is not None:
            stream = int(self._stream)
        packed = (_Arg * max(1, len(args)))()
        capsules = []  # alive until the launch has read them
        for i, a in enumerate(args):
            if isinstance(a, bool) or isinstance(a, int):
                packed[i].kind, packed[i].integer = 1, int(a)
            elif isinstance(a, float):
                packed[i].kind, packed[i].real = 2, a
            elif hasattr(a, "__dlpack__"):
                # The producer orders its work before `stream`: the tensor is ready when the kernel starts.
                capsule = a.__dlpack__(stream=stream if stream else None)
                capsules.append(capsule)
                packed[i].kind, packed[i].tensor = 0, _capsule_pointer(capsule, b"dltensor")
            else:
                raise Error("error: argument %d of kernel '%s' is a %s; give a tensor with __dlpack__, an int or a float"
                            % (i + 1, self._kernel.name, type(a).__name__))
        if _native.cutejit_launch(self._kernel._handle, device, self._grid, self._block, self._shared, stream, packed, len(args)) != 0:
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
