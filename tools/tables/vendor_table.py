#!/usr/bin/env python3
"""docs/robots.md's table of vendor robots trained with robot init's proposal, from the files in
docs/data/robots/: per robot vendor_<name>_eval.json (`diffloco eval RUN --contact hard --dt 0.005
--iterations 50 --episodes 1000 --envs 250 --seed 1 --json`), vendor_<name>_mujoco.json (`diffloco
eval EXPORTED.pt --engine mujoco --dt 0.005 --episodes 100 --seed 1 --json`) and
vendor_<name>_metrics.csv (every 10th row of the run's metrics.csv), and the verdict of `robot
check --task velocity` from vendor_robots.txt (tools/reproduce/vendor_robots.sh).

A seed other than 0 is named NAME:SEED; its files are vendor_<name>_seed<SEED>_eval.json,
_mujoco.json and _metrics.csv (the same commands with --seed SEED for training), the YAML the same.

usage: tools/tables/vendor_table.py NAME[:SEED][=LABEL] ...   (run from the repository root)
"""
import csv
import json
import sys

import yaml

DATA = "docs/data/robots"


def tracked_by(metrics, width=250):
    """The end of the first bin of `width` iterations whose training episodes' mean per-step
    linear-tracking kernel exp(-e^2 / sigma) reached 0.8 (tools/tables/tracking_kernels.py's rule;
    the weight and env_dt from configs/tasks/velocity.yaml, which the velocity config extends), or
    None; and the run's wall clock [s]."""
    with open("configs/tasks/velocity.yaml") as f:
        task = yaml.safe_load(f)
    weight, env_dt = float(task["rewards"]["lin_vel_tracking"]["weight"]), float(task["env_dt"])
    with open(metrics) as f:
        rows = list(csv.DictReader(f))
    bins = {}
    for r in rows:
        if not r.get("Episode/rew_lin_vel_tracking"):
            continue
        steps = float(r["Episode/length_s"]) / env_dt
        b = bins.setdefault((int(r["iteration"]) - 1) // width, [0.0, 0])
        b[0] += float(r["Episode/rew_lin_vel_tracking"]) / weight / steps
        b[1] += 1
    first = next(((k + 1) * width for k, (s, n) in sorted(bins.items()) if s / n >= 0.8), None)
    return first, float(rows[-1]["wall_s"])


def stepping_verdict(name):
    """'pays' or 'warns': robot check --task velocity's verdict in vendor_robots.txt ('-' for a
    name it does not list)."""
    with open(f"{DATA}/vendor_robots.txt") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(name + " (")), None)
    if start is None:  # a variant of a robot (another YAML) not in the summary
        return "-"
    for line in lines[start + 1:]:
        if not line.startswith("  "):  # the next robot
            break
        if "stepping pays" in line:
            return "stepping pays"
        if "standing pays too well" in line:
            return "warns: standing pays too well"
    return "none"


def main(names):
    print("| robot | mass | drive (kp, kd, effort cap) | robot check --task velocity | lin. kernel >= 0.8 by | ours, hard contact: "
          "falls, lin. RMS, yaw RMS | MuJoCo: falls, lin. RMS, yaw RMS, beyond limits | wall |")
    print("|---|---|---|---|---|---|---|---|")
    for arg in names:
        spec, _, label = arg.partition("=")
        name, _, seed = spec.partition(":")
        run = f"{DATA}/vendor_{name}" + (f"_seed{seed}" if seed and seed != "0" else "")
        with open(f"{run}_eval.json") as f:
            ours = json.load(f)
        with open(f"{run}_mujoco.json") as f:
            mj = json.load(f)
        with open(f"{DATA}/vendor_{name}.yaml") as f:
            yaml = f.read()
        mass = yaml.split(" kg)")[0].rsplit("(", 1)[1]
        drive = yaml.split("actuator: {")[1].split(", armature")[0]
        by, wall = tracked_by(f"{run}_metrics.csv")
        print(f'| {label or name} | {mass} kg | {drive} | {stepping_verdict(name)} | '
              f'{by if by else "not reached"} | '
              f'{ours["falls"]} / {ours["episodes"]}, {ours["lin_vel_rms"]:.3f}, '
              f'{ours["yaw_rate_rms"]:.3f} | {mj["falls"]} / {mj["episodes"]}, '
              f'{mj["lin_vel_rms"]:.3f}, {mj["yaw_rate_rms"]:.3f}, '
              f'{mj["episodes_beyond_joint_limits"]} | {wall / 60:.1f} min |')


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
