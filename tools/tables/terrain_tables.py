#!/usr/bin/env python3
"""docs/terrain.md's result tables from the evaluation files in docs/data/terrain/.

usage: tools/tables/terrain_tables.py COMMAND ARGUMENTS, one of:
  terrain EVAL.jsonl
      per-terrain table of one policy
  readme EVAL.jsonl [LABEL=EVAL2.jsonl]
      the README's table (terrains as columns; EVAL2 adds ours' falls as LABEL)
  seeds LABEL=EVAL.jsonl ...
      falls and lin. RMS per seed (ours)
  engines LABEL=EVAL.jsonl ...
      falls and lin. RMS per file (ours), then MuJoCo's from the files that have its rows
  robustness LABEL=FILE.jsonl ...
      robustness table, one column pair per file (MuJoCo, ours)
  flat [--conditions A,B] LABEL=FILE.jsonl ...
      the flat floor at nominal conditions (the files' "nominal" rows; or conditions A, B), a row
      per file and condition: ours and MuJoCo
  training LABEL=METRICS.csv ...
      when each training run walked
  commands LABEL=EVAL.jsonl ...
      falls and lin. RMS by command, per terrain type and file
  checkpoints EVAL.jsonl
      falls and lin. RMS per checkpoint (rows with an "iteration"), a column pair per terrain type
  stairs LABEL=EVAL.jsonl[,EVAL2.jsonl...] ...
      a row per label: ours' falls down and up the hardest stairs per file (one file a seed) and
      their mean, and the falls on the other grounds
  swing LABEL=SWING.jsonl ...
      how high the feet swing, a row per file: the steps' peak clearance on each recorded ground
  climb LABEL=EVAL.jsonl ...
      legged_gym's last row, a column per file: falls and climbed in ours with their 95 % intervals,
      lin. RMS
  rise LABEL=LEVELS.jsonl ...
      stairs up level by level (velocity_rough's rises), a column per file: falls and climbed
  outsider EVAL.jsonl ...
      the reference deployer on MuJoCo's own grounds, a row per condition and a column per policy:
      falls, episodes across the step or stairs, lin. RMS, episodes beyond joint limits
The .jsonl files are what tools/reproduce/terrain_eval.sh, tools/reproduce/outsider_eval.sh,
tools/reproduce/robustness_eval.sh, tools/reproduce/command_split_eval.sh and
tools/reproduce/rough_policy_evals.sh's swing group write (one JSON object per line: engine,
terrain_type, condition or commands, result); the .csv files are training metrics (a run's
metrics.csv, or every 10th row of it)."""
import csv
import json
import math
import statistics
import sys

NAMES = {"none": "plane", "rough": "rough (+-8 cm)", "pyramid_slope": "slope down (25 %)",
         "pyramid_slope_inverted": "slope up (25 %)", "pyramid_stairs": "stairs down (12 cm)",
         "pyramid_stairs_inverted": "stairs up (12 cm)", "obstacles": "obstacles (10 cm)"}


def rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def by(path, key):
    out = {}
    for r in rows(path):
        out.setdefault(r[key], {})[r["engine"]] = r["result"]
    return out


def ours(r):
    return f'{r["falls"]} / {r["episodes"]}, {r["lin_vel_rms"]:.3f}, {r["yaw_rate_rms"]:.3f}'


def mujoco(r):
    return (f'{r["falls"]} / {r["episodes"]}, {r["lin_vel_rms"]:.3f}, {r["yaw_rate_rms"]:.3f}, '
            f'{r["episodes_beyond_joint_limits"]} ({r["joint_limit_excess_max"]:.2f})')


def falls_rms(r):
    return f'{r["falls"]} / {r["episodes"]}, {r["lin_vel_rms"]:.3f}' if r else ""


def terrain(path):
    print("| ground (hardest level) | ours, hard contact: falls, lin., yaw | MuJoCo: falls, lin., "
          "yaw, beyond limits |")
    print("|---|---|---|")
    for t, e in by(path, "terrain_type").items():
        print(f'| {NAMES.get(t, t)} | {ours(e["diffloco"]) if "diffloco" in e else ""} | '
              f'{mujoco(e["mujoco"]) if "mujoco" in e else ""} |')


SHORT = {"none": "plane", "rough": "rough, +-8 cm", "pyramid_slope": "slope down, 25 %",
         "pyramid_slope_inverted": "slope up, 25 %", "pyramid_stairs": "stairs down, 12 cm",
         "pyramid_stairs_inverted": "stairs up, 12 cm", "obstacles": "obstacles, 10 cm"}


def readme(path, *more):
    e = by(path, "terrain_type")
    types = list(e)
    print("| | " + " | ".join(SHORT.get(t, t) for t in types) + " |")
    print("|---" * (len(types) + 1) + "|")
    ours_n = e[types[0]]["diffloco"]["episodes"]
    print(f"| falls / {ours_n} (ours, hard contact) | "
          + " | ".join(str(e[t]["diffloco"]["falls"]) for t in types) + " |")
    print("| lin. RMS [m/s] | " + " | ".join(f'{e[t]["diffloco"]["lin_vel_rms"]:.3f}' for t in types)
          + " |")
    print("| yaw RMS [rad/s] | "
          + " | ".join(f'{e[t]["diffloco"]["yaw_rate_rms"]:.3f}' for t in types) + " |")
    for label, other in labelled(more):
        o = by(other, "terrain_type")
        n = o[types[0]]["diffloco"]["episodes"]
        print(f"| falls / {n} (ours, {label}) | "
              + " | ".join(str(o[t]["diffloco"]["falls"]) for t in types) + " |")
    if all("mujoco" in e[t] for t in types):
        mj_n = e[types[0]]["mujoco"]["episodes"]
        print(f"| falls / {mj_n} (MuJoCo) | "
              + " | ".join(str(e[t]["mujoco"]["falls"]) for t in types) + " |")


def labelled(args):
    for a in args:
        if "=" not in a or not a.split("=", 1)[1]:
            sys.exit(f"terrain_tables.py: '{a}' is not LABEL=FILE")
    return [a.split("=", 1) for a in args]


def seeds(args):
    files = [(label, by(path, "terrain_type")) for label, path in labelled(args)]
    print("| ground (hardest level) | " + " | ".join(f"{l}: falls, lin. RMS" for l, _ in files) + " |")
    print("|---" * (len(files) + 1) + "|")
    for t in files[0][1]:
        cells = []
        for _, f in files:
            cells.append(falls_rms(f.get(t, {}).get("diffloco")))
        print(f"| {NAMES.get(t, t)} | " + " | ".join(cells) + " |")


def engines(args):
    files = [(label, by(path, "terrain_type")) for label, path in labelled(args)]
    print("| ground (hardest level) | " + " | ".join(f"ours, {l}: falls, lin. RMS" for l, _ in files)
          + " | MuJoCo: falls, lin. RMS |")
    print("|---" * (len(files) + 2) + "|")
    for t in files[0][1]:
        cells, mj = [], ""
        for _, f in files:
            cells.append(falls_rms(f.get(t, {}).get("diffloco")))
            mj = falls_rms(f.get(t, {}).get("mujoco")) or mj
        print(f"| {NAMES.get(t, t)} | " + " | ".join(cells) + f" | {mj} |")


def robustness(args):
    files = [(label, by(path, "condition")) for label, path in labelled(args)]
    # MuJoCo columns only where some file has MuJoCo rows (ENGINES=diffloco writes none).
    mujoco = any("mujoco" in r for _, f in files for r in f.values())
    head = []
    for label, _ in files:
        head += [f"{label}, MuJoCo: falls, lin. RMS, beyond limits"] if mujoco else []
        head += [f"{label}, ours (hard)"]
    print("| condition | " + " | ".join(head) + " |")
    print("|---" * (len(head) + 1) + "|")
    for c in files[0][1]:
        cells = []
        for _, f in files:
            m, o = f.get(c, {}).get("mujoco"), f.get(c, {}).get("diffloco")
            if mujoco:
                cells.append(f'{m["falls"]} / {m["episodes"]}, {m["lin_vel_rms"]:.3f}, '
                             f'{m["episodes_beyond_joint_limits"]}' if m else "")
            cells.append(falls_rms(o))
        print(f"| {c} | " + " | ".join(cells) + " |")


def flat(args):
    conditions = ["nominal"]
    if args and args[0] == "--conditions":
        conditions, args = args[1].split(","), args[2:]
    print("| policy | ours (hard): falls, lin. RMS, yaw RMS | MuJoCo: falls, lin. RMS, yaw RMS |")
    print("|---|---|---|")
    for label, path in labelled(args):
        for c in conditions:
            e = by(path, "condition")[c]
            name = label if conditions == ["nominal"] else f"{label}, {c}"
            print(f'| {name} | {ours(e["diffloco"]) if "diffloco" in e else ""} | '
                  f'{ours(e["mujoco"]) if "mujoco" in e else ""} |')


COMMANDS = {"task": "the task's (x, y, yaw in [-1, 1])", "forward_fast": "forward, 0.5-1 m/s",
            "forward_slow": "forward, 0-0.5 m/s", "backward_fast": "backward, 0.5-1 m/s",
            "backward_slow": "backward, 0-0.5 m/s", "sideways": "sideways, up to 1 m/s",
            "turning": "turning on the spot, up to 1 rad/s", "half_range": "every command within +-0.5"}


def commands(args):
    files = []
    for label, path in labelled(args):
        table = {}
        for r in rows(path):
            table.setdefault(r["commands"], {})[r["terrain_type"]] = r["result"]
        files.append((label, table))
    types = list(next(iter(files[0][1].values())))
    head = [f"{l}, {NAMES.get(t, t)}: falls, lin. RMS" for l, _ in files for t in types]
    print("| commands | " + " | ".join(head) + " |")
    print("|---" * (len(head) + 1) + "|")
    for c in files[0][1]:
        cells = []
        for _, f in files:
            for t in types:
                r = f.get(c, {}).get(t)
                cells.append(falls_rms(r))
        print(f"| {COMMANDS.get(c, c)} | " + " | ".join(cells) + " |")


def walks_from(rows, level=0.1):
    """First logged iteration from which the mean terrain level stays above `level` to the end."""
    first = None
    for r in rows:
        if float(r["Curriculum/terrain_level"]) > level:
            first = first or int(r["iteration"])
        else:
            first = None
    return first


def mean_abs_action(rows, lo=100, hi=500, weight=0.05, env_dt=0.02, joints=12):
    """Median over iterations [lo, hi] of the episodes' mean |action| per joint and step, from the
    action_l1 reward (weight x sum_i |a_i| per step, summed over the episode)."""
    per = []
    for r in rows:
        if lo <= int(r["iteration"]) <= hi and r["Episode/rew_action_l1"] and r["Episode/length_s"]:
            steps = float(r["Episode/length_s"]) / env_dt
            per.append(-float(r["Episode/rew_action_l1"]) / (weight * steps * joints))
    return statistics.median(per) if per else float("nan")


def training(args):
    print("| run | walks (mean terrain level > 0.1 for good) from iteration | mean terrain level, "
          "last 100 iterations | mean abs. action per joint, iterations 100-500 |")
    print("|---|---|---|---|")
    for label, path in labelled(args):
        with open(path) as f:
            rows = list(csv.DictReader(f))
        last = int(rows[-1]["iteration"])
        start = walks_from(rows)
        end = [float(r["Curriculum/terrain_level"]) for r in rows if int(r["iteration"]) > last - 100]
        print(f"| {label} | {start if start else f'not by {last}'} | "
              f"{statistics.mean(end):.2f} (at {last}) | {mean_abs_action(rows):.2f} |")


def stairs(args):
    print("| run | falls in 1000 down the stairs (12 cm), per seed (mean) | up the stairs (12 cm), "
          "per seed (mean) | the other grounds together, per seed |")
    print("|---|---|---|---|")
    for label, paths in labelled(args):
        down, up, other = [], [], []
        for path in paths.split(","):
            e = {t: r["diffloco"] for t, r in by(path, "terrain_type").items() if "diffloco" in r}
            for t in ("pyramid_stairs", "pyramid_stairs_inverted"):
                if t not in e or e[t]["episodes"] != 1000:
                    sys.exit(f"{path}: no 1000-episode row of ours on {t}")
            down.append(e["pyramid_stairs"]["falls"])
            up.append(e["pyramid_stairs_inverted"]["falls"])
            rest = [r["falls"] for t, r in e.items() if t not in ("pyramid_stairs",
                                                                  "pyramid_stairs_inverted")]
            other.append(str(sum(rest)) if len(rest) == 5 else "-")
        cell = lambda v: " / ".join(map(str, v)) + (f" ({statistics.mean(v):.0f})" if len(v) > 1
                                                    else "")
        print(f"| {label} | {cell(down)} | {cell(up)} | {' / '.join(other)} |")


def swing(args):
    files = [(label, by(path, "terrain_type")) for label, path in labelled(args)]
    types = list(dict.fromkeys(t for _, f in files for t in f))
    print("| policy | " + " | ".join(f"{NAMES.get(t, t)}: step height median (10-90 %) [cm], "
                                    "under 2 cm, steps per foot and s" for t in types) + " |")
    print("|---" * (len(types) + 1) + "|")
    for label, f in files:
        cells = []
        for t in types:
            r = f.get(t, {}).get("diffloco")
            if r is None or not r["all"]["steps"]:
                cells.append("")
                continue
            a = r["all"]
            cells.append(f"{100 * a['median_m']:.1f} ({100 * a['p10_m']:.1f}-{100 * a['p90_m']:.1f}), "
                         f"{100 * a['under_2cm']:.0f} %, {a['steps_per_s']:.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")


def checkpoints(path):
    table = {}
    for r in rows(path):
        table.setdefault(r["iteration"], {})[r["terrain_type"]] = r["result"]
    types = list(dict.fromkeys(t for per in table.values() for t in per))
    print("| iteration | " + " | ".join(f"{NAMES.get(t, t)}: falls, lin. RMS" for t in types) + " |")
    print("|---" * (len(types) + 1) + "|")
    for it in sorted(table):
        print(f"| {it} | " + " | ".join(falls_rms(table[it].get(t)) for t in types) + " |")


LAST_ROW = {"pyramid_slope": "slope down, 36 %", "pyramid_slope_inverted": "slope up, 36 %",
            "rough_slope": "rough slope down, 36 %", "pyramid_stairs": "stairs down, 21 cm",
            "pyramid_stairs_inverted": "stairs up, 21 cm", "obstacles": "obstacles, 23 cm"}


def wilson(k, n, z=1.96):
    """The 95 % Wilson score interval of a rate k / n, in per cent."""
    if n == 0:
        return float("nan"), float("nan")
    p, d = k / n, 1 + z * z / n
    mid, half = (p + z * z / (2 * n)) / d, z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return 100 * max(0.0, mid - half), 100 * min(1.0, mid + half)


def rate(k, n):
    lo, hi = wilson(k, n)
    return f"{k} / {n} ({lo:.0f}-{hi:.0f} %)"


def climb(args):
    """legged_gym's last row: per policy file, falls and climbed with their 95 % intervals."""
    files = labelled(args)
    tables = [(label, by(path, "terrain_type")) for label, path in files]
    types = [t for t in LAST_ROW if any(t in e for _, e in tables)]
    print("| ground (last row) | " + " | ".join(
        f"{label}: falls, climbed (95 % intervals), lin. RMS" for label, _ in tables) + " |")
    print("|---" * (len(tables) + 1) + "|")
    for t in types:
        cells = []
        for _, e in tables:
            r = e.get(t, {}).get("diffloco")
            cells.append(f'{rate(r["falls"], r["episodes"])}, {rate(r["climbed"], r["episodes"])}, '
                         f'{r["lin_vel_rms"]:.3f}' if r else "-")
        print(f"| {LAST_ROW[t]} | " + " | ".join(cells) + " |")


def rise(args):
    """Stairs up level by level (velocity_rough: rise 0.05 + 0.018 level m), a column per file:
    falls and climbed with their 95 % intervals."""
    files = [(label, {r["level"]: r["result"] for r in rows(path)}) for label, path in labelled(args)]
    levels = sorted({lv for _, f in files for lv in f})
    print("| level: rise | " + " | ".join(f"{label}: falls, climbed" for label, _ in files) + " |")
    print("|---" * (len(files) + 1) + "|")
    for lv in levels:
        cells = [f'{rate(f[lv]["falls"], f[lv]["episodes"])}, {rate(f[lv]["climbed"], f[lv]["episodes"])}'
                 if lv in f else "-" for _, f in files]
        print(f"| {lv}: {100 * (0.05 + 0.018 * lv):.1f} cm | " + " | ".join(cells) + " |")


def outsider(paths):
    table = {}
    for r in (r for path in paths for r in rows(path)):
        table.setdefault(r["condition"], {})[r["policy"]] = r["result"]
    policies = list(dict.fromkeys(p for per in table.values() for p in per))
    print("| condition | " + " | ".join(f"`{p}`: falls, crossed, lin. RMS, beyond limits"
                                       for p in policies) + " |")
    print("|---" * (len(policies) + 1) + "|")

    def cell(r):
        if r is None:
            return "-"
        crossed = f'{r["crossed"]} / {r["episodes"]}' if "crossed" in r else "-"
        return (f'{r["falls"]} / {r["episodes"]}, {crossed}, {r["lin_vel_rms"]:.3f}, '
                f'{r["joint_limit_episodes"]} ({r["joint_limit_excess_max"]:.2f})')
    for c in table:
        print(f"| {c} | " + " | ".join(cell(table[c].get(p)) for p in policies) + " |")


def main():
    one_file = {"terrain": terrain, "checkpoints": checkpoints}
    many_files = {"seeds": seeds, "engines": engines, "robustness": robustness, "flat": flat,
                  "training": training, "commands": commands, "stairs": stairs, "swing": swing,
                  "outsider": outsider, "climb": climb, "rise": rise}
    if len(sys.argv) < 3 or sys.argv[1] not in (*one_file, *many_files, "readme"):
        sys.exit(__doc__)
    mode, args = sys.argv[1], sys.argv[2:]
    if mode in one_file:
        one_file[mode](args[0])
    elif mode == "readme":
        readme(*args)
    else:
        many_files[mode](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
