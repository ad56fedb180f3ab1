/** \file
 * The pipeline, read top to bottom in pipeline.cpp: trace -> verify -> lower -> PTX ->
 * assemble. Each stage is one call into its own folder; nothing calls back up.
 */
#pragma once

#include <functional>
#include <source_location>
#include <string>

#include "cutejit/core/compiled.hpp"

namespace cutejit::detail {

CompiledKernel compile_specialization(const std::string& kernel, const Target& target, std::source_location defined_at,
                                      const std::function<void()>& trace_body);

}  // namespace cutejit::detail
