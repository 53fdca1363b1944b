#!/usr/bin/env python3
"""How far the recorded bases got: each env's largest distance from its start and the ground's
rise under its base at the end (the steps it got up).

usage: record_reach.py RECORD.json

RECORD.json: `diffloco eval ... --terrain T --record RECORD.json --record-envs N`. Distance: the
largest |x - x0| or |y - y0| of the base over the episode [m] (half a tile, 4 m on velocity_rough,
is `climbed`); rise: the terrain height under the base at the last frame minus at the first [m].
"""
import sys

from rollout_record import ground, load


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rec = load(sys.argv[1])
    h = ground(rec)
    stride = 7 * len(rec["bodies"])  # the base's pose comes first in each frame
    rows = []
    for e in rec["envs"]:
        pose = e["pose"]
        frames = len(pose) // stride
        x0, y0 = pose[0], pose[1]
        reach = max(max(abs(pose[f * stride] - x0), abs(pose[f * stride + 1] - y0))
                    for f in range(frames))
        xf, yf = pose[(frames - 1) * stride], pose[(frames - 1) * stride + 1]
        rows.append((reach, h(xf, yf) - h(x0, y0)))
    print(f"{sys.argv[1]}: {len(rows)} envs; the base's largest distance from its start [m], the "
          "ground's rise under it at the end [m]:")
    for i, (reach, rise) in enumerate(rows):
        print(f"  env {i}: {reach:.2f}, {rise:+.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
