#include "verify/verify.hpp"

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "cutejit/core/error.hpp"
#include "core/target_features.hpp"

namespace cutejit::detail {

namespace {
std::string location_text(mlir::Location loc) {
  if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc))
    return file.getFilename().str() + ":" + std::to_string(file.getLine()) + ": ";
  return "";
}
}  // namespace

void verify_module(mlir::ModuleOp module, const Target& target, const std::string& kernel) {
  std::string first;
  {
    mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic& d) {
      if (first.empty()) {
        llvm::raw_string_ostream os(first);
        os << location_text(d.getLocation()) << "error: in kernel '" << kernel << "' (" << target.name() << "): " << d;
      }
      return mlir::success();
    });
    if (mlir::failed(mlir::verify(module))) throw Error(first.empty() ? "error: kernel '" + kernel + "' failed verification" : first);
  }
  module.walk([&](mlir::Operation* op) {
    llvm::StringRef name = op->getName().getStringRef();
    if (!name.starts_with("nvvm.")) return;
    std::optional<Feature> f = nvvm_op_feature(std::string_view(name.data(), name.size()));
    std::string where = location_text(op->getLoc());
    if (!f)
      throw Error(where + "error: in kernel '" + kernel + "': " + name.str() +
                  " is not on cutejit's per-target allow-list, so it is not passed to LLVM (which would abort on a target "
                  "that lacks it)");
    if (!target_has(target, *f))
      throw Error(where + "error: in kernel '" + kernel + "': " + name.str() + " is not available on " + target.name() +
                  "; it needs " + std::string(targets_with(*f)));
  });
}

}  // namespace cutejit::detail
