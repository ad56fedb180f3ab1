#include "cutejit/jit/registry.hpp"

#include <mutex>

#include "cutejit/core/error.hpp"

namespace cutejit {

namespace {
struct Registry {
  std::mutex mutex;
  std::vector<std::pair<const void*, detail::DescribeKernel>> kernels;
};
// Constructed on first use: registrations run from other libraries' static initializers.
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: a plugin may register during exit
  return *r;
}

std::string where(const RegisteredKernel& k) {
  return std::string(k.defined_at.file_name()) + ":" + std::to_string(k.defined_at.line());
}
}  // namespace

namespace detail {
void register_kernel(const void* kernel, DescribeKernel describe) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& k : r.kernels)
    if (k.first == kernel) return;
  r.kernels.emplace_back(kernel, describe);
}
}  // namespace detail

std::vector<RegisteredKernel> registered_kernels() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<RegisteredKernel> out;
  for (const auto& [kernel, describe] : r.kernels) out.push_back(describe(kernel));
  return out;
}

RegisteredKernel find_registered_kernel(const std::string& name) {
  std::vector<RegisteredKernel> all = registered_kernels();
  std::vector<const RegisteredKernel*> found;
  for (const RegisteredKernel& k : all)
    if (k.name == name) found.push_back(&k);
  if (found.size() == 1) return *found[0];
  if (found.size() > 1)
    throw Error("error: two different kernels are registered as '" + name + "' (" + where(*found[0]) + " and " + where(*found[1]) +
                "); give each kernel its own name");
  std::string known;
  for (const RegisteredKernel& k : all) known += (known.empty() ? "" : ", ") + k.name;
  throw Error("error: no kernel named '" + name + "' is registered" +
              (known.empty() ? std::string(" (none is: add CUTEJIT_REGISTER(kernel) next to each kernel's definition)")
                             : "; registered: " + known));
}

}  // namespace cutejit
