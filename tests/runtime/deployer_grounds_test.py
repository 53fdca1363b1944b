"""ctest deploy_reference_grounds: the reference deployer's grounds and conditions
(runtime/examples/mujoco_deployer.py --ground, --latency, and the file's recommended options),
on the shipped rough-terrain policy's ONNX file.

- The ground under a point, found by the deployer's ray cast, is the profile the options describe:
  a step and each tread of the stairs at its height, up and down, as boxes and as an hfield;
  legged_gym's pyramid of stairs ring by ring; the bumps within their
  amplitude and not flat; the robot spawns on the highest ground under its footprint.
- --latency k: the joints' target is the default pose for the first k decisions and then the
  decision of k control steps before.
- MuJoCo options not given are the file's recommendation (evaluation.mujoco_*); --solref and
  --impratio reach every contact.
- --trace: a row per decision and per episode end, and MuJoCo started from a row's qpos and qvel
  with its targets held for a control period reaches the next row (what a replay relies on).
usage: deployer_grounds_test.py REPO   (a Python with mujoco, onnx, onnxruntime, numpy)
"""
import json
import os
import sys
import tempfile

repo = sys.argv[1]
sys.path.insert(0, os.path.join(repo, "runtime/examples"))
try:
    import mujoco
    import numpy as np
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401
except ImportError as e:
    print(f"SKIP: {sys.executable} lacks {e.name} (bash .ci/install-deps makes the test venv)")
    sys.exit(77)
import mujoco_deployer as dp  # noqa: E402

policy = os.path.join(repo, "pretrained/velocity_anymal_rough.onnx")
meta, session = dp.load_policy(policy)


def model(*options):
    args = dp.parse_args([policy, *options])
    dp.recommended(meta, args)
    m = dp.build_model(meta, args)
    return args, m, mujoco.MjData(m)


def ground(m, d, x, y=0.3):
    mujoco.mj_forward(m, d)
    return dp.ground_height(m, d, x, y)


def near(a, b, what, tol=1e-9):
    assert abs(a - b) < tol, f"{what}: {a} != {b}"


# The file's recommendation (the rough policy's: elliptic cone, 10 noslip iterations); a given
# option wins.
args, m, d = model()
assert (args.cone, args.noslip, args.integrator, args.solver, args.iterations) == (
    "elliptic", 10, "euler", "newton", 100), vars(args)
assert m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC and m.opt.noslip_iterations == 10
args, m, d = model("--cone", "pyramidal", "--noslip", "0")
assert m.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL and m.opt.noslip_iterations == 0
# MuJoCo's contact defaults unless --solref and --impratio say otherwise, on every geom (robot
# and ground alike, so that a pair's mixed solref is the one given).
assert m.opt.impratio == 1.0 and np.allclose(m.geom_solref, [0.02, 1.0])
args, m, d = model("--solref", "0.004", "0.8", "--impratio", "10", "--ground", "stairs")
assert m.opt.impratio == 10.0 and np.allclose(m.geom_solref, [0.004, 0.8]), m.geom_solref
assert dp.engine_options(m)["solref"] == [0.004, 0.8]

# The plane and a single step 1 m ahead, up and down.
args, m, d = model()
near(ground(m, d, 3.0), 0.0, "plane")
near(dp.spawn_height(m, d), 0.0, "plane spawn")
assert dp.feature_end(args) is None
args, m, d = model("--ground", "step", "--height", "0.1", "--distance", "1.0")
near(ground(m, d, 0.9), 0.0, "before the step up")
near(ground(m, d, 1.1), 0.1, "after the step up")
near(dp.spawn_height(m, d), 0.0, "spawn before the step up")
near(dp.feature_end(args), 1.5, "step crossed")
args, m, d = model("--ground", "step", "--height", "-0.1", "--distance", "1.0")
near(ground(m, d, 0.9), 0.1, "before the step down")
near(ground(m, d, 1.1), 0.0, "after the step down")
near(dp.spawn_height(m, d), 0.1, "spawn on the platform")

# Stairs: every tread at its height, the top (or the foot) continuing.
for rise in (0.12, -0.12):
    args, m, d = model("--ground", "stairs", "--height", str(rise), "--run", "0.3", "--steps",
                       "5", "--distance", "2.0")
    top = 5 * abs(rise)
    near(ground(m, d, 1.9), 0.0 if rise > 0 else top, f"before the stairs ({rise})")
    for k in range(5):
        h = (k + 1) * rise if rise > 0 else top - (k + 1) * abs(rise)
        near(ground(m, d, 2.0 + k * 0.3 + 0.15), h, f"tread {k} ({rise})")
    near(ground(m, d, 10.0), top if rise > 0 else 0.0, f"beyond the stairs ({rise})")
    near(dp.feature_end(args), 2.0 + 4 * 0.3 + 0.5, "stairs crossed")

# --grid: the same stairs as an hfield; the treads at their heights, each riser across one cell.
args, m, d = model("--ground", "stairs", "--height", "0.12", "--run", "0.3", "--steps", "5",
                   "--distance", "2.0", "--grid", "0.05")
for k in range(5):
    near(ground(m, d, 2.0 + k * 0.3 + 0.15), (k + 1) * 0.12, f"grid tread {k}", 1e-6)  # float
near(ground(m, d, 1.9), 0.0, "grid before the stairs", 1e-6)
near(ground(m, d, 1.975), 0.06, "grid riser halfway across its cell", 1e-6)

# legged_gym's pyramid: rings of 0.31 m from the 8 m tile's border inward while more than the 3 m
# platform is left (9 rings, the last inside 1.21 m of the centre), as boxes and as an hfield; up:
# the centre lowest; crossed: 4 m from the centre along x or y, through a face within 22.5 deg.
for rise in (0.2, -0.2):
    for grid in ("0", "0.05"):
        args, m, d = model("--ground", "pyramid", "--height", str(rise), "--run", "0.31",
                           "--grid", grid)
        for x, y, rings in ((0.0, 0.0, 9), (1.1, 0.3, 9), (1.3, 0.0, 8), (0.3, -1.3, 8),
                            (2.0, 2.1, 6), (-3.8, 0.5, 0), (5.0, 5.0, 0)):
            h = 0.2 * (9 - rings) if rise > 0 else 0.2 * rings
            near(ground(m, d, x, y), h, f"pyramid ({rise}, grid {grid}) at ({x}, {y})", 1e-6)
        near(dp.feature_end(args), 4.0, "pyramid crossed")
assert dp.through_face(4.0, 1.6) and not dp.through_face(4.0, 1.7) and dp.through_face(-0.5, -4)

# Bumps: within the amplitude, not flat, the same field for the same --ground-seed.
args, m, d = model("--ground", "bumps", "--height", "0.08", "--cell", "0.2")
mujoco.mj_forward(m, d)
hs = np.array([dp.ground_height(m, d, x, y) for x in np.linspace(-3, 3, 31)
               for y in np.linspace(-3, 3, 31)])
assert hs.min() >= -0.08 - 1e-9 and hs.max() <= 0.08 + 1e-9, (hs.min(), hs.max())
assert hs.std() > 0.02, hs.std()
near(dp.spawn_height(m, d), max(dp.ground_height(m, d, x, y) for x in np.linspace(-0.8, 0.8, 17)
                                for y in np.linspace(-0.5, 0.5, 11)), "spawn on the bumps")
_, m2, d2 = model("--ground", "bumps", "--height", "0.08", "--cell", "0.2")
mujoco.mj_forward(m2, d2)
near(dp.ground_height(m2, d2, 0.37, -1.21), dp.ground_height(m, d, 0.37, -1.21), "same field")

# --latency 2: targets of the default pose for two decisions, then the decision two before.
targets, actions = [], []
real_torque, real_run = dp.pd_torque, session.run


def recording_torque(meta_, target, q, qd):
    targets.append(np.array(target))
    return real_torque(meta_, target, q, qd)


class Recording:
    def run(self, names, feeds):
        out = real_run(names, feeds)
        actions.append(np.array(out[0][0], dtype=np.float64))
        return out


dp.pd_torque = recording_torque
args, m, d = model("--latency", "2", "--episodes", "1", "--episode-length", "0.1", "--command",
                   "0.5", "0", "0")
dp.run(meta, Recording(), m, args)
default = np.asarray(meta["joints"]["default_pos"])
scale, clip, decimation = meta["action"]["scale"], meta["action"]["clip"], 4
assert len(actions) == 5 and len(targets) == 5 * decimation, (len(actions), len(targets))
for k in range(5):
    want = default if k < 2 else default + scale * np.clip(actions[k - 2], -clip, clip)
    for s in range(decimation):
        assert np.allclose(targets[k * decimation + s], want, atol=1e-12), (k, s)
dp.pd_torque = real_torque

# --trace: rows per decision plus the episode's end; replaying a row in a fresh MjData reaches the
# next one.
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "trace.npz")
    args, m, d = model("--episodes", "2", "--episode-length", "0.1", "--command", "0.5", "0", "0",
                       "--ground", "pyramid", "--height", "0.1", "--run", "0.31",
                       "--trace", path)
    rows = []
    dp.run(meta, session, m, args, rows)
    dp.record_trace(path, meta, m, args, rows)
    t = np.load(path)
    header = json.loads(str(t["header"]))
    assert list(t["episode"]) == [0] * 6 + [1] * 6 and list(t["decision"]) == list(range(6)) * 2
    assert np.all(np.isnan(t["target"][[5, 11]])) and np.all(np.isfinite(t["target"][:5]))
    assert header["decimation"] == 4 and header["conditions"]["ground"] == "pyramid"
    assert {g["type"] for g in header["ground_geoms"]} == {"plane", "box"}
    qa, va = t["joint_qpos_adr"], t["joint_qvel_adr"]
    for i in [0, 3, 7]:
        d2 = mujoco.MjData(m)
        d2.qpos[:], d2.qvel[:] = t["qpos"][i], t["qvel"][i]
        for _ in range(header["decimation"]):
            d2.qfrc_applied[va] = dp.pd_torque(meta, t["target"][i], d2.qpos[qa], d2.qvel[va])
            mujoco.mj_step(m, d2)
        assert np.allclose(d2.qpos, t["qpos"][i + 1], atol=1e-9), i
        assert np.allclose(d2.qvel, t["qvel"][i + 1], atol=1e-7), i
print("deployer grounds ok")
