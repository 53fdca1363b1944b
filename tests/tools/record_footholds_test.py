#!/usr/bin/env python3
"""tools/record/record_footholds.py on a synthetic recording (run by ctest, tests/CMakeLists.txt).

A 12 cm step along x at x = 1 m (5 cm samples), one body with one foot sphere 0.3 m below it.
Env 0 runs 20 frames with its foot planted on the lower tread; env 1 ends after 10 frames, its
foot planted on the step's edge for the last 5 (0.1 s) and moving before. The shares follow from
counting: planted frames are those after the first whose foot moved under 0.1 m/s.
"""
import json
import os
import subprocess
import sys
import tempfile

repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tool = os.path.join(repo, "tools/record/record_footholds.py")
nx, ny, sp = 41, 21, 0.05
heights = [0.12 if i * sp >= 1.0 else 0.0 for j in range(ny) for i in range(nx)]


def frames(xs):
    # body at (x, 0.5, 0.4), identity orientation; the foot sphere 0.3 m below
    return [v for x in xs for v in (x, 0.5, 0.4, 1.0, 0.0, 0.0, 0.0)]


moving = [0.5 + 0.01 * k for k in range(5)]  # 0.5 m/s at dt 0.02: not planted
rec = {
    "format": "diffloco-rollout-2", "dt": 0.02, "bodies": ["shank"],
    "shapes": [{"body": 0, "kind": "sphere", "a": [0.0, 0.0, -0.3], "b": [0, 0, 0],
                "radius": 0.03}],
    "terrain": {"origin": [0.0, 0.0], "spacing": sp, "nx": nx, "ny": ny, "heights": heights},
    "envs": [
        {"frames": 20, "pose": frames([0.5] * 20)},
        {"frames": 10, "pose": frames(moving + [0.99] * 5)},
    ],
}
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "rec.json")
    json.dump(rec, open(path, "w"))
    out = subprocess.run([sys.executable, tool, path, "--last", "0.1"], capture_output=True,
                         text=True)
    print(out.stdout, out.stderr)
    assert out.returncode == 0, out.returncode
    # env 0: 19 planted frames, none on an edge; env 1: 4 planted (frames 6-9; frame 5 moved
    # 0.45 m), all on the edge (0.99 m: samples at 0.96 / 0.99 / 1.02 m straddle the step)
    assert "2 envs, 1 ended early" in out.stdout, out.stdout
    assert "every env: 17.4 % of 23" in out.stdout, out.stdout
    assert "full length: 0.0 % of 19" in out.stdout, out.stdout
    assert "ended early: 100.0 % of 4; their last 0.1 s: 100.0 % of 4" in out.stdout, out.stdout
    # a recording without terrain is an error naming the file
    rec.pop("terrain")
    json.dump(rec, open(path, "w"))
    out = subprocess.run([sys.executable, tool, path],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "rec.json: no terrain" in out.stderr, out.stderr
print("record_footholds ok")
