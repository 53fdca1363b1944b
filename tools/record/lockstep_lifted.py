"""The lockstep's floor: the same control periods with no ground in reach.

Reads a trace of the reference deployer (`mujoco_deployer.py --trace`), lifts every --every-th
decision's state by --lift m, replays its control period in MuJoCo (the deployer's own model,
options and PD law, imported from runtime/examples/mujoco_deployer.py) and writes the pairs
(start, end) as a trace of the same format: `tools/record/lockstep.py` on it measures how far the
engines part without contact (their integrators: ours trapezoidal in position, MuJoCo's
semi-implicit Euler).

    /opt/diffloco-venv/bin/python tools/record/lockstep_lifted.py TRACE.npz LIFTED.npz
"""
import argparse
import json
import os
import sys

import mujoco
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../../runtime/examples"))
import mujoco_deployer as dp  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace")
    p.add_argument("out")
    p.add_argument("--lift", type=float, default=3.0, help="[m] (default 3)")
    p.add_argument("--every", type=int, default=7, help="every n-th decision (default 7)")
    a = p.parse_args()
    t = np.load(a.trace)
    header = json.loads(str(t["header"]))
    meta, _ = dp.load_policy(header["policy"])
    c, e = header["conditions"], header["engine"]
    argv = [header["policy"], "--ground", c["ground"], "--dt", str(e["timestep"]),
            "--integrator", e["integrator"], "--cone", e["cone"], "--solver", e["solver"],
            "--iterations", str(e["iterations"]), "--noslip", str(e["noslip_iterations"]),
            "--impratio", str(e["impratio"]), "--solref", *map(str, e["solref"])]
    for key in ("height", "run", "tile", "platform", "distance", "steps", "cell", "grid",
                "friction"):
        if c.get(key) is not None:
            argv += ["--" + key, str(c[key])]
    args = dp.parse_args(argv)
    m = dp.build_model(meta, args)
    d = mujoco.MjData(m)
    qa, va = t["joint_qpos_adr"], t["joint_qvel_adr"]
    rows = []
    starts = [i for i in range(0, len(t["time"]) - 1, a.every)
              if t["episode"][i] == t["episode"][i + 1] and np.isfinite(t["target"][i]).all()]
    for n, i in enumerate(starts):
        mujoco.mj_resetData(m, d)
        d.qpos[:], d.qvel[:] = t["qpos"][i], t["qvel"][i]
        d.qpos[2] += a.lift
        rows.append((n, 0, t["time"][i], d.qpos.copy(), d.qvel.copy(), t["target"][i]))
        for _ in range(header["decimation"]):
            d.qfrc_applied[va] = dp.pd_torque(meta, t["target"][i], d.qpos[qa], d.qvel[va])
            mujoco.mj_step(m, d)
        rows.append((n, 1, t["time"][i + 1], d.qpos.copy(), d.qvel.copy(),
                     np.full(len(qa), np.nan)))
    np.savez_compressed(a.out, header=np.array(json.dumps(header)),
                        episode=np.array([r[0] for r in rows], dtype=np.int32),
                        decision=np.array([r[1] for r in rows], dtype=np.int32),
                        time=np.array([r[2] for r in rows]),
                        qpos=np.array([r[3] for r in rows]), qvel=np.array([r[4] for r in rows]),
                        target=np.array([r[5] for r in rows]), joint_qpos_adr=qa,
                        joint_qvel_adr=va)
    print(f"{len(starts)} control periods lifted by {a.lift} m into {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
