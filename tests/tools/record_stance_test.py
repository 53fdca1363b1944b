#!/usr/bin/env python3
"""tools/record/record_stance.py on a synthetic recording (run by ctest, tests/CMakeLists.txt).

A terrain of 0.05 m samples, 0 for x < 1 and 0.16 m beyond; dt 0.5 s, so the first two frames
(the first second) are left out. Env 0's base stands at x = 0.7 (the step 0.3 m ahead) with foot
FRONT on the step at x = 1.2 and foot HIND at x = 0.4 below: counted, FRONT up, HIND not. Env 1's
base is up the step (x = 1.5): not counted. Env 2's base stands at x = 0.2, 0.8 m from the step:
not counted with the default `near` 0.6 m, counted with --near 0.9.
"""
import json
import os
import subprocess
import sys
import tempfile

repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tool = os.path.join(repo, "tools/record/record_stance.py")


def frame(base_x, front_x, hind_x):
    z = 0.6
    return [base_x, 0.5, z, 1, 0, 0, 0, front_x, 0.5, 0.2, 1, 0, 0, 0, hind_x, 0.5, 0.03, 1, 0, 0, 0]


def env(base_x, front_x, hind_x, start_x):
    return {"frames": 3, "pose": frame(start_x, start_x, start_x) * 2 + frame(base_x, front_x, hind_x)}


nx, ny, sp = 41, 21, 0.05
heights = [0.16 if i * sp >= 1.0 else 0.0 for j in range(ny) for i in range(nx)]
sphere = {"kind": "sphere", "a": [0, 0, 0], "b": [0, 0, 0], "radius": 0.03}
rec = {
    "format": "diffloco-rollout-2", "dt": 0.5, "bodies": ["base", "FRONT", "HIND"],
    "shapes": [dict(sphere, body=1), dict(sphere, body=2)],
    "terrain": {"origin": [0.0, 0.0], "spacing": sp, "nx": nx, "ny": ny, "heights": heights},
    "envs": [env(0.7, 1.2, 0.4, 0.5), env(1.5, 1.8, 1.2, 1.4), env(0.2, 0.5, 0.1, 0.2)],
}
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "rec.json")
    json.dump(rec, open(path, "w"))
    out = subprocess.run([sys.executable, tool, path], capture_output=True, text=True)
    print(out.stdout, out.stderr)
    assert out.returncode == 0, out.returncode
    assert "3 envs, 1 frames" in out.stdout, out.stdout
    assert "FRONT: 100.0 %, median +0.16 m" in out.stdout, out.stdout
    assert "HIND: 0.0 %, median +0.00 m" in out.stdout, out.stdout
    wide = subprocess.run([sys.executable, tool, path, "--near", "0.9"], capture_output=True, text=True)
    assert "3 envs, 2 frames" in wide.stdout, wide.stdout
    assert "FRONT: 50.0 %, median +0.08 m" in wide.stdout, wide.stdout
    bad = subprocess.run([sys.executable, tool], capture_output=True, text=True)
    assert bad.returncode != 0 and "usage" in bad.stderr, bad.stderr
print("record_stance: ok")
