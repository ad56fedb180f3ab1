#!/usr/bin/env python3
"""Fails when a file includes a layer above its own (docs/architecture.md draws the layers).

Public headers (include/cutejit/<layer>/...): each layer may include only itself and the layers
listed for it below. Sources (src/<part>/...): the pipeline runs one way (trace -> verify ->
lower -> assemble -> cache -> jit), so no stage includes a later one; src/core and src/emulator
include nothing of src/ but themselves. The example programs stand above everything: nothing in
src/, tests/, tools/, apps/ or python/ includes them or puts examples/ on an include path. Run
from anywhere; prints every violation.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The public layers, lowest first, and what each may include besides itself.
BELOW = {
    "core": set(),
    # The layout algebra is over static or traced integers, as CuTeDSL's: it stands on dsl/.
    "dsl": {"core"},
    "layout": {"core", "dsl"},
    "tensor": {"core", "layout", "dsl"},
    "arch": {"core", "layout", "dsl", "tensor"},
    "atom": {"core", "layout", "dsl", "tensor", "arch"},
    "pipeline": {"core", "layout", "dsl", "tensor", "arch", "atom"},
    # runtime stands beside the traced layers: it needs only core (and core's element types).
    "runtime": {"core"},
    "cache": {"core", "runtime"},
    "jit": {"core", "layout", "dsl", "tensor", "arch", "atom", "pipeline", "runtime", "cache"},
    "interop": {"core", "layout", "dsl", "tensor", "arch", "atom", "pipeline", "runtime", "cache", "jit"},
    # The kernel library: its kernels are written in every layer below; its operators are host
    # functions over runtime tensors, compiled into libcutejit.
    "kernels": {"core", "layout", "dsl", "tensor", "arch", "atom", "pipeline", "runtime", "cache", "jit"},
}
# Source parts: the pipeline's stages in order; a stage includes no later one.
STAGES = ["trace", "verify", "lower", "assemble", "cache", "jit"]
# Source parts that stand on nothing of src/ but themselves.
SELF_CONTAINED = {"core", "emulator"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def public_violations():
    base = ROOT / "include" / "cutejit"
    for path in sorted(base.rglob("*.hpp")):
        rel = path.relative_to(base)
        if len(rel.parts) < 2:
            continue  # cutejit.hpp and layout.hpp gather every layer
        layer = rel.parts[0]
        allowed = BELOW.get(layer)
        for target in INCLUDE.findall(path.read_text()):
            if not target.startswith("cutejit/"):
                continue
            parts = target.split("/")
            if len(parts) < 3:
                continue
            other = parts[1]
            if other != layer and (allowed is None or other not in allowed):
                yield f"include/cutejit/{rel}: includes {target} ({layer}/ may include {', '.join(sorted(allowed or [])) or 'nothing else'})"


def source_violations():
    base = ROOT / "src"
    for path in sorted(list(base.rglob("*.cpp")) + list(base.rglob("*.hpp"))):
        rel = path.relative_to(base)
        part = rel.parts[0]
        for target in INCLUDE.findall(path.read_text()):
            other = target.split("/")[0]
            if not (base / other).is_dir() or other == part:
                continue
            if part in SELF_CONTAINED:
                yield f"src/{rel}: includes {target} (src/{part} includes nothing of src/ but itself)"
            elif part in STAGES and other in STAGES and STAGES.index(other) > STAGES.index(part):
                yield f"src/{rel}: includes {target} (the {part} stage comes before {other})"


def example_violations():
    include_dir = re.compile(r"include_directories\([^)]*examples", re.DOTALL)
    for part in ["src", "tests", "tools", "apps", "python"]:
        for path in sorted((ROOT / part).rglob("*")):
            if path.name == "CMakeLists.txt" and include_dir.search(path.read_text()):
                yield f"{path.relative_to(ROOT)}: puts examples/ on an include path"
            elif path.suffix in {".cpp", ".hpp"}:
                for target in INCLUDE.findall(path.read_text()):
                    if target.startswith("examples/") or "/examples/" in target:
                        yield f"{path.relative_to(ROOT)}: includes {target} (nothing includes the example programs)"


def main():
    found = list(public_violations()) + list(source_violations()) + list(example_violations())
    for line in found:
        print(line)
    print(f"{len(found)} include(s) against the layers")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
