#!/usr/bin/env python3
"""Checks that dependencies point one way: no source or header includes a layer above its own.

usage: check_layers.py REPO_ROOT      exit 1 listing every upward include and every mismatch below
       check_layers.py --self-test    checks the checker on small trees with known faults

The layers, lowest first (CMakeLists.txt and docs/architecture.md say what each holds). A folder
may include its own layer and the ones before it; tests/ and tools/ may include anything. Includes
are read in both forms ("sim/model.h" and <sim/model.h>) from every C/C++/CUDA source or header.
Also reported: a top-level folder holding C++ sources that is neither a layer nor one of
NOT_LAYERS, and a row of docs/architecture.md's layer table whose number, folder or included
layers (the last column up to its first ';', or "nothing") differ from the tree.
"""
import os
import re
import sys
import tempfile

LAYERS = ["io", "config", "runtime", "sim", "batch", "robots", "mujoco", "ident", "envs", "policies", "distributed",
          "algorithms", "runs", "viz", "train", "export", "experiments", "cli", "python"]
# Top-level folders that are not layers: they may include any layer.
NOT_LAYERS = {"tests", "tools", "examples", "docs", "configs", "pretrained"}
SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"/]+)/[^"]+"|<([^>/]+)/[^>]+>)', re.M)
DOC = os.path.join("docs", "architecture.md")
DOC_ROW = re.compile(r"^\| (\d+) \| `([^`/]+)/` \|.*\| ([^|]*) \|$")


def sources(folder):
    for sub, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            if f.endswith(SOURCE_SUFFIXES):
                yield os.path.join(sub, f)


def includes(path):
    """(line, folder) of every include of the form folder/...; angle brackets too."""
    with open(path, encoding="utf-8", errors="replace") as src:
        text = src.read()
    for m in INCLUDE.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, m.group(1) or m.group(2)


def is_build_folder(root, name):
    return name.startswith("build") or os.path.exists(os.path.join(root, name, "CMakeCache.txt"))


def scan(root):
    """(violations, the layers each layer includes)."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    found, used = [], {layer: set() for layer in LAYERS}
    for layer in LAYERS:
        for path in sources(os.path.join(root, layer)):
            rel = os.path.relpath(path, root)
            for line, target in includes(path):
                if target not in rank:
                    if os.path.isdir(os.path.join(root, target)) and target not in NOT_LAYERS:
                        found.append(f"{rel}:{line}: includes {target}/, a folder that is not "
                                     f"a layer (add it to tools/checks/check_layers.py)")
                    continue
                if target != layer:
                    used[layer].add(target)
                if rank[target] > rank[layer]:
                    found.append(f"{rel}:{line}: {layer}/ includes {target}/, a layer above it "
                                 f"({' < '.join(LAYERS)})")
    for name in sorted(os.listdir(root)):
        if (name in rank or name in NOT_LAYERS or name.startswith(".") or
                not os.path.isdir(os.path.join(root, name)) or is_build_folder(root, name)):
            continue
        first = next(sources(os.path.join(root, name)), None)
        if first:
            found.append(f"{os.path.relpath(first, root)}: {name}/ holds C++ sources but is not a "
                         f"layer (add it to LAYERS or NOT_LAYERS in tools/checks/check_layers.py)")
    return found, used


def documented(root, used):
    """Mismatches between docs/architecture.md's layer table and the tree."""
    path = os.path.join(root, DOC)
    if not os.path.exists(path):
        return []
    found, rows = [], []
    with open(path, encoding="utf-8") as doc:
        for number, text in enumerate(doc, 1):
            m = DOC_ROW.match(text.rstrip("\n"))
            if m:
                rows.append((number, int(m.group(1)), m.group(2), m.group(3)))
    if [r[2] for r in rows] != LAYERS:
        return [f"{DOC}: the layer table lists {[r[2] for r in rows]}, the layers are {LAYERS}"]
    for line, index, layer, column in rows:
        where = f"{DOC}:{line}"
        if index != LAYERS.index(layer):
            found.append(f"{where}: {layer}/ is numbered {index}, it is layer {LAYERS.index(layer)}")
        listed = column.split(";")[0].strip()
        names = [] if listed.startswith("nothing") else [n.strip() for n in listed.split(",")]
        expected = sorted(used[layer], key=LAYERS.index)
        if names != expected:
            found.append(f"{where}: {layer}/ includes {', '.join(expected) or 'nothing'} (in layer "
                         f"order, before the first ';'); the table says '{listed}'")
    return found


def check(root):
    found, used = scan(root)
    return found + documented(root, used)


def self_test():
    cases = {
        "sim/bad.cpp:2: sim/ includes envs/": {
            "sim/a.h": '#include "sim/b.h"\n', "envs/e.h": '#include "sim/a.h"\n',
            "sim/bad.cpp": '\n#include "envs/e.h"\n'},
        "sim/bad.hpp:1: sim/ includes envs/": {"sim/bad.hpp": "#include <envs/e.h>\n", "envs/e.h": ""},
        "extra/x.cc: extra/ holds C++ sources": {"extra/x.cc": "", "sim/a.h": ""},
        f"{DOC}:3: sim/ includes io": {
            "sim/a.h": '#include "io/x.h"\n', "io/x.h": "",
            DOC: "| # | folder | holds | includes |\n|---|---|---|---|\n| 3 | `sim/` | s | nothing: Eigen |\n"},
    }
    for expected, tree in cases.items():
        with tempfile.TemporaryDirectory() as root:
            for rel, text in tree.items():
                os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(root, rel), "w") as f:
                    f.write(text)
            if DOC in tree:  # a table of every layer, each including nothing, but the row above
                rows = [f"| {i} | `{name}/` | x | nothing |" for i, name in enumerate(LAYERS)]
                rows[LAYERS.index("sim")] = tree[DOC].splitlines()[2]
                with open(os.path.join(root, DOC), "w") as f:
                    f.write("\n".join(tree[DOC].splitlines()[:2] + rows) + "\n")
                expected = expected.replace(":3:", f":{3 + LAYERS.index('sim')}:")
            found = check(root)
            if len(found) != 1 or not found[0].startswith(expected):
                print(f"self-test failed: expected one finding '{expected}...', got {found}")
                return 1
    print("self-test passed: upward includes (both forms), a folder that is no layer and a wrong "
          "row of the layer table are reported with file and line")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    found = check(sys.argv[1])
    for v in found:
        print(v)
    if found:
        print(f"{len(found)} finding(s)")
        return 1
    print(f"layers: every include points down ({' < '.join(LAYERS)}), {DOC} agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
