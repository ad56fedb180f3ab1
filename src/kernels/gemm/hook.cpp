// GemmOptions::hook: each hook's serial, which keys its kernels, and the hook of the call being
// traced on this thread, which the traced epilogue calls.
#include "cutejit/kernels/gemm_hook.hpp"

#include <atomic>
#include <string>

#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels {

GemmHook::GemmHook(Function f) : function_(std::move(f)), serial_(0) {
  if (!function_) throw Error("error: make_gemm_hook: the function is empty; give a callable (const F32&, const Int&, const Int&) -> F32");
  static std::atomic<int> made{0};
  const int serial = ++made;
  if (serial > detail::max_hook_serial)
    throw Error("error: make_gemm_hook: this process has made " + std::to_string(detail::max_hook_serial) +
                " hooks, as many as gemm's kernels can tell apart; make one hook per function and keep it");
  serial_ = serial;
}

namespace detail {

namespace {
thread_local const GemmHook* current_hook = nullptr;
}  // namespace

const GemmHook& tracing_hook(int code) {
  if (!current_hook || current_hook->serial() != code >> epilogue_hook_serial_shift)
    throw Error("error: gemm: this kernel applies the caller's hook (GemmOptions::hook), which is traced from the call that gives it; "
                "it cannot be built without that hook (warm the cache with gemm_compile and the hook)");
  return *current_hook;
}

HookScope::HookScope(const GemmHook* hook) : previous_(current_hook) { current_hook = hook; }
HookScope::~HookScope() { current_hook = previous_; }

}  // namespace detail

}  // namespace cutejit::kernels
