#!/usr/bin/env python3
"""Plot the evaluated checkpoints of tools/reproduce/learning_curves.py's CSV (gnuplot, PNG).

usage: learning_curves_plot.py CURVES.csv OUT.png

Two panels against env samples (log scale): the evaluated return, and for velocity tracking
(every row with a linear-velocity RMS) that RMS, else the walk task's mean forward speed. One line
per run (named by the CSV's run column), SHAC in blue, PPO in orange, each run's evaluated
checkpoints as points: with --coarse the CSV holds the checkpoints the search evaluated, not every
checkpoint.
"""
import csv
import math
import os
import subprocess
import sys
import tempfile


def number(row, key, path, line):
    try:
        return float(row[key])
    except (KeyError, TypeError, ValueError):
        raise SystemExit(f"{path}:{line}: expected a number in the column '{key}'")


def second_panel(runs):
    """The point column and title of the right panel: the linear-velocity RMS where every
    evaluation has one (velocity tracking; every task's evaluation has a forward speed)."""
    if all(not math.isnan(p[2]) for pts in runs.values() for p in pts):
        return 2, "linear-velocity RMS [m/s]"
    return 3, "mean forward speed [m/s]"


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    path, out = sys.argv[1], sys.argv[2]
    runs = {}
    try:
        with open(path, newline="") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                key = (row.get("algorithm"), row.get("run"))
                if key[0] not in ("shac", "ppo"):
                    raise SystemExit(f"{path}:{line}: algorithm must be shac or ppo")
                speed = number(row, "forward_velocity_mean", path, line) \
                    if "forward_velocity_mean" in row else math.nan
                runs.setdefault(key, []).append((number(row, "env_steps", path, line),
                                                 number(row, "return_mean", path, line),
                                                 number(row, "lin_vel_rms", path, line), speed))
    except OSError as e:
        raise SystemExit(f"{path}: cannot read ({e.strerror})")
    if not runs:
        raise SystemExit(f"{path}: no evaluated checkpoints")
    second, label = second_panel(runs)
    colours = {"shac": ["#1f4e9c", "#3a7bd5", "#7fb0f0"], "ppo": ["#b35900", "#e08000", "#f5b041"]}
    seen = {"shac": 0, "ppo": 0}
    with tempfile.TemporaryDirectory() as tmp:
        plots = []
        for (alg, run), pts in runs.items():
            data = os.path.join(tmp, f"{len(plots)}.dat")
            with open(data, "w") as f:
                for p in sorted(pts):
                    f.write(f"{max(p[0], 1)} {p[1]} {p[second]}\n")
            colour = colours[alg][seen[alg] % 3]
            seen[alg] += 1
            plots.append((data, run, colour))
        script = os.path.join(tmp, "plot.gp")
        with open(script, "w") as f:
            f.write(f'set terminal pngcairo size 1200,460 font ",10"\nset output "{out}"\n')
            f.write('set multiplot layout 1,2\nset logscale x\nset format x "10^{%L}"\n')
            f.write('set xlabel "environment samples"\nset grid\n')
            # the legend where the curves are not: an RMS starts high and falls as the runs learn
            right = "bottom left" if second == 2 else "bottom right"
            for column, title, key in ((2, "evaluated return", "bottom right"), (3, label, right)):
                f.write(f'set title "{title}"\nset key {key}\nplot ' + ", ".join(
                    f'"{d}" u 1:{column} w lp pt 7 ps 0.5 lw 2 lc rgb "{c}" t "{t}" noenhanced'
                    for d, t, c in plots) + "\n")
            f.write("unset multiplot\n")
        done = subprocess.run(["gnuplot", script], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"gnuplot failed: {done.stderr.strip()[-500:]}")


if __name__ == "__main__":
    main()
