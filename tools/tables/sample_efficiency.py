#!/usr/bin/env python3
"""Figure 4's claim as numbers: env samples SHAC and PPO need to reach 90 % of PPO's final return.

    tools/tables/sample_efficiency.py --shac RUN... --ppo RUN... [--fraction 0.9] [--window 20]

Each run's Train/mean_reward (metrics.csv) is smoothed by a running mean over `window` iterations;
PPO's final return is the mean over its runs of the last `window` iterations. For every run, the
first env_steps where the smoothed return reaches fraction x that final return is reported
(inf: never), then the ratio of the medians PPO / SHAC.
"""
import argparse
import csv
import math
import os
import statistics


def curve(run):
    path = run if run.endswith(".csv") else os.path.join(run, "metrics.csv")
    xs, ys = [], []
    for row in csv.DictReader(open(path)):
        if row["Train/mean_reward"]:
            xs.append(float(row["env_steps"]))
            ys.append(float(row["Train/mean_reward"]))
    return xs, ys


def smooth(ys, w):
    out = []
    for i in range(len(ys)):
        seg = ys[max(0, i - w + 1): i + 1]
        out.append(sum(seg) / len(seg))
    return out


def first_reaching(xs, ys, level):
    for x, y in zip(xs, ys):
        if y >= level:
            return x
    return math.inf


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shac", nargs="+", required=True)
    ap.add_argument("--ppo", nargs="+", required=True)
    ap.add_argument("--fraction", type=float, default=0.9)
    ap.add_argument("--window", type=int, default=20)
    a = ap.parse_args()

    ppo_final = statistics.mean(statistics.mean(curve(r)[1][-a.window:]) for r in a.ppo)
    level = a.fraction * ppo_final
    print(f"PPO final return {ppo_final:.1f} (mean of the last {a.window} iterations over "
          f"{len(a.ppo)} runs); level {a.fraction:.0%}: {level:.1f}")
    med = {}
    for name, runs in (("shac", a.shac), ("ppo", a.ppo)):
        reach = []
        for r in runs:
            xs, ys = curve(r)
            s = first_reaching(xs, smooth(ys, a.window), level)
            reach.append(s)
            final = statistics.mean(ys[-a.window:])
            print(f"  {name} {os.path.basename(os.path.normpath(r))}: reaches the level at "
                  f"{s:.3g} env steps; final return {final:.1f}")
        med[name] = statistics.median(reach)
    ratio = med["ppo"] / med["shac"] if med["shac"] > 0 else math.inf
    print(f"median samples to the level: SHAC {med['shac']:.3g}, PPO {med['ppo']:.3g}; "
          f"PPO / SHAC = {ratio:.1f}")


if __name__ == "__main__":
    main()
