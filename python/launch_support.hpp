// What both entries to a launch share, the ctypes one (cutejit_python.cpp) and TVM-FFI's
// (tvm_ffi_launch.cpp): the Device of each GPU, and the message of a refused launch.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <cutejit/cutejit.hpp>

namespace cutejit::python {

/// One Device per GPU, made on first use: the primary context, which PyTorch and CuPy share.
inline const Device& device(int ordinal) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<Device>> devices;
  std::lock_guard lock(mutex);
  auto& d = devices[ordinal];
  if (!d) d = std::make_unique<Device>(ordinal);
  return *d;
}

/// A launch error's message for Python. A launch refused for its shape names the line that
/// described the Launch, which is in this library: the location is dropped, and Python's
/// traceback names the caller's line instead.
inline std::string launch_error(const Error& e, std::string_view this_file) {
  std::string_view what = e.what();
  return what.starts_with(this_file) ? "error: " + std::string(e.message()) : std::string(what);
}

}  // namespace cutejit::python
