#!/usr/bin/env python3
"""Times a training config's iteration from a trained checkpoint, per variant and per build.

  python3 tools/reproduce/iteration_time_ab.py --checkpoint RUN/model_15000.pt \\
      --build new=build/diffloco --build old=OTHER/diffloco \\
      --variant default= --variant closest="task.sim.terrain_contact=closest" \\
      --rounds 2 --csv OUT.csv

Each round runs every (variant, build) pair once, alternating, with `diffloco train CONFIG
--set init_from=CHECKPOINT --set shac.iterations=N` plus the variant's `--set`s (space-separated
key=value pairs), and takes the median of `Perf/iteration_time` over the iterations after the
first `--skip` (warm-up). Run it with nothing else on the machine. `--copies NAME=N` runs variant
NAME as N trainings at once (each pair of a round starts its copies together and waits for all),
e.g. `--variant alone= --variant pair="run.sim_threads=1" --copies pair=2`: what runs side by
side cost each other. The CSV has one row per run (round, variant, build, copies, the median
seconds of an iteration, the mean over the copies, and the copies' iterations per second
together) and the table printed at the end gives, per variant, each build's median over the
rounds, the ratio to the first variant of the same build and the iterations per second of all
copies together.
"""
import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def parse_pairs(items, flag):
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            sys.exit(f"{flag} {item!r}: expected NAME=VALUE")
        out.append((name, value))
    return out


def median_iteration_time(run_parent, skip):
    runs = sorted(p for p in Path(run_parent).iterdir() if p.is_dir())
    if len(runs) != 1:
        sys.exit(f"expected one run folder in {run_parent}, found {len(runs)}")
    with open(runs[0] / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
    times = [float(r["Perf/iteration_time"]) for r in rows if int(r["iteration"]) > skip]
    if not times:
        sys.exit(f"{runs[0]}/metrics.csv: no iterations after the first {skip}")
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--checkpoint", required=True, help="model_<iter>.pt the runs start from")
    ap.add_argument("--config", default="configs/velocity_anymal_rough_shac.yaml")
    ap.add_argument("--build", action="append", required=True, help="NAME=path to diffloco")
    ap.add_argument("--variant", action="append", required=True,
                    help="NAME=key=value key=value ... (the --sets of that variant; may be empty)")
    ap.add_argument("--copies", action="append", default=[],
                    help="NAME=N: variant NAME runs as N trainings at once (default 1)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--skip", type=int, default=10)
    ap.add_argument("--csv", required=True)
    a = ap.parse_args()
    if a.iterations <= a.skip:
        sys.exit("--iterations must exceed --skip")
    builds = parse_pairs(a.build, "--build")
    variants = parse_pairs(a.variant, "--variant")
    copies = {name: 1 for name, _ in variants}
    for name, n in parse_pairs(a.copies, "--copies"):
        if name not in copies or not n.isdigit() or int(n) < 1:
            sys.exit(f"--copies {name}={n}: expected a variant's name and a count >= 1")
        copies[name] = int(n)
    for name, path in builds:
        if not Path(path).is_file():
            sys.exit(f"--build {name}: {path} is not a file")
    if not Path(a.checkpoint).is_file():
        sys.exit(f"--checkpoint: {a.checkpoint} is not a file")

    rows = []
    for r in range(a.rounds):
        for vname, sets in variants:
            for bname, binary in builds:
                n = copies[vname]
                with tempfile.TemporaryDirectory() as parent:
                    outs = [Path(parent) / str(i) for i in range(n)]
                    procs = []
                    for out in outs:
                        cmd = [binary, "train", a.config, "--out", str(out),
                               "--set", f"init_from={a.checkpoint}",
                               "--set", f"shac.iterations={a.iterations}"]
                        for kv in sets.split():
                            cmd += ["--set", kv]
                        # The log goes to a file, not a pipe: a copy whose pipe nobody reads
                        # while another is waited for would block on a full pipe and time that.
                        log = Path(f"{out}.log")
                        with open(log, "w") as f:
                            procs.append((cmd, log, subprocess.Popen(cmd, stdout=f,
                                                                     stderr=subprocess.STDOUT)))
                    for cmd, log, proc in procs:
                        if proc.wait() != 0:
                            for _, _, other in procs:  # no copy outlives the failed one
                                other.kill()
                                other.wait()
                            # the log is where diffloco reports errors
                            sys.exit(f"{' '.join(cmd)} failed:\n{log.read_text()[-2000:]}")
                    t = statistics.mean(median_iteration_time(out, a.skip) for out in outs)
                rows.append({"round": r, "variant": vname, "build": bname, "copies": n,
                             "median_s": t, "iterations_per_s": n / t})
                print(f"round {r} {vname:>20} {bname:>10}: {t:.4f} s", flush=True)

    tmp = Path(a.csv).with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["round", "variant", "build", "copies", "median_s",
                                          "iterations_per_s"])
        w.writeheader()
        w.writerows(rows)
    tmp.replace(a.csv)

    def med(v, b):
        return statistics.median(x["median_s"] for x in rows if x["variant"] == v and x["build"] == b)

    first = variants[0][0]
    print("| variant | " + " | ".join(f"{b} [s] (over {first}), iterations per s" for b, _ in builds)
          + " |")
    print("|---|" + "---|" * len(builds))
    for vname, _ in variants:
        n = copies[vname]
        cells = [f"{med(vname, b):.3f} ({med(vname, b) / med(first, b):.2f}), "
                 f"{n / med(vname, b):.2f}" for b, _ in builds]
        print(f"| {vname} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
