#!/usr/bin/env bash
# Installs what building cutejit needs from Debian's packages, when it is missing.
# The CUDA toolkit (12.8 or newer) is expected at $CUDA_HOME or /usr/local/cuda.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ ccache llvm-22-dev libmlir-22-dev mlir-22-tools
          nlohmann-json3-dev libfmt-dev catch2 libxxhash-dev libzstd-dev zlib1g-dev libdlpack-dev python3-pip python3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cuda.h" ]; then
  echo "setup: the CUDA toolkit was not found at $cuda (set CUDA_HOME); cutejit needs its headers, nvJitLink or ptxas, and libdevice" >&2
  exit 1
fi

# Wheels from PyPI unpacked into a folder of build/: fetch_wheels DIR PACKAGE==VERSION ...
fetch_wheels() {
  local dir=$1
  shift
  mkdir -p "$dir/wheels"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$dir/wheels" "$@"
  for w in "$dir"/wheels/*.whl; do python3 -m zipfile -e "$w" "$dir"; done
  rm -rf "$dir/wheels"
}

# The disassembler for the SASS tests of every target (sm_80 ... sm_120a), which a CPU machine's
# toolkit may lack: NVIDIA's cuobjdump and nvdisasm wheels from PyPI, unpacked into build/disasm.
disasm=build/disasm
if [ ! -x "$disasm/nvidia/cu13/bin/cuobjdump" ]; then
  echo "setup: fetching cuobjdump and nvdisasm ${CUTEJIT_DISASM_VERSION:=13.5.37} from PyPI"
  fetch_wheels "$disasm" "nvidia-cuda-cuobjdump==$CUTEJIT_DISASM_VERSION" "nvidia-cuda-nvdisasm==$CUTEJIT_DISASM_VERSION"
  chmod +x "$disasm"/nvidia/cu13/bin/*
fi

# NVSHMEM, for the tests of kernels that call it (tests/unit/interop/test_nvshmem.cpp): its
# headers (the ABI check), its device bitcode (linked into those kernels) and its host library.
# cutejit itself finds NVSHMEM at run time and builds without it.
nvshmem=build/nvshmem
if [ ! -f "$nvshmem/nvidia/nvshmem/lib/libnvshmem_host.so.3" ]; then
  echo "setup: fetching NVSHMEM ${CUTEJIT_NVSHMEM_VERSION:=3.8.0} from PyPI"
  fetch_wheels "$nvshmem" "nvidia-nvshmem-cu13==$CUTEJIT_NVSHMEM_VERSION"
fi

# TVM-FFI (the `apache-tvm-ffi` wheel), for the Python module's fast launch entry: its C header
# builds python/tvm_ffi_launch.cpp, and the Python tests import the unpacked package, so the
# entry is tested here although the module works without it (it then launches through ctypes).
tvm_ffi=build/tvm_ffi
if [ ! -f "$tvm_ffi/tvm_ffi/include/tvm/ffi/c_api.h" ]; then
  echo "setup: fetching apache-tvm-ffi ${CUTEJIT_TVM_FFI_VERSION:=0.1.15.post2} from PyPI"
  fetch_wheels "$tvm_ffi" "apache-tvm-ffi==$CUTEJIT_TVM_FFI_VERSION"
fi
# Its one dependency, beside it: a fresh Debian 12 has no typing_extensions recent enough.
if [ ! -f "$tvm_ffi/typing_extensions.py" ]; then
  echo "setup: fetching typing-extensions ${CUTEJIT_TYPING_EXTENSIONS_VERSION:=4.15.0} from PyPI (TVM-FFI's dependency)"
  fetch_wheels "$tvm_ffi" "typing-extensions==$CUTEJIT_TYPING_EXTENSIONS_VERSION"
fi
