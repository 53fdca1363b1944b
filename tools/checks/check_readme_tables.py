#!/usr/bin/env python3
"""Regenerates the README's results tables from the data files in the repository and checks that
the README holds each one verbatim.

usage: check_readme_tables.py [REPO_ROOT]      exit 1 naming every table that differs
       check_readme_tables.py --print [REPO]   print the tables as they should read

TABLES lists, per README table, the command that writes it (run from the repository root) and
the data it reads; the command's output must appear in README.md as one block of lines.
"""
import os
import subprocess
import sys

TABLES = [
    ("the walk policy's training seeds (ours and MuJoCo)",
     [sys.executable, "tools/tables/shipped_tables.py", "walk",
      "docs/data/shipped/walk_quadruped.jsonl", "0", "pretrained/walk_quadruped.pt"]),
    ("the velocity policy's training seeds (ours and MuJoCo)",
     [sys.executable, "tools/tables/shipped_tables.py", "velocity",
      "docs/data/shipped/velocity_anymal.jsonl", "0", "pretrained/velocity_anymal.pt"]),
    ("the rough-terrain policy per terrain (ours and MuJoCo)",
     [sys.executable, "tools/tables/terrain_tables.py", "readme",
      "docs/data/terrain/velocity_anymal_rough_terrain_eval.jsonl",
      "closest contact, monotone surface="
      "docs/data/terrain/velocity_anymal_rough_terrain_eval_closest_monotone.jsonl"]),
    ("the rough-terrain policies on legged_gym's last row (ours)",
     [sys.executable, "tools/tables/terrain_tables.py", "climb",
      "the shipped policy=docs/data/terrain/legged_gym/shipped_last_row.jsonl",
      "heading_seed0=docs/data/terrain/legged_gym/heading_seed0_last_row.jsonl",
      "range_seed0=docs/data/terrain/legged_gym/range_seed0_last_row.jsonl",
      "range_seed1=docs/data/terrain/legged_gym/range_seed1_last_row.jsonl"]),
]


def generated(root, command):
    out = subprocess.run(command, cwd=root, check=True, capture_output=True, text=True).stdout
    return out.strip("\n")


def check(root):
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    found = []
    for name, command in TABLES:
        table = generated(root, command)
        if table not in readme:
            found.append(f"README.md: the table of {name} differs from `{' '.join(command[1:])}`:"
                         f"\n{table}")
    return found


def main():
    args = sys.argv[1:]
    if args[:1] == ["--print"]:
        root = args[1] if len(args) > 1 else "."
        for name, command in TABLES:
            print(f"{name} (`{' '.join(command[1:])}`):\n{generated(root, command)}\n")
        return 0
    root = args[0] if args else "."
    found = check(root)
    for f in found:
        print(f)
    if found:
        return 1
    print(f"README.md: {len(TABLES)} results table(s) equal what their data files give")
    return 0


if __name__ == "__main__":
    sys.exit(main())
