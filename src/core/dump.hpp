/** \file
 * Optional dumps of every stage of one kernel's compilation, for a kernel author reading IR:
 * with CUTEJIT_DUMP=DIR set, DIR/<kernel>.<target>.<stage> is written for the MLIR as traced
 * and as lowered, the LLVM IR before and after O3, the PTX and the cubin. Later compiles of the
 * same kernel and target in the process (other specializations) write
 * DIR/<kernel>.<target>.<n>.<stage>, n = 1, 2, ...
 */
#pragma once

#include <string>
#include <string_view>

namespace cutejit::detail {

class DumpSink {
 public:
  /// Reads CUTEJIT_DUMP; the sink does nothing when it is unset.
  DumpSink(std::string kernel, std::string target);
  bool enabled() const { return !directory_.empty(); }
  void write(std::string_view stage, std::string_view contents) const;

 private:
  std::string directory_;
  std::string prefix_;
};

}  // namespace cutejit::detail
