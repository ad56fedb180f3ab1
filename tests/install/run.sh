#!/usr/bin/env bash
# Installs the build into a scratch prefix; pip-installs its Python package as a user would
# and imports it from elsewhere; then configures, builds and runs the consumer (whose line,
# last, is what the test looks for: any earlier failure stops the script before it).
set -euo pipefail
build=$1 source=$(cd "$(dirname "$0")" && pwd)
prefix=$build/test-install site=$build/test-python-site
rm -rf "$prefix" "$build/test-consumer" "$site"
cmake --install "$build" --prefix "$prefix" >/dev/null
python3 -m pip install -q --no-deps --root-user-action=ignore --target "$site" "$prefix/lib/python"
(cd / && PYTHONPATH="$site" python3 -c '
import os, cutejit
here = os.path.dirname(cutejit.__file__)
assert os.path.dirname(cutejit._native._name) == here, cutejit._native._name
assert os.path.isfile(os.path.join(here, "libcutejit.so.0")) and not os.path.islink(os.path.join(here, "libcutejit.so.0"))
print("python: pip installed cutejit", cutejit.__name__, "with its native half and libcutejit in", here)')
cmake -S "$source" -B "$build/test-consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$build/test-consumer" >/dev/null
LD_LIBRARY_PATH="$prefix/lib" "$build/test-consumer/consumer"
