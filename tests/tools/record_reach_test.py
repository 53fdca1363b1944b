#!/usr/bin/env python3
"""tools/record/record_reach.py on a synthetic recording (run by ctest, tests/CMakeLists.txt).

One body on a terrain of 0.05 m samples whose heights are 0 for x < 1 and 0.16 m beyond: env 0
walks from (0.2, 0.5) along x to (1.4, 0.5) and back to (1.1, 0.5), so its largest distance from
the start is 1.2 m and it ends 0.16 m up; env 1 walks along -y by 0.3 m and stays on the low ground.
"""
import os
import subprocess
import sys
import tempfile
import json

repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tool = os.path.join(repo, "tools/record/record_reach.py")


def frames(points):
    return [v for x, y in points for v in (x, y, 0.6, 1.0, 0.0, 0.0, 0.0)]


nx, ny, sp = 41, 21, 0.05
heights = [0.16 if i * sp >= 1.0 else 0.0 for j in range(ny) for i in range(nx)]
rec = {
    "format": "diffloco-rollout-2", "dt": 0.02, "bodies": ["base"], "shapes": [],
    "terrain": {"origin": [0.0, 0.0], "spacing": sp, "nx": nx, "ny": ny, "heights": heights},
    "envs": [{"frames": 3, "pose": frames([(0.2, 0.5), (1.4, 0.5), (1.1, 0.5)])},
             {"frames": 2, "pose": frames([(0.5, 0.8), (0.5, 0.5)])}],
}
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "rec.json")
    json.dump(rec, open(path, "w"))
    out = subprocess.run([sys.executable, tool, path], capture_output=True, text=True)
    print(out.stdout, out.stderr)
    assert out.returncode == 0, out.returncode
    assert "env 0: 1.20, +0.16" in out.stdout, out.stdout
    assert "env 1: 0.30, +0.00" in out.stdout, out.stdout
    bad = subprocess.run([sys.executable, tool], capture_output=True, text=True)
    assert bad.returncode != 0 and "usage" in bad.stderr, bad.stderr
print("record_reach: ok")
