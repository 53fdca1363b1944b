#!/usr/bin/env python3
"""Table 1 of the locomotion paper from training runs: each run evaluated with `diffloco eval` in
its own contact model and in hard contact; mean +- std over the runs (seeds) of each run's mean.

    tools/reproduce/table1.py --diffloco build/diffloco RUN... [--episodes 1000] [--envs 100]
                              [--md OUT.md]

Runs are grouped by the contact model they were trained with (read from their config.yaml).
The paper's protocol is 100 envs for 100 s with 10 s episodes: 1000 episodes when none falls.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import yaml


def trained_contact(run):
    path = os.path.join(run, "config.yaml")
    contact = (yaml.safe_load(open(path)).get("task") or {}).get("sim", {}).get("contact")
    if not contact:
        sys.exit(f"{path}: no task.sim.contact")
    return contact


def evaluate(diffloco, run, contact, episodes, envs, cache=None):
    if cache:  # evaluations written earlier: <cache>/<run name>.<own|hard>.json
        path = os.path.join(cache, f"{os.path.basename(os.path.normpath(run))}.{contact or 'own'}.json")
        if os.path.exists(path):
            return json.loads(open(path).read().strip().splitlines()[-1])
    cmd = [diffloco, "eval", run, "--json", "--episodes", str(episodes), "--envs", str(envs)]
    if contact:
        cmd += ["--contact", contact]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def mean_std(values):
    return statistics.mean(values), (statistics.pstdev(values) if len(values) > 1 else 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--diffloco", default="build/diffloco")
    ap.add_argument("--episodes", type=int, default=1000)
    ap.add_argument("--envs", type=int, default=100)
    ap.add_argument("--md", help="also write the table (markdown) here")
    ap.add_argument("--json", help="also write every evaluation (JSON) here")
    ap.add_argument("--cache", help="folder of earlier evaluations (<run>.own.json, <run>.hard.json)")
    a = ap.parse_args()

    groups, evals = {}, {}
    for run in a.runs:
        c = trained_contact(run)
        own = evaluate(a.diffloco, run, None, a.episodes, a.envs, a.cache)
        hard = own if c == "hard" else evaluate(a.diffloco, run, "hard", a.episodes, a.envs, a.cache)
        groups.setdefault(c, []).append((own, hard))
        evals[run] = {"trained": c, "own": own, "hard": hard}
        print(f"{run}: {c}: own {own['return_mean']:.0f} / {own['length_s_mean']:.2f} s, "
              f"hard {hard['return_mean']:.0f} / {hard['length_s_mean']:.2f} s "
              f"({hard['forward_velocity_mean']:.3f} m/s, {hard['falls']:.0f} falls)",
              file=sys.stderr)

    def cell(rows, key, fmt):
        m, s = mean_std([r[key] for r in rows])
        return f"{m:{fmt}} ± {s:{fmt}}"

    lines = ["| trained with | runs | return (own) | length s (own) | return (hard) | "
             "length s (hard) | hard / own return | speed m/s (hard) | falls (hard) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in ["soft", "hard", "smoothed", "straight_through"]:
        if c not in groups:
            continue
        own = [o for o, _ in groups[c]]
        hard = [h for _, h in groups[c]]
        ratio = mean_std([h["return_mean"] / o["return_mean"] for o, h in groups[c]])
        falls = sum(h["falls"] for h in hard)
        eps = sum(h["episodes"] for h in hard)
        lines.append(
            f"| {c} | {len(own)} | {cell(own, 'return_mean', '.0f')} | "
            f"{cell(own, 'length_s_mean', '.2f')} | {cell(hard, 'return_mean', '.0f')} | "
            f"{cell(hard, 'length_s_mean', '.2f')} | {ratio[0]:.1%} | "
            f"{cell(hard, 'forward_velocity_mean', '.3f')} | {falls:.0f} / {eps:.0f} |")
    table = "\n".join(lines)
    print(table)
    if a.md:
        open(a.md, "w").write(table + "\n")
    if a.json:
        json.dump(evals, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
