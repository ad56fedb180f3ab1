// The launch as a CPython function of the stable ABI (Python 3.10 and later, so one build serves
// every version): the Python module's fastest entry, `cutejit._direct`, loaded from this library.
//
// A launcher is what `bind` returns: `launch` as a built-in method of what it fixes (the kernel,
// grid, block, shared bytes, and the Python launcher to hand anything else to), so a launch from
// Python runs no Python code, and the arguments reach `launch` as the caller passed them (a
// `functools.partial` would copy them behind its own, onto the heap past four). Tensors come
// through their framework's DLPack C exchange API (`__dlpack_c_exchange_api__` on the type;
// PyTorch has it): a DLTensor filled on the stack with no capsule and no allocation, and the
// stream is that framework's current one, as its own kernels use. What cannot go this way (an
// array of a framework without the exchange API, tensors of two frameworks, more arguments than
// a stack record holds) goes to the Python launcher, which takes every case, with the same
// semantics.
#define Py_LIMITED_API 0x030A0000
#include <Python.h>

#include <array>
#include <new>
#include <string>
#include <type_traits>

#include <dlpack/dlpack.h>

#include <cutejit/cutejit.hpp>
#include <cutejit/interop/dlpack.hpp>
#include <cutejit/jit/registry.hpp>

#include "launch_support.hpp"

namespace {

/// cutejit.Error, which the Python module hands over once (set_error).
PyObject* error_type = nullptr;

/// What `bind` fixes for one launcher.
struct Bound {
  const cutejit::RegisteredKernel* kernel;
  cutejit::Launch config;
  PyObject* general;  ///< the Python launcher, for arguments this entry does not take
};
constexpr const char* bound_name = "cutejit.bound_launch";

/// A type's exchange API, or null where it has none this entry can use. Types are few (one or
/// two frameworks), so a short list searched in order is the cache; the GIL guards it, and each
/// type is kept alive so that its address is never another type's.
const DLPackExchangeAPI* exchange_api_of(PyTypeObject* type) {
  struct Seen {
    PyTypeObject* type;
    const DLPackExchangeAPI* api;
  };
  static std::array<Seen, 8> seen{};
  static size_t count = 0;
  for (size_t i = 0; i < count; ++i)
    if (seen[i].type == type) return seen[i].api;
  const DLPackExchangeAPI* api = nullptr;
  if (PyObject* capsule = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "__dlpack_c_exchange_api__")) {
    if (PyCapsule_IsValid(capsule, "dlpack_exchange_api"))
      api = static_cast<const DLPackExchangeAPI*>(PyCapsule_GetPointer(capsule, "dlpack_exchange_api"));
    Py_DECREF(capsule);
  }
  PyErr_Clear();
  // Major version 1 has the table as dlpack.h declares it; a table without the stream, or without
  // either way to a DLTensor, cannot serve a launch.
  if (api && (api->header.version.major != 1 || !api->current_work_stream ||
              (!api->dltensor_from_py_object_no_sync && !api->managed_tensor_from_py_object_no_sync)))
    api = nullptr;
  if (count < seen.size()) {
    Py_INCREF(type);
    seen[count++] = {type, api};
  }
  return api;
}

/// The Device of GPU `ordinal`; the last one asked for is remembered (under the GIL).
const cutejit::Device& device(int ordinal) {
  static int last = -1;
  static const cutejit::Device* last_device = nullptr;
  if (ordinal != last) {
    last_device = &cutejit::python::device(ordinal);
    last = ordinal;
  }
  return *last_device;
}

PyObject* raise(const std::string& message) {
  PyErr_SetString(error_type ? error_type : PyExc_RuntimeError, message.c_str());
  return nullptr;
}

/// Managed tensors taken from a framework whose exchange API has no non-owning form: released
/// when the launch returns, however it returns.
struct Owned {
  std::array<DLManagedTensorVersioned*, 64> tensors;  ///< the first `count`
  size_t count = 0;
  ~Owned() {
    for (size_t i = 0; i < count; ++i)
      if (tensors[i]->deleter) tensors[i]->deleter(tensors[i]);
  }
};

/// Hands the launch to the Python launcher, with the arguments as given.
PyObject* to_general(const Bound& b, PyObject* const* args, Py_ssize_t count) {
  PyObject* tuple = PyTuple_New(count);
  if (!tuple) return nullptr;
  for (Py_ssize_t i = 0; i < count; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SetItem(tuple, i, args[i]);
  }
  PyObject* result = PyObject_Call(b.general, tuple, nullptr);
  Py_DECREF(tuple);
  return result;
}

/// A launcher's call, `self` the capsule of its Bound: None, or an exception (cutejit.Error with
/// cutejit's message).
PyObject* launch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  const auto* b = static_cast<const Bound*>(PyCapsule_GetPointer(self, bound_name));
  if (!b) return nullptr;
  constexpr Py_ssize_t most = 64;
  if (nargs > most) return to_general(*b, args, nargs);

  // First the tensors, so that their GPU is known before any is checked against it. Each array
  // is written as far as there are arguments, and read no further.
  std::array<DLTensor, most> views;
  std::array<bool, most> is_tensor;
  const DLPackExchangeAPI* api = nullptr;
  Owned owned;
  int gpu = -1;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    PyObject* a = args[i];
    is_tensor[size_t(i)] = !PyLong_Check(a) && !PyFloat_Check(a);
    if (!is_tensor[size_t(i)]) continue;
    const DLPackExchangeAPI* own = exchange_api_of(Py_TYPE(a));
    // Two frameworks' current streams may differ: the general launcher orders them.
    if (!own || (api && own != api)) return to_general(*b, args, nargs);
    api = own;
    if (api->dltensor_from_py_object_no_sync) {
      if (api->dltensor_from_py_object_no_sync(a, &views[size_t(i)]) != 0) return nullptr;
    } else {
      DLManagedTensorVersioned*& m = owned.tensors[owned.count];
      if (api->managed_tensor_from_py_object_no_sync(a, &m) != 0) return nullptr;
      ++owned.count;
      views[size_t(i)] = m->dl_tensor;
    }
    if (gpu < 0 && (views[size_t(i)].device.device_type == kDLCUDA || views[size_t(i)].device.device_type == kDLCUDAManaged))
      gpu = views[size_t(i)].device.device_id;
  }

  const cutejit::RegisteredKernel& k = *b->kernel;
  try {
    // Room for `most` arguments, of which only the first nargs are made: setting up all of them
    // would cost more than converting eight tensors.
    alignas(cutejit::DynamicArg) unsigned char room[most * sizeof(cutejit::DynamicArg)];
    static_assert(std::is_trivially_destructible_v<cutejit::DynamicArg>, "the arguments made in `room` are never destroyed");
    auto* converted = reinterpret_cast<cutejit::DynamicArg*>(room);
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      PyObject* a = args[i];
      void* c = converted + i;
      if (is_tensor[size_t(i)]) {
        try {
          new (c) cutejit::DynamicArg(cutejit::dynamic_arg_from_dlpack(views[size_t(i)], gpu));
        } catch (const cutejit::Error& e) {
          return raise("error: argument " + std::to_string(i) + " of kernel '" + k.name + "': " + std::string(e.message()));
        }
      } else if (PyFloat_Check(a)) {
        new (c) cutejit::DynamicArg(cutejit::DynamicArg::of_real(PyFloat_AsDouble(a)));
      } else {  // an int or a bool
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(a, &overflow);
        if (overflow)
          return raise("error: argument " + std::to_string(i) + " of kernel '" + k.name +
                       "' is an int outside the 64-bit signed range a kernel argument takes from Python");
        if (v == -1 && PyErr_Occurred()) return nullptr;
        new (c) cutejit::DynamicArg(cutejit::DynamicArg::of_integer(v));
      }
    }
    cutejit::Launch cfg = b->config;
    if (api && gpu >= 0) {
      void* stream = nullptr;
      if (api->current_work_stream(kDLCUDA, gpu, &stream) != 0) return nullptr;
      cfg.stream = reinterpret_cast<cutejit::StreamHandle>(stream);
    }
    k.launch(device(gpu < 0 ? 0 : gpu), cfg, std::span<const cutejit::DynamicArg>(converted, size_t(nargs)));
  } catch (const cutejit::Error& e) {
    return raise(cutejit::python::launch_error(e, __FILE__));
  } catch (const std::exception& e) {
    return raise(e.what());
  }
  Py_RETURN_NONE;
}

void free_bound(PyObject* capsule) {
  auto* b = static_cast<Bound*>(PyCapsule_GetPointer(capsule, bound_name));
  if (!b) return;
  Py_XDECREF(b->general);
  delete b;
}

PyMethodDef launch_method = {"launch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(launch)), METH_FASTCALL,
                              "launch(*arguments): launches the kernel this launcher was bound to on the arguments"};

/// bind(kernel_handle, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, general):
/// a launcher.
PyObject* bind(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 9) return raise("error: bind takes the kernel, the grid, the block, the shared bytes and the general launcher");
  unsigned long long v[8];
  for (int i = 0; i < 8; ++i) {
    v[i] = PyLong_AsUnsignedLongLong(args[i]);
    if (PyErr_Occurred()) return nullptr;
  }
  auto u32 = [&](int i) { return uint32_t(v[i]); };
  auto* b = new Bound{reinterpret_cast<const cutejit::RegisteredKernel*>(uintptr_t(v[0])),
                      cutejit::Launch{.grid = {u32(1), u32(2), u32(3)}, .block = {u32(4), u32(5), u32(6)}, .shared_bytes = u32(7)},
                      args[8]};
  Py_INCREF(b->general);
  PyObject* capsule = PyCapsule_New(b, bound_name, free_bound);
  if (!capsule) {
    Py_DECREF(b->general);
    delete b;
    return nullptr;
  }
  PyObject* launcher = PyCFunction_NewEx(&launch_method, capsule, nullptr);
  Py_DECREF(capsule);  // the launcher holds it
  return launcher;
}

PyObject* set_error(PyObject*, PyObject* type) {
  Py_INCREF(type);
  Py_XDECREF(error_type);
  error_type = type;
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"bind", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(bind)), METH_FASTCALL,
     "bind(kernel, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, general): a launcher"},
    {"set_error", set_error, METH_O, "set_error(type): the exception type launch raises"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_direct", "cutejit's launch entry for framework tensors", -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__direct() { return PyModule_Create(&module); }
