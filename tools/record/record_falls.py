#!/usr/bin/env python3
"""How the recorded episodes of `diffloco eval --record FILE.json` ended.

usage: record_falls.py RECORD.json [TILT_RAD=1.0] [HEIGHT_M=0.25]

For each recorded env: its length, and for an episode that ended before the last frame of a
full-length episode, the base's tilt (angle between its z axis and the vertical) and height
above the ground under it at its last recorded frame (the state of the last decision, one
control step before the termination), the roll and pitch there, and which of the task's fall
terminations (base_tilt_above TILT_RAD, base_height_below HEIGHT_M) it was nearest to, as the
fraction of the way from the upright standing state (tilt 0, and 2 x HEIGHT_M) to each. The
ground is the record's height field (nearest sample; the plane z = 0 without one). "Full length"
is the longest recorded episode: record enough envs that at least one ran to the time limit.
"""
import math
import sys

from rollout_record import ground, load


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rec = load(sys.argv[1])
    tilt_max = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    height_min = float(sys.argv[3]) if len(sys.argv) > 3 else 0.25
    stride = 7 * len(rec["bodies"])  # per frame: each body's position and quaternion (w x y z)
    h_at = ground(rec)

    longest = max(e["frames"] for e in rec["envs"])
    counts = {"tilt": 0, "height": 0}
    print("env frames  tilt[deg] height[m] roll[deg] pitch[deg] nearest termination")
    for k, e in enumerate(rec["envs"]):
        n = e["frames"]
        if n == longest:
            print(f"{k:3d} {n:6d}  (full length)")
            continue
        x, y, z, w, qx, qy, qz = e["pose"][(n - 1) * stride:(n - 1) * stride + 7]
        tilt = math.acos(max(-1.0, min(1.0, 1 - 2 * (qx * qx + qy * qy))))
        roll = math.atan2(2 * (w * qx + qy * qz), 1 - 2 * (qx * qx + qy * qy))
        pitch = math.asin(max(-1.0, min(1.0, 2 * (w * qy - qz * qx))))
        h = z - h_at(x, y)
        to_tilt = tilt / tilt_max
        to_height = (2 * height_min - h) / height_min
        cause = "tilt" if to_tilt >= to_height else "height"
        counts[cause] += 1
        print(f"{k:3d} {n:6d}  {math.degrees(tilt):9.1f} {h:9.3f} {math.degrees(roll):9.1f} "
              f"{math.degrees(pitch):10.1f} {cause} ({max(to_tilt, to_height):.2f} of the way)")
    print("ended early:", ", ".join(f"{c} {v}" for c, v in counts.items()))


if __name__ == "__main__":
    main()
