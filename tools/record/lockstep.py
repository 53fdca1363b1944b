"""One control period at a time in our simulator from MuJoCo's states: where the engines part.

Reads a trace of the reference deployer (`runtime/examples/mujoco_deployer.py ... --trace
FILE.npz`: per control decision MuJoCo's qpos and qvel and the joint targets held for the next
control period, and the ground's geoms), rebuilds the ground as our height field (the deployer's
boxes sampled every --spacing m, the riser between two samples as our terrain joins them), and for
every decision k sets our state to MuJoCo's, steps our simulator through the control period with
the same targets (the trace's MuJoCo step, hard contact, the policy file's drive, friction,
Gauss-Seidel sweeps, terrain contact and interpolant) and compares with MuJoCo's state at k + 1
(with --periods K: K periods, each with the targets MuJoCo held then, compared at k + K).

Each decision is classified by what the feet touch at k, from the boxes (the true geometry):
  air     the foot's sphere more than 2 cm above every ground within r + 2 cm horizontally;
  riser   a higher tread within r + 2 cm horizontally and the sphere's bottom below its top (the
          foot beside or against a riser);
  edge    otherwise within r + 2 cm of a change of height (on or over a step's edge);
  tread   the ground flat within r + 2 cm.
A decision is `riser` if a foot is, else `edge`, else `tread`, else `air`. Errors are ours minus
MuJoCo's at k + 1 (k + K): base height and velocity (world linear, base-axes angular), joint
velocities, and per foot its centre's position and velocity (world), the feet pooled by their own
class. Feet beside a riser are split further by what they overlap: MuJoCo's box, our surface as
our closest-point search sees it, our surface hidden from that search, nothing of ours.

Conventions: MuJoCo's free joint qpos = world position, quaternion (w x y z); qvel[0:3] world
linear velocity of the base frame's origin, qvel[3:6] angular velocity in base axes: the rows of
our q and v (diffloco.Simulator), joints mapped by name.

    PYTHONPATH=build/python /usr/bin/python3 tools/record/lockstep.py TRACE.npz POLICY.pt \\
        --spacing 0.02 0.05 [--periods 1 5] --out lockstep.json

Debian's python3 (its torch is the one the module links).
"""
import argparse
import json
import math
import sys

import numpy as np
import torch
import yaml

import diffloco

NEAR = 0.02        # [m] "within r + 2 cm"
AIR = 0.02         # [m] clearance above which a foot is in the air
STEP = 0.01        # [m] a height change counted as a step
CLASSES = ("riser", "edge", "tread", "air")


def load_trace(path):
    t = np.load(path)
    header = json.loads(str(t["header"]))
    return header, {k: t[k] for k in t.files if k != "header"}


def box_ground(geoms):
    """The ground's height function H(x, y) from the trace's geoms (boxes axis-aligned, the plane
    z = its position): the highest top whose footprint (closed) holds the point."""
    boxes = []
    for g in geoms:
        if g["type"] == "box":
            if not np.allclose(g["quat"], [1, 0, 0, 0]):
                sys.exit("lockstep: a rotated box in the trace's ground")
            (px, py, pz), (sx, sy, sz) = g["pos"], g["size"]
            boxes.append((px - sx, px + sx, py - sy, py + sy, pz + sz))
        elif g["type"] == "plane":
            if not np.allclose(g["quat"], [1, 0, 0, 0]):
                sys.exit("lockstep: a tilted plane in the trace's ground")
            plane = g["pos"][2]
        else:
            sys.exit(f"lockstep: the trace's ground has a {g['type']}; boxes and a plane only")
    boxes = np.array(boxes)

    def riser_distance(c):
        """Distance from points c [m, 3] to the nearest box higher than the ground under them
        (the riser's box; inf where none)."""
        h0 = height(c[:, 0], c[:, 1])
        best = np.full(len(c), np.inf)
        for x0, x1, y0, y1, top in boxes:
            lo, hi = np.array([x0, y0, -1e3]), np.array([x1, y1, top])
            d = np.linalg.norm(np.maximum(0, np.maximum(lo - c, c - hi)), axis=1)
            best = np.where(top > h0 + STEP, np.minimum(best, d), best)
        return best

    def height(x, y):
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        h = np.full(np.broadcast(x, y).shape, plane)
        for x0, x1, y0, y1, top in boxes:
            inside = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
            h = np.where(inside, np.maximum(h, top), h)
        return h
    height.riser_distance = riser_distance
    return height


def sampled_field(height, spacing, half):
    """H sampled every `spacing` m over [-half, half]^2: heights [ny, nx], origin."""
    n = int(round(2 * half / spacing)) + 1
    xs = -half + spacing * np.arange(n)
    X, Y = np.meshgrid(xs, xs)  # rows along y
    return height(X, Y), (-half, -half)


def task_value(meta, section, key, default):
    task = yaml.safe_load(meta["task"]["yaml"])
    return (task.get(section) or {}).get(key, default)


def to_ours(sim, names, qpos_adr, qvel_adr, qpos, qvel):
    """MuJoCo rows -> our q, v (joints by name)."""
    order = [names.index(n) for n in sim.joint_names]
    q = np.concatenate([qpos[:, 0:7], qpos[:, qpos_adr[order]]], axis=1)
    v = np.concatenate([qvel[:, 0:6], qvel[:, qvel_adr[order]]], axis=1)
    return (torch.from_numpy(np.ascontiguousarray(q)), torch.from_numpy(np.ascontiguousarray(v)),
            order)


def quat_mul(a, b):
    w1, x1, y1, z1 = a.unbind(-1)
    w2, x2, y2, z2 = b.unbind(-1)
    return torch.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], -1)


def foot_velocities(sim, q, v, eps=1e-6):
    """World velocities of the foot centres at (q, v): the kinematics moved along v for eps
    (central difference; base angular velocity in base axes, q = q exp(w eps / 2))."""
    def moved(s):
        w = s * eps * v[:, 3:6]
        angle = w.norm(dim=1, keepdim=True)
        axis = torch.where(angle > 0, w / angle.clamp_min(1e-300), torch.zeros_like(w))
        dq = torch.cat([torch.cos(angle / 2), axis * torch.sin(angle / 2)], dim=1)
        return torch.cat([q[:, 0:3] + s * eps * v[:, 0:3], quat_mul(q[:, 3:7], dq),
                          q[:, 7:] + s * eps * v[:, 6:]], dim=1)
    return (sim.foot_positions(moved(1.0)) - sim.foot_positions(moved(-1.0))) / (2 * eps)


def classify_feet(height, feet, radius):
    """Each foot's situation (CLASSES) from the true ground: feet [n, F, 3] -> [n, F] indices."""
    n, F, _ = feet.shape
    reach = radius + NEAR
    angles = np.linspace(0, 2 * math.pi, 16, endpoint=False)
    offsets = [(0.0, 0.0)] + [(r * math.cos(a), r * math.sin(a))
                              for r in (reach / 3, 2 * reach / 3, reach) for a in angles]
    x, y, z = feet[..., 0], feet[..., 1], feet[..., 2]
    hs = np.stack([height(x + dx, y + dy) for dx, dy in offsets], axis=-1)
    h0, hmax, hmin = hs[..., 0], hs.max(-1), hs.min(-1)
    bottom = z - radius
    out = np.full((n, F), CLASSES.index("edge"))
    out[hmax - hmin < STEP] = CLASSES.index("tread")
    out[(hmax > h0 + STEP) & (bottom < hmax - 0.005)] = CLASSES.index("riser")
    out[bottom - hmax > AIR] = CLASSES.index("air")
    return out


def hidden_overlap(sim, feet, radius, step=0.001):
    """Where our closest-point search cannot see the ground that a foot's sphere overlaps: the
    overlap with our surface by brute force (the distance from the centre to the surface sampled
    every `step` m within r + 3 mm horizontally) against the overlap the search reports when it
    starts on a level patch (zero slope under the centre: Newton stays there, the depth is
    r - (c_z - h)). Returns (brute-force overlap [m], search overlap [m] or NaN off level patches)
    for feet [m, 3]."""
    reach = radius + 0.003
    g = torch.arange(-reach, reach + step / 2, step, dtype=torch.float64)
    dx, dy = torch.meshgrid(g, g, indexing="xy")
    dx, dy = dx.reshape(-1), dy.reshape(-1)
    f = torch.from_numpy(np.ascontiguousarray(feet))
    overlap = np.empty(len(f))
    for a in range(0, len(f), 256):
        c = f[a:a + 256]
        x, y = c[:, 0:1] + dx, c[:, 1:2] + dy
        h = sim.ground_height(x.contiguous(), y.contiguous())
        d = ((x - c[:, 0:1]) ** 2 + (y - c[:, 1:2]) ** 2 + (h - c[:, 2:3]) ** 2).sqrt()
        overlap[a:a + 256] = (radius - d.min(dim=1).values).numpy()
    e = 1e-4
    x, y = f[:, 0], f[:, 1]
    h0 = sim.ground_height(x, y)
    level = torch.ones(len(f), dtype=torch.bool)
    for ox, oy in ((e, 0), (-e, 0), (0, e), (0, -e)):
        level &= (sim.ground_height(x + ox, y + oy) - h0).abs() < 1e-12
    search = np.where(level.numpy(), radius - (f[:, 2] - h0).numpy(), np.nan)
    return overlap, search


def stats(x):
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return None
    return {"mean": float(x.mean()), "rms": float(np.sqrt((x ** 2).mean())),
            "p90_abs": float(np.quantile(np.abs(x), 0.9))}


def lockstep(header, tr, meta, spacing, half, interpolant, terrain_contact, threads, periods=1):
    height = box_ground(header["ground_geoms"])
    heights, origin = sampled_field(height, spacing, half)
    # Starts whose next `periods` decisions lie in the same episode (their targets held in turn).
    ok = np.isfinite(tr["target"]).all(axis=1)
    rows = len(ok)
    start = np.array([i for i in range(rows - periods)
                      if ok[i:i + periods].all()
                      and tr["episode"][i] == tr["episode"][i + periods]],
                     dtype=np.int64)
    n = len(start)
    sim = diffloco.Simulator(
        meta["robot"]["name"], num_worlds=n, contact="hard", dt=header["sim_dt"],
        iterations=int(meta["simulation"]["solver_iterations"]), friction=header["friction"],
        threads=threads, heights=torch.from_numpy(heights), spacing=spacing, origin=origin,
        interpolant=interpolant, terrain_contact=terrain_contact, actuator=meta["actuator"])
    names = header["joints"]
    q0, v0, order = to_ours(sim, names, tr["joint_qpos_adr"], tr["joint_qvel_adr"],
                            tr["qpos"][start], tr["qvel"][start])
    q1m, v1m, _ = to_ours(sim, names, tr["joint_qpos_adr"], tr["joint_qvel_adr"],
                          tr["qpos"][start + periods], tr["qvel"][start + periods])
    q, v = q0, v0
    failures = 0
    with torch.no_grad():
        for p in range(periods):
            target = torch.from_numpy(np.ascontiguousarray(tr["target"][start + p][:, order]))
            for _ in range(int(header["decimation"])):
                q, v = sim.step(q, v, target)
                failures += sim.last_failures
        feet0 = sim.foot_positions(q0).numpy()
        feet_ours, feet_mj = sim.foot_positions(q).numpy(), sim.foot_positions(q1m).numpy()
        fv_ours = foot_velocities(sim, q, v).numpy()
        fv_mj = foot_velocities(sim, q1m, v1m).numpy()
    radius = float(np.mean(meta["robot"]["foot_radius"]))
    foot_class = classify_feet(height, feet0, radius)
    decision_class = np.full(n, CLASSES.index("air"))
    for c in reversed(CLASSES):  # the first class in CLASSES that any foot has
        decision_class[(foot_class == CLASSES.index(c)).any(axis=1)] = CLASSES.index(c)
    dv = (v - v1m).numpy()
    base_lin, base_ang, joints = dv[:, 0:3], dv[:, 3:6], dv[:, 6:]
    foot_dp, foot_dv = feet_ours - feet_mj, fv_ours - fv_mj
    dz = (q[:, 2] - q1m[:, 2]).numpy()
    result = {"spacing": spacing, "periods": periods, "decisions": int(n),
              "failures": int(failures),
              "sampled_grid": [int(heights.shape[1]), int(heights.shape[0])],
              "decisions_by_class": {}, "feet_by_class": {}}
    for ci, c in enumerate(CLASSES):
        m = decision_class == ci
        if not m.any():
            continue
        result["decisions_by_class"][c] = {
            "count": int(m.sum()),
            "base_lin_vel_error": stats(np.linalg.norm(base_lin[m], axis=1)),
            "base_vz_error": stats(base_lin[m, 2]),
            "base_z_error": stats(dz[m]),
            "base_ang_vel_error": stats(np.linalg.norm(base_ang[m], axis=1)),
            "joint_vel_error_rms": stats(np.sqrt((joints[m] ** 2).mean(axis=1))),
            "mujoco_base_vz": stats(v1m.numpy()[m, 2]),
        }
        f = foot_class == ci
        if f.any():
            result["feet_by_class"][c] = {
                "count": int(f.sum()),
                "pos_error": stats(np.linalg.norm(foot_dp[f], axis=1)),
                "z_error": stats(foot_dp[f][:, 2]),
                "vel_error": stats(np.linalg.norm(foot_dv[f], axis=1)),
                "vz_error": stats(foot_dv[f][:, 2]),
                "vx_toward_riser_error": None,
                "mujoco_vz": stats(fv_mj[f][:, 2]),
            }
    # Feet against a riser: the horizontal velocity error along the direction to the higher
    # ground (positive: ours moves the foot into the riser faster than MuJoCo does).
    f = foot_class == CLASSES.index("riser")
    if f.any():
        x, y = feet0[..., 0][f], feet0[..., 1][f]
        best = np.zeros((f.sum(), 2))
        top = height(x, y)
        for a in np.linspace(0, 2 * math.pi, 32, endpoint=False):
            d = np.array([math.cos(a), math.sin(a)])
            h = height(x + (radius + NEAR) * d[0], y + (radius + NEAR) * d[1])
            better = h > top
            best[better], top = d, np.where(better, h, top)
        toward = (foot_dv[f][:, 0:2] * best).sum(axis=1)
        r = result["feet_by_class"]["riser"]
        r["vx_toward_riser_error"] = stats(toward)
        # Feet whose overlap with our riser the closest-point search does not see (it starts on
        # the level lower tread and stays there): more than 1 mm of overlap by brute force, the
        # search's at least 1 mm less.
        overlap, search = hidden_overlap(sim, feet0[f], radius)
        hidden = (overlap > 0.001) & np.isfinite(search) & (search < overlap - 0.001)
        box = radius - height.riser_distance(feet0[f])  # overlap with MuJoCo's riser box
        r["overlap_mm"] = stats(1000 * overlap)
        groups = (("touching_mujoco_riser", box > -0.001),
                  ("touching_ours_seen", (overlap > 0.001) & ~hidden),
                  ("touching_ours_hidden", hidden),
                  ("clear_of_ours", overlap <= 0.001))
        for name, m in groups:
            r[name] = {"count": int(m.sum()),
                       "overlap_mm": stats(1000 * overlap[m]),
                       "mujoco_box_overlap_mm": stats(1000 * box[m]),
                       "vz_error": stats(foot_dv[f][m][:, 2]),
                       "vx_toward_riser_error": stats(toward[m]),
                       "pos_error": stats(np.linalg.norm(foot_dp[f][m], axis=1))}
    return result


def table(results):
    lines = ["| periods | spacing | decisions | count | base z: ours - MuJoCo, mean (RMS) [mm] | "
             "base vz: ours - MuJoCo, mean (RMS) [m/s] | base |dv| "
             "RMS [m/s] | base |dw| RMS [rad/s] | joint dqd RMS [rad/s] | feet | foot vz: ours - "
             "MuJoCo, mean (RMS) [m/s] | foot |dp| RMS [mm] |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for c in CLASSES:
            d, f = r["decisions_by_class"].get(c), r["feet_by_class"].get(c)
            if d is None and f is None:
                continue
            cells = [str(r["periods"]), f"{r['spacing']:g}", c]
            cells += ([str(d["count"]),
                       f"{1000 * d['base_z_error']['mean']:+.1f} "
                       f"({1000 * d['base_z_error']['rms']:.1f})",
                       f"{d['base_vz_error']['mean']:+.3f} ({d['base_vz_error']['rms']:.3f})",
                       f"{d['base_lin_vel_error']['rms']:.3f}",
                       f"{d['base_ang_vel_error']['rms']:.3f}",
                       f"{d['joint_vel_error_rms']['rms']:.2f}"] if d else ["0"] + [""] * 5)
            cells += ([str(f["count"]),
                       f"{f['vz_error']['mean']:+.3f} ({f['vz_error']['rms']:.3f})",
                       f"{1000 * f['pos_error']['rms']:.1f}"] if f else ["0", "", ""])
            lines.append("| " + " | ".join(cells) + " |")
    groups = ("touching_mujoco_riser", "touching_ours_seen", "touching_ours_hidden",
              "clear_of_ours")
    if any("riser" in r["feet_by_class"] for r in results):
        lines += ["", "| periods | spacing | feet beside a riser | count | "
                  "overlap with ours, mean [mm] | "
                  "overlap with MuJoCo's box, mean [mm] | velocity into the riser: ours - MuJoCo, "
                  "mean (RMS) [m/s] | vz: ours - MuJoCo, mean (RMS) [m/s] |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in results:
            f = r["feet_by_class"].get("riser")
            for g in groups if f else ():
                e = f[g]
                if not e["count"]:
                    continue
                t, z = e["vx_toward_riser_error"], e["vz_error"]
                lines.append(f"| {r['periods']} | {r['spacing']:g} | {g} | {e['count']} | "
                             f"{e['overlap_mm']['mean']:+.1f} | "
                             f"{e['mujoco_box_overlap_mm']['mean']:+.1f} | "
                             f"{t['mean']:+.3f} ({t['rms']:.3f}) | "
                             f"{z['mean']:+.3f} ({z['rms']:.3f}) |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace", help="mujoco_deployer.py --trace FILE.npz")
    p.add_argument("policy", help="the policy's TorchScript file (diffloco export): its drive, "
                                  "friction, sweeps, terrain contact and interpolant")
    p.add_argument("--spacing", type=float, nargs="+", default=[0.05],
                   help="our height field's spacing [m] (several: one result each)")
    p.add_argument("--half", type=float, default=5.0,
                   help="the height field covers [-half, half]^2 [m] (default 5)")
    p.add_argument("--interpolant", help="default: the policy's task.terrain.interpolant")
    p.add_argument("--terrain-contact", help="default: the policy's task.sim.terrain_contact")
    p.add_argument("--periods", type=int, nargs="+", default=[1],
                   help="control periods stepped from each decision with the trace's targets "
                        "in turn before comparing (default 1; several: one result each)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", help="the aggregates as JSON")
    args = p.parse_args()
    header, tr = load_trace(args.trace)
    meta = diffloco.load_policy(args.policy).metadata
    interpolant = args.interpolant or task_value(meta, "terrain", "interpolant", "monotone")
    contact = args.terrain_contact or task_value(meta, "sim", "terrain_contact", "vertical")
    if min(args.periods) < 1:
        p.error("--periods must be >= 1")
    results = [lockstep(header, tr, meta, s, args.half, interpolant, contact, args.threads, k)
               for k in args.periods for s in args.spacing]
    out = {"trace": args.trace, "policy": args.policy,
           "mujoco": header["engine"], "conditions": header["conditions"],
           "ours": {"contact": "hard", "dt": header["sim_dt"],
                    "decimation": header["decimation"],
                    "iterations": int(meta["simulation"]["solver_iterations"]),
                    "friction": header["friction"], "interpolant": interpolant,
                    "terrain_contact": contact, "actuator": meta["actuator"]},
           "episodes": int(len(np.unique(tr["episode"]))),
           "classes": {"near": NEAR, "air": AIR, "step": STEP},
           "results": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
