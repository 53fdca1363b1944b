"""Per-step tracking kernels of ANYmal velocity runs (docs/velocity_tracking.{csv,png}).
usage: velocity_tracking_plot.py OUT.csv OUT.png "LABEL=RUN_FOLDER:W_LIN:W_YAW" ...
W_LIN, W_YAW: the run's lin_vel_tracking and ang_vel_tracking weights (the kernels are the terms
divided by them). Writes run*.dat and plot.gp in the current folder, then run gnuplot plot.gp.
docs/velocity_tracking.png shows five runs of configs/velocity_anymal_shac.yaml with Table 9's
window (docs/velocity_anymal.md): Table 7's weights (1.0, 0.5) over a 3000-iteration schedule,
the same with init std 0.7, without the foot-height term, over the 20 000-iteration schedule, and
3x the tracking weights (3.0, 1.5)."""
import csv, sys
if len(sys.argv) < 4:
    sys.exit(__doc__)
runs = []
for spec in sys.argv[3:]:
    label, rest = spec.split("=", 1)
    path, wl, wa = rest.rsplit(":", 2)
    runs.append((path, label, float(wl), float(wa)))
# per-step tracking rewards (term / weight / episode steps) of finished episodes, averaged per 250 iterations
rows = {}
for path, label, wl, wa in runs:
    acc = {}
    for r in csv.DictReader(open(path + "/metrics.csv")):
        if not r["Episode/rew_lin_vel_tracking"]: continue
        it = int(r["iteration"]); b = (it - 1) // 250
        steps = float(r["Episode/length_s"]) / 0.02
        a = acc.setdefault(b, [0, 0, 0])
        a[0] += float(r["Episode/rew_lin_vel_tracking"]) / wl / steps
        a[1] += float(r["Episode/rew_ang_vel_tracking"]) / wa / steps
        a[2] += 1
    for b, (l, a, n) in sorted(acc.items()):
        rows.setdefault(label, []).append((b * 250 + 125, l / n, a / n))
with open(sys.argv[1], "w") as f:
    f.write("# per-step tracking kernels exp(-e^2/0.25) of finished training episodes, mean per 250 iterations\n")
    f.write("run,iteration,lin_vel_kernel,yaw_rate_kernel\n")
    for label, pts in rows.items():
        for it, l, a in pts: f.write(f'"{label}",{it},{l:.4f},{a:.4f}\n')
plots = []
BLACK = 'lc rgb "black"'
for i, (label, pts) in enumerate(rows.items()):
    with open(f"run{i}.dat", "w") as f:
        for it, l, a in pts: f.write(f"{it} {l} {a}\n")
    plots.append((f"run{i}.dat", label))
with open("plot.gp", "w") as f:
    f.write(f'set terminal pngcairo size 1200,460 font ",10"\nset output "{sys.argv[2]}"\n')
    f.write('set multiplot layout 1,2\nset xlabel "iteration"\nset key bottom right\nset yrange [0:1]\n')
    f.write('set ytics 0.2\nset grid\n')
    f.write('set title "linear velocity: exp(-|v_{xy} - v^*_{xy}|^2 / 0.25) per step"\n')
    f.write("plot " + ", ".join(f'"{d}" u 1:2 w l lw 2 {BLACK if "x3" in l else ""} t "{l}"' for d, l in plots) + "\n")
    f.write('set title "yaw rate: exp(-(w_z - w^*_z)^2 / 0.25) per step"\n')
    f.write("plot " + ", ".join(f'"{d}" u 1:3 w l lw 2 {BLACK if "x3" in l else ""} t "{l}"' for d, l in plots) + "\n")
    f.write("unset multiplot\n")
