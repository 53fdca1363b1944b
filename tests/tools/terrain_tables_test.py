#!/usr/bin/env python3
"""tools/tables/terrain_tables.py's stairs, outsider and climb tables on synthetic evaluation
files (run by ctest, tests/CMakeLists.txt).

Two seeds' files with known falls: the stairs' columns are each file's falls down and up and
their mean; the other grounds' column sums the five other grounds, the plane included. A file
without a 1000-episode row of ours on the stairs and an argument without LABEL= are errors that
name what is wrong. The outsider table: a row per condition, a column per policy. The climb
table: legged_gym's last row, falls and climbed with their 95 % Wilson intervals.
"""
import json
import os
import subprocess
import sys
import tempfile

repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tool = os.path.join(repo, "tools/tables/terrain_tables.py")
GROUNDS = ("none", "rough", "pyramid_slope", "pyramid_slope_inverted", "pyramid_stairs",
           "pyramid_stairs_inverted", "obstacles")


def write(path, falls, episodes=1000):
    with open(path, "w") as f:
        for t in GROUNDS:
            result = {"falls": falls[t], "episodes": episodes, "lin_vel_rms": 0.2,
                      "yaw_rate_rms": 0.1}
            f.write(json.dumps({"engine": "diffloco", "terrain_type": t, "result": result}) + "\n")
        # a MuJoCo row must not count as ours
        f.write(json.dumps({"engine": "mujoco", "terrain_type": "none",
                            "result": {"falls": 50, "episodes": 100}}) + "\n")


def run(*args):
    return subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as d:
        a, b, short = (os.path.join(d, n) for n in ("a.jsonl", "b.jsonl", "short.jsonl"))
        write(a, dict(zip(GROUNDS, (2, 10, 20, 30, 100, 60, 40))))
        write(b, dict(zip(GROUNDS, (0, 5, 15, 25, 80, 40, 35))))
        write(short, dict(zip(GROUNDS, (0,) * 7)), episodes=100)
        r = run("stairs", f"two seeds={a},{b}", f"one={a}")
        assert r.returncode == 0, r.stderr
        lines = r.stdout.strip().split("\n")
        assert lines[2] == "| two seeds | 100 / 80 (90) | 60 / 40 (50) | 102 / 80 |", lines[2]
        assert lines[3] == "| one | 100 | 60 | 102 |", lines[3]
        r = run("stairs", f"x={short}")
        assert r.returncode != 0 and "no 1000-episode row of ours on pyramid_stairs" in r.stderr, r
        r = run("stairs", a)
        assert r.returncode != 0 and "is not LABEL=FILE" in r.stderr, r
        # The outsider table: a row per condition, a column per policy; "crossed" only where
        # the deployer reports it, "-" where a policy has no row.
        out = os.path.join(d, "outsider.jsonl")
        with open(out, "w") as f:
            for policy, condition, extra in (("p", "plane", {}), ("p", "stairs", {"crossed": 7}),
                                             ("q", "plane", {})):
                result = {"falls": 1, "episodes": 10, "lin_vel_rms": 0.25,
                          "joint_limit_episodes": 2, "joint_limit_excess_max": 0.125, **extra}
                f.write(json.dumps({"policy": policy, "condition": condition,
                                    "result": result}) + "\n")
        r = run("outsider", out)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.strip().split("\n")
        row = "1 / 10, -, 0.250, 2 (0.12)"
        assert lines[2] == f"| plane | {row} | {row} |", lines[2]
        assert lines[3] == "| stairs | 1 / 10, 7 / 10, 0.250, 2 (0.12) | - |", lines[3]
        # legged_gym's last row: falls and climbed with their 95 % Wilson intervals, "-" where
        # a file has no row of that ground.
        last = os.path.join(d, "last.jsonl")
        with open(last, "w") as f:
            for t, falls, climbed in (("pyramid_stairs_inverted", 0, 150), ("obstacles", 3, 300)):
                f.write(json.dumps({"engine": "diffloco", "terrain_type": t, "result": {
                    "falls": falls, "climbed": climbed, "episodes": 300, "lin_vel_rms": 0.5}})
                    + "\n")
        other = os.path.join(d, "other.jsonl")
        with open(other, "w") as f:
            f.write(json.dumps({"engine": "diffloco", "terrain_type": "rough_slope", "result": {
                "falls": 1, "climbed": 2, "episodes": 3, "lin_vel_rms": 0.1}}) + "\n")
        r = run("climb", f"a={last}", f"b={other}")
        assert r.returncode == 0, r.stderr
        lines = r.stdout.strip().split("\n")
        assert lines[2].startswith("| rough slope down, 36 % | - | 1 / 3 ("), lines[2]
        assert lines[3] == ("| stairs up, 21 cm | 0 / 300 (0-1 %), 150 / 300 (44-56 %), 0.500 | - |"
                            ), lines[3]
        assert lines[4].startswith("| obstacles, 23 cm | 3 / 300 (0-3 %), 300 / 300 (99-100 %)"), \
            lines[4]
    print("terrain_tables.py: stairs, outsider and climb tables and the errors as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
