# Makes the MLIR/LLVM imported targets link statically.
#
# Debian builds LLVM with LLVM_LINK_LLVM_DYLIB=ON, so every imported MLIR target names the
# 150 MB libLLVM.so in its link interface, and LLVMSupport names shared z3/zlib/zstd. We want
# libcutejit to carry its own LLVM (symbols hidden) so it needs only glibc at run time and can
# never clash with the LLVM inside PyTorch, Triton or Mesa.

find_package(MLIR REQUIRED CONFIG HINTS /usr/lib/llvm-22/lib/cmake/mlir)

llvm_map_components_to_libnames(CUTEJIT_LLVM_STATIC_LIBS
  Core Support Passes IPO Vectorize ScalarOpts InstCombine AggressiveInstCombine TransformUtils
  Analysis Linker BitReader BitWriter IRReader AsmParser Target TargetParser MC MCParser
  CodeGen SelectionDAG AsmPrinter GlobalISel CodeGenTypes Object ProfileData Demangle
  FrontendOpenMP FrontendOffloading FrontendAtomic
  NVPTXCodeGen NVPTXDesc NVPTXInfo)

find_library(CUTEJIT_ZLIB_STATIC NAMES libz.a REQUIRED)
find_library(CUTEJIT_ZSTD_STATIC NAMES libzstd.a REQUIRED)

get_property(_mlir_libs GLOBAL PROPERTY MLIR_ALL_LIBS)
foreach(_lib IN LISTS _mlir_libs)
  if(TARGET ${_lib})
    get_target_property(_deps ${_lib} INTERFACE_LINK_LIBRARIES)
    if(_deps)
      list(TRANSFORM _deps REPLACE "^LLVM$" "${CUTEJIT_LLVM_STATIC_LIBS}")
      set_target_properties(${_lib} PROPERTIES INTERFACE_LINK_LIBRARIES "${_deps}")
    endif()
  endif()
endforeach()

set_target_properties(LLVMSupport PROPERTIES
  INTERFACE_LINK_LIBRARIES "rt;dl;m;pthread;${CUTEJIT_ZLIB_STATIC};${CUTEJIT_ZSTD_STATIC};LLVMDemangle")
