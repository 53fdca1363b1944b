#!/usr/bin/env python3
"""Figure 4 by evaluation: every checkpoint of SHAC and PPO runs evaluated by one protocol.

    tools/reproduce/learning_curves.py --diffloco build/diffloco --shac RUN... --ppo RUN...
                             [--episodes 100] [--envs 100] [--fraction 0.9] [--csv OUT.csv]
                             [--cache DIR] [--coarse K] [--speed V...] [--tracking R...]
                             [--max-falls F]

Training returns of SHAC and PPO runs are not comparable when their training episodes differ
(curricula, command ranges); the evaluation is: each checkpoint model_<N>.pt is run by `diffloco
eval` with the same options (hard contact, dt 0.005, 50 solver iterations, the task's own
randomisation and command ranges, eval seed 0), and placed at the env steps its run had used at
iteration N (metrics.csv). Reported per run: the samples at which the evaluated return first
reaches `fraction` x PPO's final evaluated return (the mean over PPO runs of their last
checkpoint), with --tracking R... on velocity-tracking tasks the samples at which the robot
first tracks within R m/s: a linear-velocity RMS of at most R with at most a fraction F of the
episodes ending in a fall (--max-falls, default 0.05), with --speed V... on the walk task the
samples at which the robot first walks at V m/s: a mean forward speed of at least V with at most
a fraction F of the episodes falling (a robot that lunges forward and falls moves fast too), and
the ratio of the medians PPO / SHAC for each criterion.

A crossing lies between the checkpoint that first reaches the level and the evaluated checkpoint
before it (its bracket; from 0 env steps when the first one does). The ratio's interval takes the
medians of the brackets' ends: PPO's lower ends over SHAC's upper ends, and PPO's upper over
SHAC's lower; the seeds' spread is the smallest and largest ratio over every (PPO, SHAC) pair.
With --coarse K a run's last checkpoint is evaluated first, then every K-th iteration's checkpoint
in order until the first that crosses (none after it), then every checkpoint inside that bracket,
until the bracket is one checkpoint interval wide (a run keeps every checkpoint; the evaluation
picks). Where a curve is not monotone, a checkpoint between two coarse ones that crosses before
the first coarse crossing is not seen; K equal to the checkpoint interval searches every one.
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


class Curve:
    """A run's checkpoints and those evaluated so far, as (env steps, iteration, return, lin.
    RMS, falls) points in iteration order."""

    def __init__(self, run, coarse, evaluate_one):
        steps = env_steps_by_iteration(run)
        self.available = [(it, path, steps[it]) for it, path in checkpoints(run) if it in steps]
        if not self.available:
            raise SystemExit(f"{run}: no checkpoints model_<N>.pt with a metrics.csv row")
        self.evaluate_one = evaluate_one
        self.evaluated = {}
        last = len(self.available) - 1
        # the checkpoints a crossing is first searched among, in order; the last one always
        self.grid = [i for i, (it, _, _) in enumerate(self.available)
                     if not coarse or it % coarse == 0 or i == last]
        for i in self.grid if not coarse else [last]:
            self.evaluate(i)

    def evaluate(self, i):
        if i not in self.evaluated:
            it, path, steps = self.available[i]
            r = self.evaluate_one(path)
            # lin_vel_rms: velocity-tracking tasks only; forward_velocity_mean: the walk task's
            self.evaluated[i] = (steps, it, r["return_mean"], r.get("lin_vel_rms", math.nan),
                                 r["falls"], r.get("forward_velocity_mean", math.nan))

    def points(self):
        return [self.evaluated[i] for i in sorted(self.evaluated)]

    def bracket(self, ok):
        """(lower, upper) env steps of the first crossing, refined until no unevaluated
        checkpoint lies inside; (last steps, inf) when no checkpoint reaches it."""
        while True:
            order = sorted(self.evaluated)
            hit = next((k for k, i in enumerate(order) if ok(self.evaluated[i])), None)
            end = order[hit] if hit is not None else len(self.available)
            pending = next((g for g in self.grid if g < end and g not in self.evaluated), None)
            if pending is not None:
                self.evaluate(pending)
                continue
            if hit is None:
                return self.evaluated[order[-1]][0], math.inf
            before = order[hit - 1] if hit > 0 else -1
            inside = range(before + 1, order[hit])
            if not inside:
                lower = self.evaluated[before][0] if before >= 0 else 0.0
                return lower, self.evaluated[order[hit]][0]
            for i in inside:
                self.evaluate(i)


def ratio_summary(reach):
    """PPO / SHAC median ratio, its interval from the brackets, and the seeds' spread."""
    med = statistics.median
    div = lambda a, b: a / b if b > 0 else math.inf
    ratio = div(med([u for _, u in reach["ppo"]]), med([u for _, u in reach["shac"]]))
    low = div(med([l for l, _ in reach["ppo"]]), med([u for _, u in reach["shac"]]))
    high = div(med([u for _, u in reach["ppo"]]), med([l for l, _ in reach["shac"]]))
    pairs = [div(p, s) for _, p in reach["ppo"] for _, s in reach["shac"]]
    return ratio, low, high, min(pairs), max(pairs)


def print_summary(what, reach):
    ms = statistics.median(u for _, u in reach["shac"])
    mp = statistics.median(u for _, u in reach["ppo"])
    ratio, low, high, spread_lo, spread_hi = ratio_summary(reach)
    print(f"median samples to {what}: SHAC {ms:.3g}, PPO {mp:.3g}; PPO / SHAC = {ratio:.1f}")
    print(f"ratio within the checkpoints' brackets: {low:.1f}-{high:.1f}; over seed pairs: "
          f"{spread_lo:.1f}-{spread_hi:.1f}")


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
    ap.add_argument("--coarse", type=int, default=0, metavar="K",
                    help="search each crossing among every K-th iteration's checkpoints, in order, "
                    "then refine its bracket (default: evaluate every checkpoint)")
    ap.add_argument("--speed", type=float, nargs="+", default=[], metavar="V",
                    help="walk task: also the samples to walking at V m/s (each V)")
    ap.add_argument("--tracking", type=float, nargs="+", default=[], metavar="R",
                    help="velocity task: also the samples to a linear-velocity RMS <= R m/s (each R)")
    ap.add_argument("--max-falls", type=float, default=0.05, metavar="F",
                    help="--speed, --tracking: the largest share of episodes that may end in a fall")
    a = ap.parse_args()
    if a.coarse < 0:
        raise SystemExit(f"--coarse must be >= 0 (got {a.coarse})")
    for v in a.speed:
        if not (math.isfinite(v) and v > 0):
            raise SystemExit(f"--speed must be a speed > 0 m/s (got {v})")
    for r in a.tracking:
        if not (math.isfinite(r) and r > 0):
            raise SystemExit(f"--tracking must be an RMS > 0 m/s (got {r})")
    if not 0 <= a.max_falls <= 1:
        raise SystemExit(f"--max-falls must be a share in [0, 1] (got {a.max_falls})")
    falls_ok = a.max_falls * a.episodes

    one = lambda path: evaluate(a.diffloco, path, a.episodes, a.envs, a.cache)
    curves = {("shac", r): Curve(r, a.coarse, one) for r in a.shac}
    curves.update({("ppo", r): Curve(r, a.coarse, one) for r in a.ppo})
    ppo_final = statistics.mean(c.points()[-1][2] for (alg, _), c in curves.items()
                                if alg == "ppo")
    level = a.fraction * ppo_final
    print(f"PPO final evaluated return {ppo_final:.1f}; level {a.fraction:.0%}: {level:.1f}")
    # the per-run criteria beside the return level: (per-run text, summary text, test of a point)
    falls = f"(falls <= {a.max_falls:.0%})"
    criteria = [(f"tracks within {r:g} m/s", f"tracking within {r:g} m/s {falls}",
                 lambda p, r=r: p[3] <= r and p[4] <= falls_ok) for r in a.tracking]
    criteria += [(f"walks at >= {v:g} m/s", f"walking at {v:g} m/s {falls}",
                  lambda p, v=v: p[5] >= v and p[4] <= falls_ok) for v in a.speed]
    reach = {"shac": [], "ppo": []}
    reach_criteria = [{"shac": [], "ppo": []} for _ in criteria]
    for (alg, run), c in curves.items():
        lo, hi = c.bracket(lambda p: p[2] >= level)
        reach[alg].append((lo, hi))
        last = c.points()[-1]
        if a.tracking and math.isnan(last[3]):
            raise SystemExit(f"{run}: --tracking needs a velocity task's lin_vel_rms in its "
                             "evaluations")
        if a.speed and math.isnan(last[5]):
            raise SystemExit(f"{run}: --speed needs the walk task's forward_velocity_mean in its "
                             "evaluations")
        reached = ""
        for (text, _, ok), seen in zip(criteria, reach_criteria):
            clo, chi = c.bracket(ok)
            seen[alg].append((clo, chi))
            reached += f", {text} at {chi:.3g} (after {clo:.3g})"
        last_rms = ""
        if not math.isnan(last[3]):
            last_rms = f", lin. RMS {last[3]:.3f} m/s"
        if a.speed:
            last_rms = f", forward speed {last[5]:.3f} m/s"
        print(f"  {alg} {os.path.basename(os.path.normpath(run))}: return level at {hi:.3g} env "
              f"steps (after {lo:.3g}){reached}; last checkpoint: return {last[2]:.1f}"
              f"{last_rms}, falls {last[4]}/{a.episodes}")
    print_summary("the level", reach)
    for (_, summary, _), seen in zip(criteria, reach_criteria):
        print_summary(summary, seen)
    if a.csv:
        with open(a.csv + ".tmp", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["algorithm", "run", "iteration", "env_steps", "return_mean", "lin_vel_rms",
                        "falls", "forward_velocity_mean"])
            for (alg, run), c in curves.items():
                for steps, it, ret, lin, falls, speed in c.points():
                    w.writerow([alg, os.path.basename(os.path.normpath(run)), it, int(steps), ret,
                                lin, falls, speed])
        os.replace(a.csv + ".tmp", a.csv)


if __name__ == "__main__":
    main()
