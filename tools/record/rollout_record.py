"""What the record_*.py tools read from a rollout record (`diffloco eval --record FILE.json`):
the ground under a point and where the foot spheres are.

A record holds, per env and frame, each body's position and orientation quaternion (w x y z),
7 numbers a body (`pose`); its sphere shapes are the feet, each an offset on its body and a
radius; `terrain` (when the episodes ran on one) is the height field's samples.
"""
import json


def load(path):
    """The record at `path`; an unreadable file exits naming it."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"{path}: cannot read a recording ({e})")


def rotate(q, v):
    """v rotated by the unit quaternion q = (w, x, y, z)."""
    w, x, y, z = q
    return (
        (1 - 2 * (y * y + z * z)) * v[0] + 2 * (x * y - w * z) * v[1] + 2 * (x * z + w * y) * v[2],
        2 * (x * y + w * z) * v[0] + (1 - 2 * (x * x + z * z)) * v[1] + 2 * (y * z - w * x) * v[2],
        2 * (x * z - w * y) * v[0] + 2 * (y * z + w * x) * v[1] + (1 - 2 * (x * x + y * y)) * v[2],
    )


def ground(rec):
    """h(x, y) of the record's terrain at the nearest sample (the plane z = 0 without one)."""
    ter = rec.get("terrain")
    if not ter:
        return lambda x, y: 0.0
    nx, ny, sp = ter["nx"], ter["ny"], ter["spacing"]
    ox, oy = ter["origin"][0], ter["origin"][1]
    heights = ter["heights"]

    def h(x, y):
        i = min(max(round((x - ox) / sp), 0), nx - 1)
        j = min(max(round((y - oy) / sp), 0), ny - 1)
        return heights[j * nx + i]
    return h


def feet(rec, path):
    """The record's foot spheres as (body, offset, radius); none exits naming `path`."""
    out = [(s["body"], s["a"], s["radius"]) for s in rec.get("shapes", []) if s["kind"] == "sphere"]
    if not out:
        raise SystemExit(f"{path}: the recording has no sphere shapes (feet)")
    return out


def foot_centres(rec, pose, frame, spheres):
    """Each foot sphere's centre in the world at `frame` of an env's `pose`."""
    base = frame * 7 * len(rec["bodies"])
    out = []
    for body, off, _ in spheres:
        p = pose[base + 7 * body:base + 7 * body + 3]
        r = rotate(pose[base + 7 * body + 3:base + 7 * body + 7], off)
        out.append((p[0] + r[0], p[1] + r[1], p[2] + r[2]))
    return out
