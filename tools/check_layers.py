#!/usr/bin/env python3
"""Checks that dependencies point one way: no source or header includes a layer above its own.

usage: check_layers.py REPO_ROOT      exit 1 listing every upward include
       check_layers.py --self-test    checks the checker on a small tree with one upward include

The layers, lowest first (CMakeLists.txt and docs/architecture.md say what each holds). A folder
may include its own layer and the ones before it; tests/ and tools/ may include anything.
"""
import os
import re
import sys
import tempfile

LAYERS = ["io", "config", "runtime", "sim", "gpu", "robots", "mujoco", "ident", "envs", "policies", "distributed",
          "algorithms", "runs", "viz", "train", "export", "experiments", "cli", "python"]
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"/]+)/[^"]+"', re.M)


def violations(root):
    rank = {name: i for i, name in enumerate(LAYERS)}
    found = []
    for layer in LAYERS:
        for folder, _, files in os.walk(os.path.join(root, layer)):
            for f in sorted(files):
                if not f.endswith((".h", ".cpp", ".cu", ".cuh")):
                    continue
                path = os.path.join(folder, f)
                with open(path, encoding="utf-8") as src:
                    text = src.read()
                for m in INCLUDE.finditer(text):
                    target = m.group(1)
                    line = text.count("\n", 0, m.start()) + 1
                    rel = os.path.relpath(path, root)
                    if target not in rank:
                        if os.path.isdir(os.path.join(root, target)):
                            found.append(f"{rel}:{line}: includes {target}/, a folder that is not "
                                         f"a layer (add it to tools/check_layers.py)")
                    elif rank[target] > rank[layer]:
                        found.append(f"{rel}:{line}: {layer}/ includes {target}/, a layer above it "
                                     f"({' < '.join(LAYERS)})")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        for rel, text in {"sim/a.h": '#include "sim/b.h"\n', "envs/e.h": '#include "sim/a.h"\n',
                          "sim/bad.cpp": '\n#include "envs/e.h"\n'}.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        found = violations(root)
        expected = "sim/bad.cpp:2: sim/ includes envs/"
        if len(found) != 1 or not found[0].startswith(expected):
            print(f"self-test failed: expected one violation '{expected}...', got {found}")
            return 1
    print("self-test passed: an upward include is reported with its file and line")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    found = violations(sys.argv[1])
    for v in found:
        print(v)
    if found:
        print(f"{len(found)} upward include(s)")
        return 1
    print(f"layers: every include points down ({' < '.join(LAYERS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
