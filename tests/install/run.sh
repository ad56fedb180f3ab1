#!/usr/bin/env bash
# Installs the build into a scratch prefix, then configures, builds and runs the consumer.
set -euo pipefail
build=$1 source=$(cd "$(dirname "$0")" && pwd)
prefix=$build/test-install
rm -rf "$prefix" "$build/test-consumer"
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S "$source" -B "$build/test-consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$build/test-consumer" >/dev/null
LD_LIBRARY_PATH="$prefix/lib" "$build/test-consumer/consumer"
