#!/usr/bin/env python3
"""The README's walk and velocity tables from the evaluation files in docs/data/shipped/.

usage: tools/tables/shipped_tables.py walk EVAL.jsonl SHIPPED_SEED PRETRAINED_FILE
       tools/tables/shipped_tables.py velocity EVAL.jsonl SHIPPED_SEED PRETRAINED_FILE
       tools/tables/shipped_tables.py sim-to-sim SIM_TO_SIM.jsonl   the two MuJoCo programs side by side
EVAL.jsonl is what tools/reproduce/shipped_eval.sh writes (one JSON object per line: training_seed,
engine, eval_seed, result), for every training seed; SIM_TO_SIM.jsonl what
tools/reproduce/sim_to_sim_eval.sh writes (options, dt, engine, result). Ranges are over the eval
seeds; a pooled RMS is the root of the eval seeds' mean square (each eval seed holds the same number
of episodes)."""
import json
import math
import sys


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def load(path):
    runs = {}
    for r in records(path):
        run = runs.setdefault(r["training_seed"], {"diffloco": {}, "mujoco": None})
        if r["engine"] == "mujoco":
            run["mujoco"] = r["result"]
        else:
            run["diffloco"][r["eval_seed"]] = r["result"]
    return runs


def falls(results):
    return f'{sum(r["falls"] for r in results)} / {sum(r["episodes"] for r in results)}'


def span(values, unit, digits=3):
    return f"{min(values):.{digits}f}-{max(values):.{digits}f} {unit}"


def pooled(values):
    return math.sqrt(sum(v * v for v in values) / len(values))


def label(seed, shipped, pretrained):
    return f"{seed} (`{pretrained}`)" if seed == shipped else str(seed)


def walk(runs, shipped, pretrained):
    print("| training seed | falls in hard contact (eval seeds 0-9; 10-49) | forward speed "
          "(eval seeds 0-9) | MuJoCo, dt 0.002 s (MuJoCo's default options) |")
    print("|---|---|---|---|")
    for seed, run in sorted(runs.items()):
        first = [r for m, r in run["diffloco"].items() if m < 10]
        rest = [r for m, r in run["diffloco"].items() if m >= 10]
        hard = falls(first) + (f"; {falls(rest)}" if rest else "")
        speed = span([r["forward_velocity_mean"] for r in first], "m/s")
        mj = run["mujoco"]
        mujoco = (f'{mj["falls"]} / {mj["episodes"]} falls, {mj["forward_velocity_mean"]:.3f} m/s'
                  if mj else "")
        print(f"| {label(seed, shipped, pretrained)} | {hard} | {speed} | {mujoco} |")


def velocity(runs, shipped, pretrained):
    print("| training seed | falls in hard contact | lin. velocity RMS (pooled) | yaw rate RMS "
          "(pooled) | MuJoCo, dt 0.005 s (MuJoCo's default options) |")
    print("|---|---|---|---|---|")
    for seed, run in sorted(runs.items()):
        res = list(run["diffloco"].values())
        lin = [r["lin_vel_rms"] for r in res]
        yaw = [r["yaw_rate_rms"] for r in res]
        mj = run["mujoco"]
        mujoco = (f'{mj["falls"]} / {mj["episodes"]} falls, {mj["lin_vel_rms"]:.3f} m/s, '
                  f'{mj["yaw_rate_rms"]:.3f} rad/s' if mj else "")
        print(f"| {label(seed, shipped, pretrained)} | {falls(res)} | "
              f"{span(lin, 'm/s')} ({pooled(lin):.3f}) | {span(yaw, 'rad/s')} ({pooled(yaw):.3f}) | "
              f"{mujoco} |")


OPTIONS = {"defaults": "defaults", "rk4": "`--integrator RK4` / `rk4`"}


def outcome(r):
    if "lin_vel_rms" in r and r["lin_vel_rms"] is not None:
        return f'{r["falls"]} falls, {r["lin_vel_rms"]:.4f} m/s, {r["yaw_rate_rms"]:.4f} rad/s'
    return f'{r["falls"]} falls, {r["forward_velocity_mean"]:.4f} m/s'


def sim_to_sim(path):
    rows, versions = {}, {}
    for r in records(path):
        rows.setdefault((r["options"], r["dt"]), {})[r["engine"]] = r["result"]
        engine = r["result"].get("engine")  # ours: "MuJoCo 4.0.0, ..."; the deployer's: {"mujoco": ...}
        version = engine["mujoco"] if isinstance(engine, dict) else engine.split(",")[0].split()[-1]
        versions.setdefault(r["engine"], set()).add(version)
    name = {k: "/".join(sorted(v)) for k, v in versions.items()}
    print(f"| options | dt | `diffloco eval --engine mujoco` (MuJoCo {name.get('diffloco', '?')}) | "
          f"reference deployer (MuJoCo {name.get('deployer', '?')}) |")
    print("|---|---|---|---|")
    for (options, dt), e in rows.items():
        cells = [outcome(e[k]) if k in e else "" for k in ("diffloco", "deployer")]
        print(f"| {OPTIONS.get(options, options)} | {dt:g} s | {cells[0]} | {cells[1]} |")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "sim-to-sim":
        return sim_to_sim(sys.argv[2])
    if len(sys.argv) != 5 or sys.argv[1] not in ("walk", "velocity"):
        sys.exit(__doc__)
    table = walk if sys.argv[1] == "walk" else velocity
    table(load(sys.argv[2]), int(sys.argv[3]), sys.argv[4])


if __name__ == "__main__":
    main()
