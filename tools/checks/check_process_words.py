#!/usr/bin/env python3
"""Check that the docs speak of the project, not of how or when it was worked on.

Scans the tracked text files under docs/, configs/ and tools/, README.md and pretrained/*.yaml
(`git ls-files` in the repository root) for "process words" and machine paths:

  * periods of work: "this session", "previous session", "session of", "earlier session(s)",
    "that evening", "the morning's";
  * absolute paths of one machine: /work/..., /home/<user>...;
  * paths outside the repository: ../shared/... and shared/reference, shared/papers,
    shared/DESIGN.md (the team's folder beside the checkout);
  * issue-tracker references: "issue #12", "issue 12", "PR #12".

Prints `file:line: match` for each hit and exits 1 if there is any, else prints
"no process words" and exits 0. This file itself is not scanned.

Usage:  python3 tools/checks/check_process_words.py
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SELF = os.path.relpath(os.path.abspath(__file__), REPO).replace(os.sep, "/")

PATTERNS = [re.compile(p, re.IGNORECASE) for p in (
    r"\bthis session\b",
    r"\bprevious session\b",
    r"\bsession of\b",
    r"\bearlier sessions?\b",
    r"\bthat evening\b",
    r"\bthe morning's",
    r"(?<![\w/])/work/",
    r"(?<![\w/])/home/\w",
    r"\.\./shared/",
    r"(?<![\w/.-])shared/(?:reference|papers|DESIGN)",
    r"\b(?:issue|PR|pull request)\s*#\s*\d+",
    r"\bissue \d+\b",
)]

BINARY_EXT = (".png", ".gif", ".jpg", ".jpeg", ".pt", ".onnx", ".pdf", ".zip", ".gz", ".bin")


def in_scope(path):
    if path == SELF or path.lower().endswith(BINARY_EXT):
        return False
    if path == "README.md":
        return True
    if path.startswith(("docs/", "configs/", "tools/")):
        return True
    return path.startswith("pretrained/") and path.count("/") == 1 and path.endswith(".yaml")


def main():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True,
                             stdout=subprocess.PIPE).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"check_process_words: git ls-files failed in {REPO}: {e}", file=sys.stderr)
        return 2
    hits = 0
    for path in sorted(p for p in out.decode("utf-8", "replace").split("\0") if p):
        if not in_scope(path):
            continue
        full = os.path.join(REPO, path)
        if not os.path.isfile(full):
            continue  # deleted in the working tree
        with open(full, "rb") as f:
            data = f.read()
        if b"\0" in data:
            continue  # not a text file
        for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            for pattern in PATTERNS:
                for m in pattern.finditer(line):
                    print(f"{path}:{n}: {m.group(0)}")
                    hits += 1
    if hits:
        return 1
    print("no process words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
