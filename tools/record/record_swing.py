#!/usr/bin/env python3
"""How high the feet of a recording swing: the peak clearance of every step.

usage: record_swing.py RECORD.json [--speed 0.1] [--skip 1.0] [--json]

RECORD.json: `diffloco eval ... --record RECORD.json --record-envs N` (the plane or a terrain).
The feet are the record's sphere shapes. A foot's clearance in a frame is its sphere's lowest
point above the ground under its centre (the recorded terrain's nearest sample, or z = 0 on the
plane). A step is a run of frames in which the foot's centre moves horizontally at `speed` [m/s]
or faster (a planted foot moves under 2 mm per 0.02 s control step at 0.1 m/s; a foot lifted in
place is not a step); its height is the largest clearance in the run, and a step still under way
when its episode ends is left out. The first `skip` seconds of each episode (the start from the reset pose)
are left out. Printed: the steps' heights (median, 10th and 90th percentile, the share under
2 cm) over every foot and per foot, and the steps per foot and second.
"""
import argparse
import json
import math
import statistics

from rollout_record import feet, foot_centres, ground, load


def percentile(xs, p):
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


def summary(heights, seconds):
    if not heights:
        return {"steps": 0}
    return {
        "steps": len(heights),
        "steps_per_s": len(heights) / seconds if seconds > 0 else 0.0,
        "median_m": statistics.median(heights),
        "p10_m": percentile(heights, 10),
        "p90_m": percentile(heights, 90),
        "under_2cm": sum(h < 0.02 for h in heights) / len(heights),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("record")
    ap.add_argument("--speed", type=float, default=0.1)
    ap.add_argument("--skip", type=float, default=1.0)
    ap.add_argument("--json", action="store_true", help="one JSON object instead of text")
    a = ap.parse_args()
    rec = load(a.record)
    spheres = feet(rec, a.record)
    names = [rec["bodies"][body] for body, _, _ in spheres]
    h = ground(rec)

    dt = rec["dt"]
    skip = round(a.skip / dt)
    heights = [[] for _ in spheres]
    seconds = 0.0
    for e in rec["envs"]:
        n, pose = e["frames"], e["pose"]
        if n <= skip + 1:
            continue
        seconds += (n - skip) * dt
        prev = [None] * len(spheres)
        peak = [None] * len(spheres)  # the running step's largest clearance; None: planted
        for f in range(skip, n):
            for k, c in enumerate(foot_centres(rec, pose, f, spheres)):
                clearance = c[2] - spheres[k][2] - h(c[0], c[1])
                moving = prev[k] is not None and math.dist(c[:2], prev[k][:2]) / dt >= a.speed
                if moving:
                    peak[k] = clearance if peak[k] is None else max(peak[k], clearance)
                elif peak[k] is not None:
                    heights[k].append(peak[k])
                    peak[k] = None
                prev[k] = c
    every = [x for hk in heights for x in hk]
    out = {"record": a.record, "envs": len(rec["envs"]), "seconds": seconds,
           "all": summary(every, seconds * len(spheres)),
           "feet": {name: summary(hk, seconds) for name, hk in zip(names, heights)}}
    if a.json:
        print(json.dumps(out))
        return
    if not every:
        raise SystemExit(f"{a.record}: no steps after the first {a.skip} s")

    def line(label, s):
        return (f"  {label}: {s['steps']} steps ({s['steps_per_s']:.2f} per foot and s), height "
                f"median {100 * s['median_m']:.1f} cm, 10-90 % {100 * s['p10_m']:.1f}-"
                f"{100 * s['p90_m']:.1f} cm, under 2 cm {100 * s['under_2cm']:.0f} %")

    print(f"{a.record}: {out['envs']} envs, {seconds:.0f} s after the first {a.skip} s of each; "
          f"steps (foot centre at {a.speed} m/s or faster), their peak clearance:")
    print(line("every foot", out["all"]))
    for name in names:
        if out["feet"][name]["steps"]:
            print(line(name, out["feet"][name]))


if __name__ == "__main__":
    main()
