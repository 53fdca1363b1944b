"""Reference deployer: runs a diffloco policy in MuJoCo from the exported ONNX file alone.

Everything comes from the file (its metadata_props["metadata_json"], docs/deploy.md): the robot
from the embedded URDF (checked against its sha256), gravity, the collision contract (only the
spheres of the feet and leg_contacts touch the ground), the observation from the terms'
definitions, the PD law and its limits, the reset, the terminations. No diffloco code: this is the
contract's test, and a starting point for a robot team's own loop. Needs numpy, onnx, onnxruntime and mujoco (PyPI).

    python3 mujoco_deployer.py policy.onnx [--episodes 100] [--seed 0] [--dt 0.002] [--json]
    python3 mujoco_deployer.py rough.onnx --ground stairs --height 0.1 --command 0.5 0 0

The ground is the plane z = 0 unless --ground builds another one of MuJoCo's own geoms, as
someone testing a policy outside its training would: random bumps (an hfield), a single step or
a flight of stairs (boxes) across the robot's path, up or down. --friction, --latency and
--command set the conditions; the output adds the episodes whose joints left the URDF's limits
and, on a step or stairs, the episodes whose base crossed them.

--trace FILE.npz records every control decision for a replay in another program: the episode,
the decision's index and time, MuJoCo's qpos and qvel it was taken in (free joint: world position,
quaternion w x y z, world linear velocity, base-axes angular velocity; the joints at
joint_qpos_adr / joint_qvel_adr in joints.names order) and the joint targets held for the next
control period; each episode ends with a row of its final state and NaN targets. "header" holds a
JSON string: the engine's options, the conditions, the control and MuJoCo steps and the ground's
geoms (type, position, quaternion, size, hfield samples).

The episode protocol is `diffloco eval --engine mujoco`'s (export/mujoco_eval.h), draw for draw
(the same std::mt19937_64 stream), so the two compare on the same seeds: the robot starts level at
joints.default_base_height with U(-reset_noise, reset_noise) on each default joint angle and a
command drawn from the metadata's ranges; the policy decides every control_dt, the PD law runs at
every MuJoCo step with the target held; an episode ends at its length or when a termination of
the metadata (base height, tilt) or a non-finite state occurs. Heights (the reset, the base
height termination, the height scan) are measured from the ground under the point, found by a
ray cast down onto the ground's geoms.
"""
import argparse
import hashlib
import json
import math
import sys

import mujoco
import numpy as np
import onnx
import onnxruntime as ort

INTEGRATORS = {"euler": mujoco.mjtIntegrator.mjINT_EULER, "rk4": mujoco.mjtIntegrator.mjINT_RK4,
               "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
               "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST}
CONES = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}
SOLVERS = {"pgs": mujoco.mjtSolver.mjSOL_PGS, "cg": mujoco.mjtSolver.mjSOL_CG,
           "newton": mujoco.mjtSolver.mjSOL_NEWTON}
GROUND_GROUP = 2  # the ground geom's group (the robot's geoms are elsewhere)


class Mt19937_64:
    """std::mt19937_64 and libstdc++'s uniform_real_distribution<double> on it: the C++
    evaluation's draws, so that both run the same episodes for the same seed."""

    def __init__(self, seed):
        self.mt = [0] * 312
        self.mt[0] = seed & 0xFFFFFFFFFFFFFFFF
        for i in range(1, 312):
            prev = self.mt[i - 1]
            self.mt[i] = (6364136223846793005 * (prev ^ (prev >> 62)) + i) & 0xFFFFFFFFFFFFFFFF
        self.index = 312

    def next(self):
        if self.index >= 312:
            for i in range(312):
                x = (self.mt[i] & 0xFFFFFFFF80000000) | (self.mt[(i + 1) % 312] & 0x7FFFFFFF)
                y = x >> 1
                if x & 1:
                    y ^= 0xB5026F5AA96619E9
                self.mt[i] = self.mt[(i + 156) % 312] ^ y
            self.index = 0
        x = self.mt[self.index]
        self.index += 1
        x ^= (x >> 29) & 0x5555555555555555
        x ^= (x << 17) & 0x71D67FFFEDA60000
        x ^= (x << 37) & 0xFFF7EEE000000000
        x ^= x >> 43
        return x & 0xFFFFFFFFFFFFFFFF

    def uniform(self, lo, hi):
        if lo == hi:  # the C++ evaluation draws nothing for an empty range
            return lo
        u = self.next() / 18446744073709551616.0
        if u >= 1.0:
            u = math.nextafter(1.0, 0.0)
        return lo + (hi - lo) * u


def load_policy(path):
    """The ONNX network and the metadata it carries."""
    model = onnx.load(path)
    props = {p.key: p.value for p in model.metadata_props}
    if "metadata_json" not in props:
        sys.exit(f"{path}: no metadata_json in metadata_props (not written by diffloco export)")
    meta = json.loads(props["metadata_json"])
    if meta["format"]["format"] != "diffloco-exported-policy-2":
        sys.exit(f"{path}: metadata format {meta['format']['format']}, expected "
                 "diffloco-exported-policy-2 (upgrade with `diffloco export OLD.pt -o NEW.pt`)")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return meta, session


def recommended(meta, args):
    """Options not given take the file's recommendation (its evaluation section), else MuJoCo's
    defaults."""
    e = meta.get("evaluation", {})
    defaults = {"integrator": ("mujoco_integrator", "euler"), "cone": ("mujoco_cone", "pyramidal"),
                "solver": ("mujoco_solver", "newton"), "iterations": ("mujoco_iterations", 100),
                "noslip": ("mujoco_noslip_iterations", 0)}
    for name, (key, default) in defaults.items():
        if getattr(args, name) is None:
            value = e.get(key, default)
            setattr(args, name, value.lower() if isinstance(value, str) else value)


def build_model(meta, args):
    """MuJoCo model of the robot as trained: the embedded URDF with a free base, its collision
    spheres (feet and robot.leg_contacts) the only colliding geoms (against the ground only),
    friction, gravity, armature."""
    robot = meta["robot"]
    urdf = robot["urdf"]
    if hashlib.sha256(urdf.encode()).hexdigest() != robot["urdf_sha256"]:
        sys.exit("robot.urdf does not match robot.urdf_sha256")
    spec = mujoco.MjSpec.from_string(urdf)
    # A link without <inertial> is massless (the foot links); MuJoCo's default would give it the
    # mass of its collision sphere at density 1000.
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    # MuJoCo's URDF import welds the root link to the world (its mass then does not move):
    # the base is free-floating.
    spec.body(robot["base_link"]).add_freejoint()
    mu = args.friction if args.friction is not None else meta["simulation"]["friction"]
    for joint in spec.joints:
        if joint.type == mujoco.mjtJoint.mjJNT_HINGE:
            joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE  # not enforced in training
            joint.armature = meta["actuator"]["armature"]
    # The URDF's only collision geometry is the spheres of robot.feet and robot.leg_contacts:
    # they touch the ground, never each other.
    for geom in spec.geoms:
        geom.contype, geom.conaffinity, geom.condim = 1, 0, 3
        geom.friction = [mu, 0.005, 0.0001]
    add_ground(spec, args, mu)
    if args.solref:
        for geom in spec.geoms:
            geom.solref = args.solref
    opt = spec.option
    opt.gravity = robot["gravity"]
    opt.timestep = args.dt or meta["timing"]["sim_dt"]
    opt.integrator = INTEGRATORS[args.integrator]
    opt.cone = CONES[args.cone]
    opt.solver = SOLVERS[args.solver]
    opt.iterations = args.iterations
    opt.noslip_iterations = args.noslip
    opt.impratio = args.impratio
    return spec.compile()


def add_ground(spec, args, mu):
    """The ground, alone in geom group GROUND_GROUP (the height scan's rays see it and not the
    robot): the plane z = 0, with --ground a feature across the robot's path along +x (the robot
    starts at the origin facing +x). A negative --height goes down: the robot starts on a
    platform of that height and the step or stairs descend from it."""
    def geom(**kw):
        spec.worldbody.add_geom(contype=0, conaffinity=1, condim=3, friction=[mu, 0.005, 0.0001],
                                group=GROUND_GROUP, **kw)

    def box(x0, x1, top):  # a slab over x in [x0, x1], 40 m wide, from z = 0 up to `top`
        geom(type=mujoco.mjtGeom.mjGEOM_BOX, pos=[(x0 + x1) / 2, 0, top / 2],
             size=[(x1 - x0) / 2, 20.0, top / 2])

    h, x0, far = args.height, args.distance, 40.0
    if args.ground == "bumps":
        # Heights uniform in [-h, h] at vertices args.cell apart (MuJoCo's hfield: linear between
        # them), over 80 m x 80 m; the same field for every episode of one --ground-seed.
        n = int(round(2 * far / args.cell)) + 1
        rng = np.random.default_rng(args.ground_seed)
        data = rng.uniform(0.0, 1.0, n * n)  # elevation (size[2] = 2h) above the base at -h
        spec.add_hfield(name="bumps", size=[far, far, max(2 * abs(h), 1e-6), 0.1], nrow=n,
                        ncol=n, userdata=data.tolist())
        geom(type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname="bumps", pos=[0, 0, -abs(h)])
        return
    geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
    if args.ground == "plane" or h == 0:
        return
    if args.ground == "pyramid":
        add_pyramid(spec, args, geom)
        return
    steps = 1 if args.ground == "step" else args.steps
    rise, top = abs(h), abs(h) * steps
    if args.grid:
        # The same step function sampled every --grid metres as an hfield over x in [-10, 30],
        # y in [-10, 10] (the plane beyond): each riser slopes across one cell, as on a grid
        # terrain (an elevation map, diffloco's terrain).
        xs, ys = np.arange(-10.0, 30.0 + 1e-9, args.grid), np.arange(-10.0, 10.0 + 1e-9, args.grid)
        k = np.clip(np.floor((xs - x0) / args.run + 1e-9) + 1, 0, steps)
        z = rise * k if h > 0 else top - rise * k
        z = np.where(xs < x0, 0.0 if h > 0 else top, z)
        data = np.tile(z / top, (len(ys), 1))  # rows along y, columns along x
        spec.add_hfield(name="stairs", size=[20.0, 10.0, top, 0.1], nrow=len(ys), ncol=len(xs),
                        userdata=data.ravel().tolist())
        geom(type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname="stairs", pos=[10.0, 0, 0])
        return
    for k in range(steps):
        if h > 0:  # up: step k's tread at (k + 1) rise from x0 + k run on
            box(x0 + k * args.run, far, (k + 1) * rise)
        else:  # down: the platform up to x0, then step k's tread at top - (k + 1) rise
            box(-far, x0 + k * args.run, top - k * rise)


def add_pyramid(spec, args, geom):
    """legged_gym's pyramid stairs tile (its pyramid_stairs_terrain): square rings of tread --run
    stepping by --height from the tile's border (--tile) inward while more than --platform is
    left, the robot at the centre; up (height > 0): the centre lowest, down: the centre highest;
    the border's height continues a tile beyond. Boxes (vertical risers), or with --grid an hfield
    sampled every GRID m (risers sloping across one cell)."""
    half, rise = args.tile / 2, abs(args.height)
    insets = []  # legged_gym's loop: one ring inward a pass while more than the platform is left
    while args.tile - 2 * (len(insets) * args.run) > args.platform:
        insets.append((len(insets) + 1) * args.run)
    n = len(insets)

    def height(rings):  # rings: how many insets lie outside the point
        return rise * (n - rings) if args.height > 0 else rise * rings

    if args.grid:
        xs = np.arange(-args.tile, args.tile + 1e-9, args.grid)
        c = np.maximum(np.abs(xs)[None, :], np.abs(xs)[:, None])  # Chebyshev distance
        z = height(sum((c < half - s).astype(float) for s in insets))
        top = max(rise * n, 1e-6)
        spec.add_hfield(name="pyramid", size=[args.tile, args.tile, top, 0.1], nrow=len(xs),
                        ncol=len(xs), userdata=(z / top).ravel().tolist())
        geom(type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname="pyramid", pos=[0, 0, 0])
        return

    def frame(inner, outer, top):  # the square ring inner <= Chebyshev distance < outer
        if top <= 0:
            return
        w, m = (outer - inner) / 2, (outer + inner) / 2
        for sx, sy, ax, ay in ((m, 0, w, outer), (-m, 0, w, outer), (0, m, inner, w),
                               (0, -m, inner, w)):
            if ax > 0:  # the centre's square is the two x-strips alone
                geom(type=mujoco.mjtGeom.mjGEOM_BOX, pos=[sx, sy, top / 2],
                     size=[ax, ay, top / 2])

    edges = [half + args.tile / 2] + [half - s for s in insets] + [0.0]
    for rings in range(n + 1):  # the region between edges[rings + 1] and edges[rings]
        frame(edges[rings + 1], edges[rings], height(rings))


def through_face(x, y):
    """Whether a pyramid was left through a face (bearing within 22.5 degrees of an axis) rather
    than near a corner, where each ring's convex corner lets the legs step up one at a time."""
    return min(abs(x), abs(y)) <= math.tan(math.pi / 8) * max(abs(x), abs(y))


def feature_end(args):
    """x beyond which the base has crossed the step or the stairs; on the pyramid, half a tile
    from the centre along x or y, at any time (diffloco eval's climbed); None on other grounds."""
    if args.ground == "pyramid":
        return args.tile / 2
    if args.ground not in ("step", "stairs") or args.height == 0:
        return None
    return args.distance + (0 if args.ground == "step" else (args.steps - 1) * args.run) + 0.5


def engine_options(m):
    o = m.opt
    return {"mujoco": mujoco.mj_versionString(), "timestep": o.timestep,
            "integrator": mujoco.mjtIntegrator(o.integrator).name[len("mjINT_"):].lower(),
            "cone": mujoco.mjtCone(o.cone).name[len("mjCONE_"):].lower(),
            "solver": mujoco.mjtSolver(o.solver).name[len("mjSOL_"):].lower(),
            "iterations": int(o.iterations), "ls_iterations": int(o.ls_iterations),
            "tolerance": o.tolerance, "noslip_iterations": int(o.noslip_iterations),
            "impratio": o.impratio, "solref": [float(x) for x in m.geom_solref[0]]}


def pd_torque(meta, target, q, qd):
    """actuator section: the PD law with the effort limit and the speed-torque line (null:
    infinite; 1e10 is the training simulator's own stand-in, so the torques are the same)."""
    a = meta["actuator"]
    effort = np.asarray(a["effort"])
    sat = a["saturation"] if a["saturation"] is not None else 1e10
    vlim = a["velocity_limit"] if a["velocity_limit"] is not None else 1e10
    tau = a["kp"] * (target - q) - a["kd"] * qd
    vmax = vlim * (1.0 + effort / sat)
    w = np.clip(qd, -vmax, vmax) / vlim
    hi = np.minimum(sat * (1.0 - w), effort)
    lo = np.maximum(sat * (-1.0 - w), -effort)
    return np.clip(tau, lo, hi)


def ground_height(m, d, x, y):
    """Height of the ground under (x, y): a ray cast down onto the ground's geom group."""
    geom = np.array([-1], dtype=np.int32)
    groups = np.zeros(6, dtype=np.uint8)
    groups[GROUND_GROUP] = 1
    top = 100.0
    dist = mujoco.mj_ray(m, d, np.array([x, y, top]), np.array([0.0, 0.0, -1.0]), groups, 1, -1,
                         geom)
    return top - dist if geom[0] >= 0 else 0.0


def height_scan(t, s):
    """The height_scan term's definition: clip(z - offset - h(p_k), -clip, clip), p_k = (x, y) +
    Rz(yaw) (x_i, y_j), k = i * ny + j, yaw = atan2(R_10, R_00)."""
    p = {k: v for k, v in t["params"].items()}
    (x0, x1), (y0, y1), spacing = p["x_range"], p["y_range"], p["spacing"][0]
    nx = math.floor((x1 - x0) / spacing + 1e-9) + 1
    ny = math.floor((y1 - y0) / spacing + 1e-9) + 1
    R, (x, y, z) = s["R"], s["qpos"][0:3]
    yaw = math.atan2(R[1, 0], R[0, 0])
    c, sn = math.cos(yaw), math.sin(yaw)
    out = []
    for i in range(nx):
        for j in range(ny):
            lx, ly = x0 + i * spacing, y0 + j * spacing
            h = s["ground"](x + c * lx - sn * ly, y + sn * lx + c * ly)
            out.append(min(max(z - p["offset"][0] - h, -p["clip"][0]), p["clip"][0]))
    return out


def observation(meta, s):
    """The observation, term by term, from the definitions in meta["observation"]["terms"]."""
    R = s["R"]  # base -> world
    values = {
        "height_scan": lambda t: height_scan(t, s),
        "base_height": lambda t: [s["qpos"][2] - s["ground"](s["qpos"][0], s["qpos"][1])],
        "base_quat": lambda t: s["qpos"][3:7],
        "base_lin_vel": lambda t: R.T @ s["qvel"][0:3],  # free joint: world-axes velocity
        "base_ang_vel": lambda t: s["qvel"][3:6],  # free joint: base axes already
        "projected_gravity": lambda t: R.T @ np.array([0.0, 0.0, -1.0]),
        "command": lambda t: s["command"],
        "joint_pos": lambda t: s["q"] - np.asarray(meta["joints"]["default_pos"]),
        "joint_vel": lambda t: s["qd"],
        "base_alignment": lambda t: [R[2, 2]],
        "heading_alignment": lambda t: [R[0, 0]],
        "last_action": lambda t: s["past_actions"][0],
        # newest first, joints fastest; zeros before the episode's first decision
        "action_history": lambda t: np.concatenate(
            s["past_actions"][:int(t["params"]["steps"][0])]),
        "gait_phase": lambda t: [math.sin(2 * math.pi * t["params"]["frequency"][0] * s["time"])],
    }
    parts = []
    for term in meta["observation"]["terms"]:
        if term["name"] not in values:
            sys.exit(f"observation term {term['name']} ({term['definition']['formula']}) is not "
                     "implemented by this deployer")
        v = np.asarray(values[term["name"]](term), dtype=np.float64)
        assert v.size == term["size"], term["name"]
        parts.append(v * term["scale"])
    return np.concatenate(parts).astype(np.float32)[None, :]


def spawn_height(m, d):
    """The ground's highest point under the standing robot's footprint (1.6 m x 1 m about the
    origin): the plane's 0, a platform's top, the highest bump, so no foot starts in the ground."""
    return max(ground_height(m, d, x, y) for x in np.linspace(-0.8, 0.8, 17)
               for y in np.linspace(-0.5, 0.5, 11))


def joint_limits(meta):
    """The URDF's joint limits in joints.names order, from the metadata (None: not stated)."""
    j = meta["joints"]
    if "lower" not in j or "upper" not in j:
        return None
    return np.asarray(j["lower"]), np.asarray(j["upper"])


def run(meta, session, m, args, trace=None):
    """The episodes; with `trace` (a list) one dict per control decision and one per episode end
    is appended to it (record_trace writes them)."""
    d = mujoco.MjData(m)
    names = meta["joints"]["names"]
    qadr = np.array([m.joint(n).qposadr[0] for n in names])
    vadr = np.array([m.joint(n).dofadr[0] for n in names])
    control_dt = meta["timing"]["control_dt"]
    decimation = round(control_dt / m.opt.timestep)
    if decimation < 1 or abs(decimation * m.opt.timestep - control_dt) > 1e-9 * control_dt:
        sys.exit(f"the time step {m.opt.timestep} s does not divide control_dt {control_dt} s")
    length_s = args.episode_length or meta["timing"]["episode_length_s"]
    steps = max(1, round(length_s / control_dt))
    clip, scale = meta["action"]["clip"], meta["action"]["scale"]
    default = np.asarray(meta["joints"]["default_pos"])
    height_min = meta["terminations"]["base_height_below"]
    tilt_max = meta["terminations"]["base_tilt_above"]
    cmd = meta["commands"]
    limits, crossing = joint_limits(meta), feature_end(args)
    rng = Mt19937_64(args.seed)
    episodes = []
    for _ in range(args.episodes):
        noise = [rng.uniform(-args.reset_noise, args.reset_noise) for _ in names]
        if args.command is not None:
            command = list(args.command)
        else:
            command = ([rng.uniform(*cmd["lin_vel_x"]), rng.uniform(*cmd["lin_vel_y"]),
                        rng.uniform(*cmd["ang_vel_z"])] if cmd["enabled"] else [0.0, 0.0, 0.0])
        mujoco.mj_resetData(m, d)
        mujoco.mj_forward(m, d)
        z0 = spawn_height(m, d)
        d.qpos[0:7] = [0, 0, z0 + meta["joints"]["default_base_height"], 1, 0, 0, 0]
        d.qpos[qadr] = default + np.asarray(noise)
        mujoco.mj_forward(m, d)
        depth = max([1 + args.latency] + [int(t["params"]["steps"][0])
                                           for t in meta["observation"]["terms"]
                                           if t["name"] == "action_history"])
        past_actions = [np.zeros(len(names))] * depth  # the last decisions, newest first
        sums = np.zeros(4)  # vx, heading speed, lin. error^2, yaw-rate error^2
        excess = 0.0  # the largest excursion beyond a joint's URDF limits [rad]
        fell, k = False, 0
        crossed_at = None  # pyramid: the base's (x, y) when it first got half a tile out
        while k < steps:
            R9 = np.zeros(9)
            mujoco.mju_quat2Mat(R9, d.qpos[3:7])  # d.xmat lags a step behind after mj_step
            R = R9.reshape(3, 3)
            s = {"qpos": d.qpos.copy(), "qvel": d.qvel.copy(), "R": R, "q": d.qpos[qadr],
                 "qd": d.qvel[vadr], "command": np.asarray(command), "past_actions": past_actions,
                 "time": k * control_dt, "ground": lambda x, y: ground_height(m, d, x, y)}
            if k > 0:  # metrics and terminations of the state each decision is taken at
                v_base = R.T @ d.qvel[0:3]
                heading = np.hypot(R[0, 0], R[1, 0])
                sums += [d.qvel[0],
                         (d.qvel[0] * R[0, 0] + d.qvel[1] * R[1, 0]) / heading if heading else 0,
                         (command[0] - v_base[0]) ** 2 + (command[1] - v_base[1]) ** 2,
                         (command[2] - d.qvel[5]) ** 2]
                tilt = math.acos(max(-1.0, min(1.0, R[2, 2])))
                if (not np.all(np.isfinite(d.qvel)) or not math.isfinite(d.qpos[2])
                        or (height_min is not None
                            and d.qpos[2] - ground_height(m, d, d.qpos[0], d.qpos[1]) < height_min)
                        or (tilt_max is not None and tilt > tilt_max)):
                    fell = True
                    break
            action = session.run(["actions"], {"obs": observation(meta, s)})[0][0]
            past_actions = [np.clip(action.astype(np.float64), -clip, clip)] + past_actions[:-1]
            # --latency k: the joints follow the decision of k control steps ago (the default
            # pose before the episode's k-th decision); the observation's last_action is still
            # the newest decision, as in training with randomization.action_delay_steps.
            target = default + scale * past_actions[args.latency]
            if trace is not None:
                trace.append(trace_row(len(episodes), k, k * control_dt, d, target))
            for _ in range(decimation):
                d.qfrc_applied[vadr] = pd_torque(meta, target, d.qpos[qadr], d.qvel[vadr])
                mujoco.mj_step(m, d)
                if limits is not None:
                    q = d.qpos[qadr]
                    excess = max(excess, float(np.max(np.maximum(limits[0] - q, q - limits[1]))))
            if (args.ground == "pyramid" and crossed_at is None
                    and max(abs(d.qpos[0]), abs(d.qpos[1])) >= crossing):
                crossed_at = (float(d.qpos[0]), float(d.qpos[1]))
            k += 1
        if trace is not None:  # the state the episode ended in
            trace.append(trace_row(len(episodes), k, k * control_dt, d,
                                   np.full(len(names), np.nan)))
        n = max(1, k if fell else k - 1)
        episodes.append({"length_s": k * control_dt, "fell": fell, "vx": sums[0] / n,
                         "speed": sums[1] / n, "lin2": sums[2] / n, "yaw2": sums[3] / n,
                         "excess": excess, "x_final": float(d.qpos[0]),
                         "crossed": (crossed_at is not None if args.ground == "pyramid"
                                     else crossing is not None and d.qpos[0] > crossing),
                         "crossed_face": crossed_at is not None and through_face(*crossed_at)})
    return episodes


def trace_row(episode, k, time, d, target):
    return {"episode": episode, "decision": k, "time": time, "qpos": d.qpos.copy(),
            "qvel": d.qvel.copy(), "target": np.array(target, dtype=np.float64)}


def ground_geoms(m):
    """The ground's geoms as compiled (group GROUND_GROUP): what a replay rebuilds the ground
    from. Boxes: half sizes; the plane: its z; hfields: MuJoCo's size and samples (rows along y)."""
    out = []
    for g in range(m.ngeom):
        if m.geom_group[g] != GROUND_GROUP:
            continue
        kind = mujoco.mjtGeom(m.geom_type[g]).name[len("mjGEOM_"):].lower()
        e = {"type": kind, "pos": m.geom_pos[g].tolist(), "quat": m.geom_quat[g].tolist(),
             "size": m.geom_size[g].tolist()}
        if kind == "hfield":
            h = m.geom_dataid[g]
            nrow, ncol = int(m.hfield_nrow[h]), int(m.hfield_ncol[h])
            adr = m.hfield_adr[h]
            e.update({"hfield_size": m.hfield_size[h].tolist(), "nrow": nrow, "ncol": ncol,
                      "data": m.hfield_data[adr:adr + nrow * ncol].tolist()})
        out.append(e)
    return out


def record_trace(path, meta, m, args, rows):
    """--trace: the rows of run() and a JSON header, as an .npz file."""
    names = meta["joints"]["names"]
    header = {"policy": args.policy, "engine": engine_options(m), "conditions": conditions(args),
              "control_dt": meta["timing"]["control_dt"], "sim_dt": m.opt.timestep,
              "decimation": round(meta["timing"]["control_dt"] / m.opt.timestep),
              "seed": args.seed, "reset_noise": args.reset_noise, "joints": names,
              "friction": args.friction if args.friction is not None else meta["simulation"]["friction"],
              "ground_geoms": ground_geoms(m)}
    np.savez_compressed(
        path, header=np.array(json.dumps(header)),
        episode=np.array([r["episode"] for r in rows], dtype=np.int32),
        decision=np.array([r["decision"] for r in rows], dtype=np.int32),
        time=np.array([r["time"] for r in rows]),
        qpos=np.array([r["qpos"] for r in rows]).reshape(len(rows), m.nq),
        qvel=np.array([r["qvel"] for r in rows]).reshape(len(rows), m.nv),
        target=np.array([r["target"] for r in rows]).reshape(len(rows), len(names)),
        joint_qpos_adr=np.array([m.joint(n).qposadr[0] for n in names], dtype=np.int32),
        joint_qvel_adr=np.array([m.joint(n).dofadr[0] for n in names], dtype=np.int32))


def summary(meta, episodes, m, args):
    lengths = np.array([e["length_s"] for e in episodes])
    out = {"task": meta["format"]["task"], "engine": engine_options(m),
           "conditions": conditions(args),
           "episodes": len(episodes), "falls": int(sum(e["fell"] for e in episodes)),
           "length_s_mean": float(lengths.mean()),
           "forward_velocity_mean": float(np.mean([e["vx"] for e in episodes])),
           "heading_speed_mean": float(np.mean([e["speed"] for e in episodes]))}
    if meta["commands"]["enabled"]:  # pooled over time, as diffloco eval
        out["lin_vel_rms"] = math.sqrt(sum(e["lin2"] * e["length_s"] for e in episodes)
                                       / lengths.sum())
        out["yaw_rate_rms"] = math.sqrt(sum(e["yaw2"] * e["length_s"] for e in episodes)
                                        / lengths.sum())
    if joint_limits(meta) is not None:  # checked at every MuJoCo step
        excess = [e["excess"] for e in episodes]
        out["joint_limit_episodes"] = int(sum(x > 0 for x in excess))
        out["joint_limit_excess_max"] = float(max(0.0, max(excess)))
    out["x_final_mean"] = float(np.mean([e["x_final"] for e in episodes]))
    if feature_end(args) is not None:  # the base's origin past the last edge + 0.5 m at the end
        out["crossed"] = int(sum(e["crossed"] for e in episodes))
    if args.ground == "pyramid":
        out["crossed_face"] = int(sum(e["crossed_face"] for e in episodes))
    return out


def conditions(args):
    """The ground and conditions an evaluation ran under, as given (None: the file's)."""
    out = {"ground": args.ground}
    if args.ground != "plane":
        out["height"] = args.height
        if args.ground == "bumps":
            out.update({"cell": args.cell, "ground_seed": args.ground_seed})
        elif args.ground == "pyramid":
            out.update({"tile": args.tile, "platform": args.platform, "run": args.run})
        else:
            out["distance"] = args.distance
        if args.ground == "stairs":
            out.update({"steps": args.steps, "run": args.run})
        if args.grid and args.ground != "bumps":
            out["grid"] = args.grid
    out.update({"friction": args.friction, "latency": args.latency, "command": args.command})
    return out


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("policy", help="ONNX file written by diffloco export --format onnx|both")
    p.add_argument("--episodes", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dt", type=float, default=0.0, help="MuJoCo step [s] (default: sim_dt)")
    p.add_argument("--episode-length", type=float, default=0.0, help="[s] (default: the task's)")
    p.add_argument("--reset-noise", type=float, default=0.1,
                   help="U(-x, x) on the default joint angles at reset [rad]")
    p.add_argument("--integrator", choices=INTEGRATORS,
                   help="default: the file's evaluation.mujoco_integrator, else euler")
    p.add_argument("--cone", choices=CONES,
                   help="default: the file's evaluation.mujoco_cone, else pyramidal")
    p.add_argument("--solver", choices=SOLVERS,
                   help="default: the file's evaluation.mujoco_solver, else newton")
    p.add_argument("--iterations", type=int,
                   help="default: the file's evaluation.mujoco_iterations, else 100")
    p.add_argument("--noslip", type=int,
                   help="noslip iterations (default: the file's evaluation.mujoco_noslip_iterations"
                        ", else 0)")
    p.add_argument("--impratio", type=float, default=1.0,
                   help="elliptic cone: frictional-to-normal constraint impedance (default 1, "
                        "MuJoCo's)")
    p.add_argument("--solref", type=float, nargs=2, metavar=("TIMECONST", "DAMPRATIO"),
                   help="every contact's solref (default MuJoCo's 0.02 1; the time constant is "
                        "kept >= 2 timesteps)")
    g = p.add_argument_group("ground and conditions")
    g.add_argument("--ground", choices=["plane", "bumps", "step", "stairs", "pyramid"],
                   default="plane",
                   help="bumps: random heights in [-height, height] (an hfield); step, stairs: "
                        "boxes across the path along +x, up (height > 0) or down (height < 0); "
                        "pyramid: legged_gym's pyramid stairs tile about the start (crossed: "
                        "the base half a tile from the centre along x or y; crossed_face: "
                        "through a face, not near a corner)")
    g.add_argument("--height", type=float, default=0.1,
                   help="bump amplitude, step height or stair rise [m] (default 0.1)")
    g.add_argument("--distance", type=float, default=1.0,
                   help="x of the step's or the first stair's edge [m] (default 1.0)")
    g.add_argument("--steps", type=int, default=10, help="stairs: number of steps (default 10)")
    g.add_argument("--run", type=float, default=0.3, help="stairs: tread depth [m] (default 0.3)")
    g.add_argument("--tile", type=float, default=8.0, help="pyramid: tile size [m] (default 8)")
    g.add_argument("--platform", type=float, default=3.0,
                   help="pyramid: the central platform's size [m] (default 3)")
    g.add_argument("--cell", type=float, default=0.2,
                   help="bumps: distance between random heights [m] (default 0.2)")
    g.add_argument("--grid", type=float, default=0.0,
                   help="step, stairs: an hfield sampled every GRID m instead of boxes (risers "
                        "slope across one cell, as on a grid terrain; default 0: boxes)")
    g.add_argument("--ground-seed", type=int, default=0, help="bumps: the field's random seed")
    g.add_argument("--friction", type=float,
                   help="friction coefficient of every foot-ground pair (default: the file's "
                        "simulation.friction)")
    g.add_argument("--latency", type=int, default=0,
                   help="control steps between a decision and the joints' target (default 0)")
    g.add_argument("--command", type=float, nargs=3, metavar=("VX", "VY", "WZ"),
                   help="one command for every episode (default: drawn from the file's ranges)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--trace", metavar="FILE.npz",
                   help="record every control decision (time, qpos, qvel, the joint targets held "
                        "for the next control period) and the ground's geoms for a replay in "
                        "another program (numpy .npz; the module docstring lists its arrays)")
    args = p.parse_args(argv)
    if args.latency < 0 or args.steps < 1 or args.run <= 0 or args.cell <= 0:
        p.error("--latency must be >= 0, --steps >= 1, --run and --cell > 0")
    return args


def main():
    args = parse_args()
    meta, session = load_policy(args.policy)
    recommended(meta, args)
    m = build_model(meta, args)
    rows = [] if args.trace else None
    result = summary(meta, run(meta, session, m, args, rows), m, args)
    if args.trace:
        record_trace(args.trace, meta, m, args, rows)
    if args.json:
        print(json.dumps(result))
    else:
        e = result["engine"]
        print(f"task {result['task']}, MuJoCo {e['mujoco']} ({e['integrator']}, {e['cone']} cone,"
              f" {e['solver']}, {e['iterations']} iterations, noslip {e['noslip_iterations']}, "
              f"dt {e['timestep']} s): {result['episodes']} episodes")
        print(f"  conditions {json.dumps(result['conditions'])}")
        for k, v in result.items():
            if k not in ("task", "engine", "episodes", "conditions"):
                print(f"  {k:24s} {v:.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
