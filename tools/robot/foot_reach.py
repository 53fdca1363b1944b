#!/usr/bin/env python3
"""How high a foot can reach ahead of its hip when each joint target stays within +-R rad of the
default pose: the bound a tanh-squashed action puts on a step up (the target is
default + scale * bound * tanh(.), so R = action scale x policy.squash_bound).

For every foot of a robot side file (configs/robots/*.yaml) and every R: the hip and knee joints
(every revolute joint of the leg but the first, the abduction, which stays at its default) swept
over default +- R on a grid, the base level at its default height above z = 0. Reported: the
highest foot-sphere bottom above the ground the robot stands on, among the poses whose foot centre
is ahead of the leg's hip joint in x (where a foot steps onto a riser it walks towards); and, for
comparison, the highest over all poses. A riser higher than the
first number cannot be stepped onto from below by that leg without the base rising or pitching.

Joint targets are not joint angles: a PD drive under load sags behind its target and overshoots
it in a swing, so the reach is a bound on the commanded pose, not on the motion.

usage: foot_reach.py [ROBOT.yaml] [--ranges R ...] [--grid N]
"""
import argparse
import os
import sys

# The URDF reader and forward kinematics of the independent robot check.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "checks"))
from check_urdf import REPO, add, fk, load_yaml, matvec, parse_urdf  # noqa: E402


def leg_joints(joints, foot):
    """The revolute joints from the base to `foot`, base first."""
    by_child = {j["child"]: j for j in joints}
    chain, link = [], foot
    while link in by_child:
        j = by_child[link]
        if j["type"] in ("revolute", "continuous"):
            chain.append(j["name"])
        link = j["parent"]
    return chain[::-1]


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("robot", nargs="?", default=os.path.join(REPO, "configs/robots/anymal.yaml"))
    ap.add_argument("--ranges", type=float, nargs="+", default=[0.5, 0.75, 1.0])
    ap.add_argument("--grid", type=int, default=61)
    a = ap.parse_args()
    y = load_yaml(a.robot)
    _, links, joints = parse_urdf(os.path.join(os.path.dirname(a.robot), y["urdf"]))
    default = {k: float(v) for k, v in y["default_joint_pos"].items()}
    height = float(y["default_base_height"])
    print(f"{os.path.basename(a.robot)}: base level at {height:.3f} m; foot-sphere bottom above "
          "the stance ground [m], the foot centre's x relative to its hip joint [m]")
    for foot in y["feet"]:
        chain = leg_joints(joints, foot)
        swept = chain[1:3]  # hip flexion and knee; the abduction chain[0] stays at its default
        hip_link = next(j["child"] for j in joints if j["name"] == chain[1])
        xyz, radius = links[foot]["spheres"][0]
        for r in a.ranges:
            best_ahead = best_any = None
            n = a.grid
            for i in range(n):
                for k in range(n):
                    q = dict(default)
                    q[swept[0]] = default[swept[0]] - r + 2 * r * i / (n - 1)
                    q[swept[1]] = default[swept[1]] - r + 2 * r * k / (n - 1)
                    pose = fk(links, joints, q)
                    R, p = pose[foot]
                    c = add(p, matvec(R, xyz))
                    hip_x = pose[hip_link][1][0]  # the hip joint's position
                    lift = height + c[2] - radius
                    dx = c[0] - hip_x
                    if best_any is None or lift > best_any[0]:
                        best_any = (lift, dx)
                    if dx >= 0 and (best_ahead is None or lift > best_ahead[0]):
                        best_ahead = (lift, dx)
            ahead_s = (f"{best_ahead[0]:.3f} (x {best_ahead[1]:+.3f})" if best_ahead
                       else "no pose ahead of the hip")
            print(f"  {foot:8s} +-{r:.2f} rad: highest ahead of the hip {ahead_s}; "
                  f"highest anywhere {best_any[0]:.3f} (x {best_any[1]:+.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
