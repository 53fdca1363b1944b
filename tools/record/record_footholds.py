#!/usr/bin/env python3
"""Where the planted feet of a recording stood: how often on a step's edge.

usage: record_footholds.py RECORD.json [--reach 0.03] [--rise 0.06] [--speed 0.1] [--last 0.5]

RECORD.json: `diffloco eval ... --record RECORD.json --record-envs N` on a terrain. The feet are
the record's sphere shapes. A foot is planted in a frame when its centre moved less than `speed`
[m/s] since the previous frame (under 2 mm in a 0.02 s control step at 0.1 m/s); it stands on an
edge when the ground samples within `reach` [m] of its centre along x and y (a 3 x 3 stencil,
nearest samples) differ by more than `rise` [m]: on the stairs' 12 cm rises, a foot whose centre
is within about a foot radius of an edge. Printed: the share of planted foot-frames on an edge,
over every env, over the envs that ran to the longest recorded length, over those that ended
early (a fall), and over the last `last` seconds of those.
"""
import argparse
import math

from rollout_record import feet, foot_centres, ground, load


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("record")
    ap.add_argument("--reach", type=float, default=0.03)
    ap.add_argument("--rise", type=float, default=0.06)
    ap.add_argument("--speed", type=float, default=0.1)
    ap.add_argument("--last", type=float, default=0.5)
    a = ap.parse_args()
    rec = load(a.record)
    if not rec.get("terrain"):
        raise SystemExit(f"{a.record}: no terrain in the recording (record on a --terrain)")
    spheres = feet(rec, a.record)
    h = ground(rec)

    def on_edge(x, y):
        hs = [h(x + dx, y + dy) for dx in (-a.reach, 0, a.reach) for dy in (-a.reach, 0, a.reach)]
        return max(hs) - min(hs) > a.rise

    dt = rec["dt"]
    last_frames = max(1, round(a.last / dt))
    longest = max(e["frames"] for e in rec["envs"])
    tally = {k: [0, 0] for k in ("all", "full", "fell", "last")}  # [planted, on an edge]
    falls = 0
    for e in rec["envs"]:
        n, pose = e["frames"], e["pose"]
        fell = n < longest
        falls += fell
        prev = None
        for f in range(n):
            now = foot_centres(rec, pose, f, spheres)
            if prev is not None:
                for c, c0 in zip(now, prev):
                    if math.dist(c, c0) / dt >= a.speed:
                        continue
                    edge = on_edge(c[0], c[1])
                    keys = ["all", "fell" if fell else "full"]
                    if fell and f >= n - last_frames:
                        keys.append("last")
                    for k in keys:
                        tally[k][0] += 1
                        tally[k][1] += edge
            prev = now

    def share(k):
        planted, edge = tally[k]
        return f"{100 * edge / planted:.1f} % of {planted}" if planted else "none planted"

    print(f"{a.record}: {len(rec['envs'])} envs, {falls} ended early; planted foot-frames on an "
          f"edge (ground range > {a.rise} m within {a.reach} m):")
    print(f"  every env: {share('all')}")
    print(f"  full length: {share('full')}")
    print(f"  ended early: {share('fell')}; their last {a.last} s: {share('last')}")


if __name__ == "__main__":
    main()
