#!/usr/bin/env python3
"""Where the feet stand while the base has not got up: of the frames in which the ground under the
base is still its start's and higher ground lies within `near` of the base, the share in which
the ground under each foot is at least `rise` above the ground under the base, and the median
rise under that foot. A robot whose front feet stand steps up while its hind feet stay below is
stretched across the stairs: its hind legs, not its front ones, stop the climb.

usage: record_stance.py RECORD.json [--rise M] [--near M]

RECORD.json: `diffloco eval ... --terrain T --record RECORD.json --record-envs N`. Defaults:
rise 0.05 m, near 0.6 m; the first second of each episode (the reset's settling) is left out.
"""
import argparse
import statistics
import sys

from rollout_record import feet, foot_centres, ground, load


def near_higher(h, x, y, base_ground, near, rise):
    """Whether ground at least `rise` above `base_ground` lies within `near` of (x, y)."""
    steps = 6
    for i in range(-steps, steps + 1):
        for j in range(-steps, steps + 1):
            dx, dy = near * i / steps, near * j / steps
            if dx * dx + dy * dy <= near * near and h(x + dx, y + dy) >= base_ground + rise:
                return True
    return False


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("record")
    ap.add_argument("--rise", type=float, default=0.05)
    ap.add_argument("--near", type=float, default=0.6)
    a = ap.parse_args()
    rec = load(a.record)
    h = ground(rec)
    spheres = feet(rec, a.record)
    names = [rec["bodies"][body] for body, _, _ in spheres]
    stride = 7 * len(rec["bodies"])
    skip = round(1.0 / rec["dt"])
    frames = 0
    up = [0] * len(spheres)
    rises = [[] for _ in spheres]
    for e in rec["envs"]:
        pose = e["pose"]
        start = h(pose[0], pose[1])
        for f in range(skip, len(pose) // stride):
            x, y = pose[f * stride], pose[f * stride + 1]
            under = h(x, y)
            if abs(under - start) > 1e-9 or not near_higher(h, x, y, under, a.near, a.rise):
                continue
            frames += 1
            for k, c in enumerate(foot_centres(rec, pose, f, spheres)):
                r = h(c[0], c[1]) - under
                rises[k].append(r)
                up[k] += r >= a.rise
    print(f"{a.record}: {len(rec['envs'])} envs, {frames} frames with the base on its start ground "
          f"and ground {a.rise:.2f} m higher within {a.near:.2f} m; per foot, the share with the "
          f"ground under it {a.rise:.2f} m or more above the base's, the median rise under it:")
    for k, name in enumerate(names):
        share = 100 * up[k] / frames if frames else 0.0
        med = statistics.median(rises[k]) if rises[k] else 0.0
        print(f"  {name}: {share:.1f} %, median {med:+.2f} m")
    return 0


if __name__ == "__main__":
    sys.exit(main())
