#!/usr/bin/env python3
"""tools/record/record_swing.py on a synthetic recording (run by ctest, tests/CMakeLists.txt).

One body with one foot sphere (radius 3 cm) 0.3 m below it, dt 0.02 s, no skipped start. Env 0
walks on the plane: planted 5 frames, a step of 5 frames moving 0.5 m/s whose centre rises to
0.08 m (clearance 5 cm), planted 5 frames, a step that rises to 0.04 m (1 cm), planted 5 frames.
The same walk 12 cm higher over a recorded terrain 12 cm high gives the same heights: the clearance
is measured from the ground under the foot. The heights follow from the geometry.
"""
import json
import os
import subprocess
import sys
import tempfile

repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tool = os.path.join(repo, "tools/record/record_swing.py")


def frames(points, ground=0.0):
    # body at (x, 0.5, z + 0.3), identity orientation; the foot sphere 0.3 m below: centre (x, z)
    return [v for x, z in points for v in (x, 0.5, ground + z + 0.3, 1.0, 0.0, 0.0, 0.0)]


def walk(lift1, lift2):
    pts, x = [], 0.5
    for lift in (None, lift1, None, lift2, None):
        for k in range(5):
            if lift is not None:
                x += 0.01  # 0.5 m/s at dt 0.02
                z = 0.03 + lift * (1 - abs(k - 2) / 2)  # peaks at the step's middle frame
            else:
                z = 0.03
            pts.append((x, z))
    return pts


nx, ny, sp = 41, 21, 0.05
rec = {
    "format": "diffloco-rollout-2", "dt": 0.02, "bodies": ["shank"],
    "shapes": [{"body": 0, "kind": "sphere", "a": [0.0, 0.0, -0.3], "b": [0, 0, 0],
                "radius": 0.03}],
    "envs": [{"frames": 25, "pose": frames(walk(0.05, 0.01))}],
}
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "rec.json")
    json.dump(rec, open(path, "w"))
    out = subprocess.run([sys.executable, tool, path, "--skip", "0", "--json"],
                         capture_output=True, text=True)
    print(out.stdout, out.stderr)
    assert out.returncode == 0, out.returncode
    s = json.loads(out.stdout)["all"]
    assert s["steps"] == 2, s
    assert abs(s["p90_m"] - 0.05) < 1e-9 and abs(s["p10_m"] - 0.01) < 1e-9, s
    assert s["under_2cm"] == 0.5, s
    assert abs(s["steps_per_s"] - 2 / 0.5) < 1e-9, s  # 2 steps in 25 frames of 0.02 s
    # over a recorded terrain the clearance is measured from the ground under the foot
    rec["terrain"] = {"origin": [0.0, 0.0], "spacing": sp, "nx": nx, "ny": ny,
                      "heights": [0.12] * (nx * ny)}
    rec["envs"] = [{"frames": 25, "pose": frames(walk(0.05, 0.01), ground=0.12)}]
    json.dump(rec, open(path, "w"))
    out = subprocess.run([sys.executable, tool, path, "--skip", "0", "--json"],
                         capture_output=True, text=True)
    s = json.loads(out.stdout)["all"]
    assert abs(s["p90_m"] - 0.05) < 1e-9 and abs(s["p10_m"] - 0.01) < 1e-9, s
    # a recording without feet is an error naming the file
    rec["shapes"] = []
    json.dump(rec, open(path, "w"))
    out = subprocess.run([sys.executable, tool, path], capture_output=True, text=True)
    assert out.returncode != 0 and "rec.json: the recording has no sphere shapes" in out.stderr, \
        out.stderr
print("record_swing ok")
