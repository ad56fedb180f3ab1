#!/usr/bin/env bash
# Runs the export consumer where a GPU driver is installed; exit 77 (skipped) where none is.
set -euo pipefail
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  echo "export consumer: no CUDA driver here, not run"
  exit 77
fi
exec "$1"
