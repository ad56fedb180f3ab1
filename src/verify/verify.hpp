/** \file
 * The gate between tracing and lowering: MLIR's verifier (with the #nvvm.target attached, so
 * it checks what it can per chip) and cutejit's allow-list walk over every NVVM op.
 */
#pragma once

#include <string>

#include "cutejit/core/target.hpp"

namespace mlir {
class ModuleOp;
}

namespace cutejit::detail {

/// Throws cutejit::Error, located at the user's line, for the first problem found.
void verify_module(mlir::ModuleOp module, const Target& target, const std::string& kernel);

}  // namespace cutejit::detail
