#!/usr/bin/env python3
"""The tables of docs/gpu.md from gpu_check's JSON files (docs/data/gpu/).

  tools/tables/gpu_tables.py parity RUN.json        parity of the step and the VJP, per case
  tools/tables/gpu_tables.py speed RUN.json         forward, fused forward + VJP, on the GPU per size
  tools/tables/gpu_tables.py legs A.json B.json C.json [--worlds 65536]
                                             forward and fused VJP of runs side by side
  tools/tables/gpu_tables.py cpu RUN.json           CPU microseconds per step and VJP
  tools/tables/gpu_tables.py bench BENCH.json       the batch runner in `diffloco bench --json`
  tools/tables/gpu_tables.py states RUN.json FEET.json
                                             recorded states (gpu_check --states): contact sets,
                                             and forward / fused VJP with and without leg spheres
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def rel(d):
    return f"{d['max_rel']:.1e} ({d['worlds_over_1e-10']})"


def parity(run):
    print("| case | worlds with a leg sphere touching / most spheres touching | failed (CPU, GPU) "
          "| step: GPU vs CPU | VJP: GPU fused vs CPU |")
    print("|---|---|---|---|---|")
    vjp = {p["case"]: p for p in run["vjp_parity"]}
    for p in run["parity"]:
        v = vjp[p["case"]]
        failed = f"{p['failed_fixed']}, {p.get('failed_gpu', '-')} / {v['failed_fixed']}, " \
                 f"{v.get('failed_gpu', '-')}"
        print(f"| {p['case']} | {p['start_leg_touching']} / {p['start_most_spheres_touching']} | "
              f"{failed} | {rel(p['gpu_vs_cpu_fixed'])} | {rel(v['gpu_fused_vs_cpu_fixed'])} |")


def rate(x):
    return f"{x / 1e6:.2f} M" if x < 1e7 else f"{x / 1e6:.1f} M"


def speed(run):
    fwd = [t for t in run["gpu_timing"] if t["threads_per_block"] == 128 and t["register_cap"] == 0]
    sizes = sorted({t["worlds"] for t in fwd})
    cases = list(dict.fromkeys(t["case"] for t in fwd))
    vjp = {(t["case"], t["worlds"]): t for t in run["vjp_gpu_timing"]}
    print("| forward / fused forward + VJP | " + " | ".join(f"{n:,}".replace(",", " ") + " worlds"
                                                           for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for c in cases:
        cells = []
        for n in sizes:
            t = next(t for t in fwd if t["case"] == c and t["worlds"] == n)
            v = vjp.get((c, n))
            cell = f"{rate(t['world_steps_per_s'])} ({t['ms_per_step']:.3f} ms)"
            if v:
                cell += f" / {rate(v['steps_per_s_fused_forward_vjp'])} " \
                        f"({v['ms_fused_forward_vjp']:.2f} ms, x{v['ratio_fused_to_forward']:.1f})"
            cells.append(cell)
        print(f"| {c} | " + " | ".join(cells) + " |")


def legs(paths, worlds):
    runs = [load(p) for p in paths]
    print("| case | " + " | ".join(p.split("/")[-1] for p in paths) + " |")
    print("|---|" + "---|" * len(runs))
    for c in [t["case"] for t in runs[0]["vjp_gpu_timing"] if t["worlds"] == worlds]:
        found = [[t for t in r["vjp_gpu_timing"] if t["case"] == c and t["worlds"] == worlds]
                 for r in runs]
        if not all(found):  # a case some of the runs do not have
            continue
        cells = []
        for v in (f[0] for f in found):
            cells.append(f"{v['ms_forward']:.2f} / {v['ms_fused_forward_vjp']:.2f} ms")
        print(f"| {c} | " + " | ".join(cells) + " |")


def cpu(run):
    fwd = {t["case"]: t for t in run.get("cpu_timing", [])}
    print("| case | step [us] | VJP, forward recomputed [us] |")
    print("|---|---|---|")
    for v in run["vjp_cpu_timing"]:
        f = fwd.get(v["case"])
        step = f"{f['fixed_us_median']:.2f}" if f else "-"
        print(f"| {v['case']} | {step} | {v['fixed_vjp_us_median']:.2f} |")


def bench(run):
    print("| case | batch step [us per world] | batch VJP [us per world] |")
    print("|---|---|---|")
    for case in ("hard", "smoothed", "hard_terrain", "smoothed_terrain"):
        print(f"| {case} | {run['batch_step_us_fixed_' + case]:.2f} | "
              f"{run['batch_vjp_us_fixed_' + case]:.2f} |")
    k = "shac_iteration_velocity_rough"
    print(f"| SHAC iteration, rough config [s] | {run['shac_iteration_s_velocity_rough']:.3f} | "
          f"of which the actor's backward: {run[k + '_actor_backward_s']:.3f} |")


def states(legs_run, feet_run):
    print("| states, model | spheres in the problem: mean, max | worlds | with leg spheres: "
          "forward / fused forward + VJP | the same sorted by contact count | feet alone | "
          "legs' cost (unsorted) |")
    print("|---|---|---|---|---|---|---|")
    feet = {(r["states"], m["model"]): m for r in feet_run["recorded_states"] for m in r["models"]}
    for r in legs_run["recorded_states"]:
        for m in r["models"]:
            f = feet[(r["states"], m["model"])]
            for t, u in zip(m["gpu_timing"], f["gpu_timing"]):
                if t["worlds"] not in (16384, 65536):
                    continue
                print(f"| {r['states']}, {m['model']} | {m['spheres_in_problem_mean']:.2f}, "
                      f"{m['spheres_in_problem_max']} | {t['worlds']} | "
                      f"{rate(t['steps_per_s_forward'])} / {rate(t['steps_per_s_fused_forward_vjp'])} | "
                      f"{rate(t['worlds'] / t['ms_forward_sorted_by_contacts'] * 1e3)} / "
                      f"{rate(t['worlds'] / t['ms_fused_forward_vjp_sorted_by_contacts'] * 1e3)} | "
                      f"{rate(u['steps_per_s_forward'])} / {rate(u['steps_per_s_fused_forward_vjp'])} | "
                      f"x{t['ms_forward'] / u['ms_forward']:.2f} / "
                      f"x{t['ms_fused_forward_vjp'] / u['ms_fused_forward_vjp']:.2f} |")


def main(argv):
    if len(argv) > 3 and argv[1] == "states":
        states(load(argv[2]), load(argv[3]))
        return
    if len(argv) < 3 or argv[1] not in ("parity", "speed", "legs", "cpu", "bench"):
        sys.exit(__doc__)
    if argv[1] == "legs":
        worlds = 65536
        paths = [a for a in argv[2:] if not a.startswith("--worlds")]
        for a in argv[2:]:
            if a.startswith("--worlds="):
                worlds = int(a.split("=", 1)[1])
        legs(paths, worlds)
    else:
        {"parity": parity, "speed": speed, "cpu": cpu, "bench": bench}[argv[1]](load(argv[2]))


if __name__ == "__main__":
    main(sys.argv)
