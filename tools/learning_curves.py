#!/usr/bin/env python3
"""Figure 4 by evaluation: every checkpoint of SHAC and PPO runs evaluated by one protocol.

    tools/learning_curves.py --diffloco build/diffloco --shac RUN... --ppo RUN...
                             [--episodes 100] [--envs 100] [--fraction 0.9] [--csv OUT.csv]
                             [--cache DIR]

Training returns of SHAC and PPO runs are not comparable when their training episodes differ
(curricula, command ranges); the evaluation is: each checkpoint model_<N>.pt is run by `diffloco
eval` with the same options (hard contact, dt 0.005, 50 solver iterations, the task's own
randomisation and command ranges, eval seed 0), and placed at the env steps its run had used at
iteration N (metrics.csv). Reported per run: the samples at which the evaluated return first
reaches `fraction` x PPO's final evaluated return (the mean over PPO runs of their last
checkpoint), on velocity-tracking tasks the samples at which linear-velocity RMS first falls under
0.25 m/s (the tracking bar), and the ratio of the medians PPO / SHAC.
"""
import argparse
import csv
import json
import math
import os
import re
import statistics
import subprocess


def env_steps_by_iteration(run):
    path = os.path.join(run, "metrics.csv")
    steps = {}
    try:
        with open(path, newline="") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                try:
                    steps[int(row["iteration"])] = float(row["env_steps"])
                except (KeyError, TypeError, ValueError):
                    raise SystemExit(f"{path}:{line}: expected numbers in the columns "
                                     "'iteration' and 'env_steps'")
    except OSError as e:
        raise SystemExit(f"{path}: cannot read ({e.strerror})")
    return steps


def checkpoints(run):
    found = []
    for name in os.listdir(run):
        m = re.fullmatch(r"model_(\d+)\.pt", name)
        if m:
            found.append((int(m.group(1)), os.path.join(run, name)))
    return sorted(found)


def evaluate(diffloco, path, episodes, envs, cache):
    key = None
    if cache:
        os.makedirs(cache, exist_ok=True)
        rel = os.path.relpath(os.path.abspath(path), "/").replace(os.sep, "_")
        key = os.path.join(cache, f"{rel}.{episodes}.{envs}.json")
        if os.path.exists(key):
            return json.loads(open(key).read())
    cmd = [diffloco, "eval", path, "--contact", "hard", "--dt", "0.005", "--iterations", "50",
           "--episodes", str(episodes), "--envs", str(envs), "--seed", "0", "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    try:
        if done.returncode != 0:
            raise ValueError
        result = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        said = (done.stderr.strip() or done.stdout.strip())[-500:]
        raise SystemExit(f"{path}: `diffloco eval` failed (exit {done.returncode}): {said}")
    if key:
        with open(key + ".tmp", "w") as f:
            f.write(json.dumps(result))
        os.replace(key + ".tmp", key)
    return result


def curve(diffloco, run, episodes, envs, cache):
    steps = env_steps_by_iteration(run)
    points = []
    for it, path in checkpoints(run):
        if it not in steps:
            continue
        r = evaluate(diffloco, path, episodes, envs, cache)
        # lin_vel_rms: velocity-tracking tasks only (nan for the walk task)
        points.append((steps[it], it, r["return_mean"], r.get("lin_vel_rms", math.nan), r["falls"]))
    if not points:
        raise SystemExit(f"{run}: no checkpoints model_<N>.pt with a metrics.csv row")
    return points


def first(points, ok):
    for p in points:
        if ok(p):
            return p[0]
    return math.inf


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--diffloco", default="build/diffloco")
    ap.add_argument("--shac", nargs="+", required=True)
    ap.add_argument("--ppo", nargs="+", required=True)
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--envs", type=int, default=100)
    ap.add_argument("--fraction", type=float, default=0.9)
    ap.add_argument("--csv", help="write every evaluated checkpoint here")
    ap.add_argument("--cache", help="keep each evaluation as JSON here and reuse it")
    a = ap.parse_args()

    curves = {("shac", r): curve(a.diffloco, r, a.episodes, a.envs, a.cache) for r in a.shac}
    curves.update({("ppo", r): curve(a.diffloco, r, a.episodes, a.envs, a.cache) for r in a.ppo})
    ppo_final = statistics.mean(c[-1][2] for (alg, _), c in curves.items() if alg == "ppo")
    level = a.fraction * ppo_final
    print(f"PPO final evaluated return {ppo_final:.1f}; level {a.fraction:.0%}: {level:.1f}")
    reach = {"shac": [], "ppo": []}
    for (alg, run), c in curves.items():
        r = first(c, lambda p: p[2] >= level)
        t = first(c, lambda p: p[3] <= 0.25)
        reach[alg].append(r)
        tracking = "" if math.isnan(c[-1][3]) else f", lin. RMS <= 0.25 m/s at {t:.3g}"
        last = "" if math.isnan(c[-1][3]) else f", lin. RMS {c[-1][3]:.3f} m/s"
        print(f"  {alg} {os.path.basename(os.path.normpath(run))}: return level at {r:.3g} env "
              f"steps{tracking}; last checkpoint: return {c[-1][2]:.1f}{last}, falls "
              f"{c[-1][4]}/{a.episodes}")
    ms, mp = statistics.median(reach["shac"]), statistics.median(reach["ppo"])
    print(f"median samples to the level: SHAC {ms:.3g}, PPO {mp:.3g}; PPO / SHAC = "
          f"{(mp / ms if ms > 0 else math.inf):.1f}")
    if a.csv:
        with open(a.csv + ".tmp", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["algorithm", "run", "iteration", "env_steps", "return_mean", "lin_vel_rms",
                        "falls"])
            for (alg, run), c in curves.items():
                for steps, it, ret, lin, falls in c:
                    w.writerow([alg, os.path.basename(os.path.normpath(run)), it, int(steps), ret,
                                lin, falls])
        os.replace(a.csv + ".tmp", a.csv)


if __name__ == "__main__":
    main()
