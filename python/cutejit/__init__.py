"""cutejit from Python: launch the kernels a C++ plugin library registers on framework tensors.

    import torch, cutejit
    lib = cutejit.load("libmykernels.so")        # a library with CUTEJIT_REGISTER(...) lines
    saxpy = lib.kernel("saxpy")
    saxpy(grid=(n // 256,), block=(256,))(2.0, x, y)   # x, y: CUDA tensors of any framework

Tensors go in with no copy, through DLPack (`__dlpack__`); PyTorch's are read field by field
instead (address, shape, strides, element type: what DLPack would carry), which saves making a
capsule per tensor. Numbers go in as the kernel's parameter types take them. Arguments are
numbered from 0, as cutejit's launch errors number them.

A launch runs on the current stream of the first array's framework (PyTorch's or CuPy's)
unless `stream=` gives another (an integer CUstream). An array whose framework's current stream
is that stream is ready, as for that framework's own kernels; any other is made ready for it by
its producer, through DLPack's stream protocol. Arrays are not kept alive past the call: on a
stream other than their framework's, keep them until that stream has run the kernel (PyTorch's
are recorded on it, so their memory is not reused meanwhile). The first launch of a
specialization compiles it, as in C++; later ones cost the launch. Errors are `cutejit.Error`,
with cutejit's message.

A launcher made without `stream=` launches through the direct entry, a module of CPython's
stable ABI in the native half: it takes the tensors of a framework with a DLPack C exchange API
(`__dlpack_c_exchange_api__`; PyTorch has it) on the stack and the stream from that framework's
current one, and numbers as they are, running no Python code. Anything else it hands to the
launcher below, with the same semantics. Without the direct entry, where TVM-FFI (the
`apache-tvm-ffi` package) is installed, a launch whose arrays are all PyTorch tensors goes
through TVM-FFI, which takes them through the same exchange API. CUTEJIT_PYTHON_FFI=tvm-ffi
turns the direct entry off, CUTEJIT_PYTHON_FFI=ctypes both.

The native half is libcutejit_python.so, found through $CUTEJIT_PYTHON_LIBRARY, next to this
package, in the build tree, or on the library path.
"""

import ctypes
import functools
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


_ffi_launch = None  # TVM-FFI's entry to the launch; False where there is none
_ffi_types = None  # the argument types it takes, settled once torch is imported


def _load_ffi_launch():
    if os.environ.get("CUTEJIT_PYTHON_FFI") == "ctypes" or not hasattr(_native, "__tvm_ffi_launch"):
        return False
    try:
        import tvm_ffi
        launch = tvm_ffi.load_module(_native._name).launch
        tvm_ffi.register_error("cutejit.Error", Error)
        return launch
    except (ImportError, OSError, AttributeError, RuntimeError):
        return False


def _ffi_entry():
    """(launch, types): TVM-FFI's entry to the launch, or False where TVM-FFI is not installed
    or the native half was built without it, and the argument types it takes: numbers, and
    PyTorch's tensors where torch hands them over through its DLPack exchange API."""
    global _ffi_launch, _ffi_types
    if _ffi_types is None:
        if _ffi_launch is None:
            _ffi_launch = _load_ffi_launch()
        torch = sys.modules.get("torch")
        types = (bool, int, float)
        if torch is not None and hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
            types += (torch.Tensor,)
        if torch is None and _ffi_launch:
            return _ffi_launch, frozenset(types)
        _ffi_types = frozenset(types)
    return _ffi_launch, _ffi_types


_direct = None  # the direct entry (python/direct_launch.cpp) as a module; False where there is none


def _direct_entry():
    """The direct entry: a module of CPython's stable ABI in the native half, loaded from the same
    file, which launches on tensors of any framework with a DLPack C exchange API and on numbers
    without running Python code. False where it was not built or is turned off."""
    global _direct
    if _direct is None:
        _direct = False
        if os.environ.get("CUTEJIT_PYTHON_FFI") not in ("ctypes", "tvm-ffi") and hasattr(_native, "PyInit__direct"):
            try:
                import importlib.machinery
                import importlib.util
                loader = importlib.machinery.ExtensionFileLoader("cutejit._direct", _native._name)
                spec = importlib.util.spec_from_file_location("cutejit._direct", _native._name, loader=loader)
                module = importlib.util.module_from_spec(spec)
                loader.exec_module(module)
                module.set_error(Error)
                _direct = module
            except (ImportError, OSError):
                pass
    return _direct


def kernel_names():
    """The names of every kernel registered in this process."""
    names = _native.cutejit_kernel_names().decode()
    return names.split(",") if names else []


def _dim3(v, what):
    if isinstance(v, int):
        v = (v,)
    v = tuple(v)
    if not 1 <= len(v) <= 3 or not all(isinstance(x, int) and 1 <= x <= _UINT32_MAX for x in v):
        raise Error("error: %s is an int or a tuple of 1 to 3 ints from 1 to 2^32 - 1, not %r" % (what, v))
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


def _own_stream(a):
    """The current stream of the framework an array belongs to, or None when unknown."""
    module = type(a).__module__
    if module.startswith("torch") and getattr(a, "is_cuda", False):
        return _torch_stream(a.device.index or 0)
    if module.startswith("cupy"):
        import cupy
        return cupy.cuda.get_current_stream().ptr
    return None


def _launch_stream(args):
    """The stream a launch uses by default (that of the first array's framework) and its GPU."""
    for a in args:
        own = _own_stream(a)
        if own is not None:
            module = type(a).__module__
            return own, (a.device.index or 0) if module.startswith("torch") else a.device.id
    for a in args:
        if hasattr(a, "__dlpack_device__"):
            return 0, a.__dlpack_device__()[1]
    return 0, 0


_INT64 = (-(1 << 63), (1 << 63) - 1)
_UINT32_MAX = (1 << 32) - 1


class _Launch:
    __slots__ = ("_kernel", "_grid", "_block", "_shared", "_stream", "_fast")

    def __init__(self, kernel, grid, block, shared_bytes, stream):
        if not 0 <= shared_bytes <= _UINT32_MAX:
            raise Error("error: shared_bytes is 0 to 2^32 - 1, not %d" % shared_bytes)
        self._kernel, self._grid, self._block, self._shared, self._stream = kernel, grid, block, shared_bytes, stream
        self._fast = None

    def _bind(self):
        """(the entry's settled types, TVM-FFI's launch with this launcher's header bound, the
        argument types it takes): made once, so that a launch costs one type check and one call.
        Not kept while the types are unsettled (torch not imported yet), nor past a change of
        entry (the module's _ffi_types set anew)."""
        launch, types = _ffi_entry() if self._stream is None else (False, frozenset())
        call = functools.partial(launch, self._kernel._handle, *self._grid, *self._block, self._shared, -1) if launch else None
        fast = (_ffi_types, call, types)
        self._fast = fast if _ffi_types is not None else None
        return fast

    def __call__(self, *args):
        fast = self._fast
        if fast is None or fast[0] is not _ffi_types:
            fast = self._bind()
        if fast[1] is not None and fast[2].issuperset(map(type, args)):
            fast[1](*args)
            return
        stream, device = _launch_stream(args)
        if self._stream is not None:
            stream = int(self._stream)
        packed = [_HEADER.pack(device, self._shared, stream, *self._grid, *self._block)]
        capsules = []  # alive until the launch has read them
        for i, a in enumerate(args):
            if isinstance(a, bool) or isinstance(a, int):
                if not _INT64[0] <= a <= _INT64[1]:
                    raise Error("error: argument %d of kernel '%s' is %d, outside the 64-bit signed range a kernel argument "
                                "takes from Python" % (i, self._kernel.name, a))
                packed.append(_RECORD.pack(1, 0, 0, 0, 0, a & 0xFFFFFFFFFFFFFFFF, 0.0, *_NO_DIMS, *_NO_DIMS))
                continue
            if isinstance(a, float):
                packed.append(_RECORD.pack(2, 0, 0, 0, 0, 0, a, *_NO_DIMS, *_NO_DIMS))
                continue
            # An array whose framework's current stream is the launch's is ready for the kernel,
            # as that framework's own kernels would find it; any other is made ready by its
            # producer through DLPack's stream protocol (1 names the legacy default stream).
            ordered = _own_stream(a) == stream
            is_torch = type(a).__module__.startswith("torch") and getattr(a, "is_cuda", False)
            if is_torch and not ordered:
                # Its memory must not be reused on its own stream while this one still reads it.
                import torch
                on = torch.cuda.default_stream(a.device) if stream == 0 else torch.cuda.ExternalStream(stream, device=a.device)
                a.record_stream(on)
            if ordered and is_torch and 1 <= a.dim() <= 4 and _torch_type(a.dtype):
                # PyTorch's tensors field by field: what DLPack would say, without making a capsule.
                code, bits = _torch_type(a.dtype)
                shape, strides = tuple(a.shape) + _NO_DIMS, a.stride() + _NO_DIMS
                packed.append(_RECORD.pack(3, code, bits, a.dim(), a.device.index or 0, a.data_ptr(), 0.0, *shape[:4], *strides[:4]))
            elif hasattr(a, "__dlpack__"):
                # Host memory has no stream to order (PyTorch refuses one); cutejit then refuses the array.
                on_gpu = not hasattr(a, "__dlpack_device__") or a.__dlpack_device__()[0] in (2, 13)  # kDLCUDA, kDLCUDAManaged
                capsule = a.__dlpack__(stream=(-1 if ordered else (stream or 1)) if on_gpu else None)
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
        launch = _Launch(self, _dim3(grid, "grid"), _dim3(block, "block"), int(shared_bytes), stream)
        direct = _direct_entry() if stream is None else False
        if not direct:
            return launch
        # A launch then runs no Python code; what the direct entry does not take, it hands to
        # `launch`, which holds this kernel alive.
        return direct.bind(self._handle, *launch._grid, *launch._block, launch._shared, launch)


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
