"""The two MuJoCo models of one exported policy agree: the reference deployer's (MuJoCo 4.0 from
the embedded URDF, runtime/examples/mujoco_deployer.py) and the MJCF that `diffloco eval --engine
mujoco --save-mjcf` compiled (generated from our parsed URDF by mujoco/mujoco_model.cpp).
Compares what the dynamics depend on: tree, masses, full inertia tensors about the centre of
mass (the principal-axes order and quaternion may differ), joint axes, armature, damping,
frictionloss, limits in force, geoms and which collide, contact parameters, engine options.
usage: compare_mujoco_models.py POLICY.onnx MODEL.xml DT [--cone C] [--noslip N] (the engine
options both were built with); exit 1 with the differences."""
import argparse
import os
import sys

import mujoco
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "runtime", "examples"))
import mujoco_deployer as deployer  # noqa: E402

TOL = 1e-12  # relative


def full_inertia(m, i):
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, m.body_iquat[i])
    R = R.reshape(3, 3)
    return R @ np.diag(m.body_inertia[i]) @ R.T


def main():
    p = argparse.ArgumentParser()
    p.add_argument("policy")
    p.add_argument("mjcf")
    p.add_argument("dt", type=float)
    p.add_argument("--cone", default="pyramidal")
    p.add_argument("--noslip", type=int, default=0)
    cli = p.parse_args()
    policy, mjcf = cli.policy, cli.mjcf
    meta, _ = deployer.load_policy(policy)
    args = deployer.parse_args([policy, "--dt", str(cli.dt), "--integrator", "euler", "--cone",
                                cli.cone, "--solver", "newton", "--iterations", "100",
                                "--noslip", str(cli.noslip)])
    a = deployer.build_model(meta, args)
    b = mujoco.MjModel.from_xml_path(mjcf)
    bad = []

    def same(what, x, y, scale=1.0):
        x, y = np.asarray(x, float), np.asarray(y, float)
        if x.shape != y.shape:
            bad.append(f"{what}: shapes {x.shape} / {y.shape}")
        elif x.size and np.abs(x - y).max() > TOL * max(scale, np.abs(y).max()):
            bad.append(f"{what}: {x.ravel()} / {y.ravel()}")

    bodies = [a.body(i).name for i in range(a.nbody)]
    if sorted(bodies) != sorted(b.body(i).name for i in range(b.nbody)):
        sys.exit(f"bodies differ: {bodies} / {[b.body(i).name for i in range(b.nbody)]}")
    for i in range(1, a.nbody):
        n = bodies[i]
        j = b.body(n).id
        same(f"{n} parent", [a.body_parentid[i] and bodies.index(a.body(a.body_parentid[i]).name)],
             [b.body_parentid[j] and bodies.index(b.body(b.body_parentid[j]).name)])
        for f in ("body_mass", "body_pos", "body_ipos"):
            same(f"{n} {f}", getattr(a, f)[i], getattr(b, f)[j])
        qa, qb = a.body_quat[i], b.body_quat[j]  # q and -q: the same rotation
        same(f"{n} body_quat", qa if qa @ qb >= 0 else -qa, qb)
        same(f"{n} inertia", full_inertia(a, i), full_inertia(b, j))
    for i in range(a.njnt):
        n = a.joint(i).name or bodies[a.jnt_bodyid[i]]
        j = b.joint(n).id if a.jnt_type[i] != mujoco.mjtJoint.mjJNT_FREE else 0
        for f in ("jnt_type", "jnt_axis", "jnt_pos", "jnt_limited", "jnt_qposadr", "jnt_dofadr"):
            same(f"{n} {f}", getattr(a, f)[i], getattr(b, f)[j])
        if a.jnt_limited[i]:
            same(f"{n} jnt_range", a.jnt_range[i], b.jnt_range[j])
    for f in ("dof_armature", "dof_damping", "dof_frictionloss", "qpos0"):
        same(f, getattr(a, f), getattr(b, f))

    def geoms(m):
        return sorted((m.body(m.geom_bodyid[g]).name, int(m.geom_type[g]),
                       *np.round(m.geom_size[g], 12), *np.round(m.geom_pos[g], 12),
                       int(m.geom_contype[g]), int(m.geom_conaffinity[g]), int(m.geom_condim[g]),
                       *m.geom_friction[g], *m.geom_solref[g], *m.geom_solimp[g],
                       m.geom_margin[g], m.geom_gap[g], int(m.geom_priority[g]), m.geom_solmix[g])
                      for g in range(m.ngeom))
    if geoms(a) != geoms(b):
        bad.append(f"geoms: {geoms(a)} / {geoms(b)}")
    for f in ("timestep", "gravity", "integrator", "cone", "solver", "iterations", "tolerance",
              "ls_iterations", "noslip_iterations", "impratio", "o_margin", "density",
              "viscosity", "wind", "magnetic", "disableflags", "enableflags"):
        same(f"option {f}", getattr(a.opt, f), getattr(b.opt, f))
    if bad:
        print("the models differ:\n  " + "\n  ".join(bad))
        return 1
    print(f"models agree ({a.nbody - 1} bodies, {a.ngeom} geoms, relative tolerance {TOL})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
