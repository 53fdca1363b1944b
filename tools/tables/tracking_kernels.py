#!/usr/bin/env python3
"""Per-step velocity-tracking kernels of a velocity-task run, from its metrics.csv.

usage: tracking_kernels.py RUN_FOLDER [BIN_ITERATIONS=250]

For each bin of iterations: the mean per-step lin_vel_tracking and ang_vel_tracking kernels
exp(-e^2/sigma) of the training episodes that ended in it (the episode's reward term / its weight /
its steps; weights read from the run's config.yaml), the mean episode length, and the first
iteration at which the linear kernel reached 0.8 ("iterations to tracking" in
docs/velocity_anymal.md). A standing robot scores ~0.19 (commands +-1) or ~0.14 (+-1.25).
"""
import csv
import os
import sys

import yaml


def weight(task, term):
    w = (task.get("rewards", {}).get(term) or {}).get("weight")
    if w is None:
        sys.exit(f"task.rewards.{term}: no weight in the run's config.yaml")
    return float(w)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    run = sys.argv[1]
    width = int(sys.argv[2]) if len(sys.argv) == 3 else 250
    task = yaml.safe_load(open(os.path.join(run, "config.yaml")))["task"]
    env_dt = float(task["env_dt"])
    wl, wa = weight(task, "lin_vel_tracking"), weight(task, "ang_vel_tracking")
    bins, first = {}, None
    for r in csv.DictReader(open(os.path.join(run, "metrics.csv"))):
        if not r.get("Episode/rew_lin_vel_tracking"):
            continue
        it, length = int(r["iteration"]), float(r["Episode/length_s"])
        lin = float(r["Episode/rew_lin_vel_tracking"]) / wl / (length / env_dt)
        yaw = float(r["Episode/rew_ang_vel_tracking"]) / wa / (length / env_dt)
        b = bins.setdefault((it - 1) // width, [0.0, 0.0, 0.0, 0])
        b[0] += lin
        b[1] += yaw
        b[2] += length
        b[3] += 1
    print("iterations      lin    yaw  episode [s]")
    for k, (lin, yaw, length, n) in sorted(bins.items()):
        print(f"{k * width + 1:5d}-{(k + 1) * width:<5d}  {lin / n:.3f}  {yaw / n:.3f}  {length / n:6.1f}")
        if first is None and lin / n >= 0.8:
            first = (k + 1) * width
    print(f"linear kernel >= 0.8 by iteration: {first if first else 'not reached'}")


if __name__ == "__main__":
    main()
