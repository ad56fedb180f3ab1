/** \file
 * The umbrella header: everything a kernel file needs. It includes no MLIR or LLVM, so a
 * kernel file compiles in about a second.
 */
#pragma once

#include "cutejit/atom/sm90/stmatrix.hpp"
#include "cutejit/atom/sm90/tma.hpp"
#include "cutejit/atom/sm90/wgmma.hpp"
#include "cutejit/dsl/control.hpp"
#include "cutejit/dsl/intrinsics.hpp"
#include "cutejit/dsl/math.hpp"
#include "cutejit/dsl/types.hpp"
#include "cutejit/dsl/value.hpp"
#include "cutejit/dsl/var.hpp"
#include "cutejit/jit/compiled.hpp"
#include "cutejit/jit/error.hpp"
#include "cutejit/jit/kernel.hpp"
#include "cutejit/jit/target.hpp"
#include "cutejit/pipeline/mbarrier.hpp"
#include "cutejit/pipeline/shared_storage.hpp"
#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/device.hpp"
#include "cutejit/runtime/launch.hpp"
#include "cutejit/runtime/tensor_map.hpp"
#include "cutejit/tensor/copy.hpp"
#include "cutejit/tensor/fragment.hpp"
#include "cutejit/tensor/identity.hpp"
#include "cutejit/tensor/partition.hpp"
#include "cutejit/tensor/pointer.hpp"
#include "cutejit/tensor/tensor.hpp"
#include "cutejit/tensor/tensor_ssa.hpp"
