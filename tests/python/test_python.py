"""The Python module without a GPU: it loads, finds a plugin's kernels, and reports every
mistake as a cutejit.Error with cutejit's message. Run by CTest (CUTEJIT_TEST_PLUGIN names the
test plugin; CUTEJIT_PYTHON_LIBRARY the native half)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import cutejit  # noqa: E402

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAILED:", what)


def raises(fn, *needles):
    try:
        fn()
    except cutejit.Error as e:
        text = str(e)
        check(all(n in text for n in needles), "message %r lacks %r" % (text, needles))
        return
    check(False, "no cutejit.Error from %r" % fn)


raises(lambda: cutejit.load("/nonexistent/libk.so"), "cannot load the plugin /nonexistent/libk.so")
lib = cutejit.load(os.environ["CUTEJIT_TEST_PLUGIN"])
check({"vector_add", "saxpy"} <= set(cutejit.kernel_names()), "the plugin's kernels are registered: %r" % cutejit.kernel_names())
raises(lambda: lib.kernel("no_such_kernel"), "no kernel named 'no_such_kernel' is registered", "vector_add")
add = lib.kernel("vector_add")
raises(lambda: add(grid=(0,), block=256), "grid is an int or a tuple of 1 to 3 ints from 1 to 2^32 - 1")
raises(lambda: add(grid=1 << 32, block=256), "not (4294967296,)")
raises(lambda: add(grid=1, block=(1, 2, 3, 4)), "block is an int")
raises(lambda: add(grid=1, block=32)(object(), 1, 2), "argument 0 of kernel 'vector_add' is a object")
raises(lambda: add(grid=1, block=32)(1 << 64, 2, 3), "argument 0 of kernel 'vector_add' is", "outside the 64-bit signed range")
raises(lambda: add(grid=1, block=32, shared_bytes=-1), "shared_bytes is 0 to 2^32 - 1")
# A launch needs the GPU before the kernel checks its arguments: on a machine with none this is
# the driver's absence, on one with a GPU the kernel's check. Either way an Error, never a crash.
raises(lambda: add(grid=1, block=32)(1, 2, 3), "error:")

# The direct entry (python/direct_launch.cpp), where the native half was built with Python's
# headers: a launcher without stream= is then a call into it, which takes numbers itself and
# hands what it does not take (here an object without the DLPack exchange API) to the Python
# launcher, with the same errors as above; CUTEJIT_PYTHON_FFI=tvm-ffi turns it off.
if os.environ.get("CUTEJIT_TEST_EXPECT_DIRECT") == "1":
    direct = cutejit._direct_entry()
    check(bool(direct), "the direct entry is found")
    launcher = add(grid=1, block=32)
    check(type(launcher).__name__ == "builtin_function_or_method" and launcher.__name__ == "launch" and
          type(launcher.__self__).__name__ == "PyCapsule", "a launcher is the direct entry's launch, bound: %r" % (launcher,))
    check(type(add(grid=1, block=32, stream=0)).__name__ == "_Launch", "a launcher with stream= is the Python one")
    raises(lambda: launcher(object(), 1, 2), "argument 0 of kernel 'vector_add' is a object")
    raises(lambda: launcher(1, -(1 << 63) - 1, 3), "argument 1 of kernel 'vector_add' is an int outside the 64-bit signed range")
    raises(lambda: launcher(*range(64), object()), "argument 64 of kernel 'vector_add' is a object")  # past the stack's 64 records
    os.environ["CUTEJIT_PYTHON_FFI"] = "tvm-ffi"
    cutejit._direct = None
    check(not cutejit._direct_entry() and type(add(grid=1, block=32)).__name__ == "_Launch", "CUTEJIT_PYTHON_FFI=tvm-ffi turns it off")
    del os.environ["CUTEJIT_PYTHON_FFI"]
    cutejit._direct = None

# Where the native half was built with TVM-FFI's header and tvm_ffi imports (the build tree's
# tests: scripts/setup.sh unpacks it), launches of numbers and PyTorch tensors take TVM-FFI's
# entry: the same mistakes give the same cutejit.Error through it, and CUTEJIT_PYTHON_FFI=ctypes
# turns it off.
if os.environ.get("CUTEJIT_TEST_EXPECT_TVM_FFI") == "1":
    launch, types = cutejit._ffi_entry()
    check(bool(launch) and {bool, int, float} <= types, "the TVM-FFI entry is found: %r" % ((launch, types),))
    raises(lambda: launch(add._handle, 1, 1, 1, 32, 1, 1, 0, -1, "text"), "argument 0 of kernel 'vector_add' is a str")
    raises(lambda: launch(add._handle, 1, 1, 1, 32, 1, 1, 0, -1, 1 << 64), "argument 0 of kernel 'vector_add' is",
           "outside the 64-bit signed range")
    raises(lambda: launch(add._handle, 1, 1), "launch takes the kernel, the grid")

print("python module: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
