#!/usr/bin/env python3
"""Independent check of diffloco's robot description files (configs/robots/*.urdf + *.yaml).

Pure Python 3 (standard library only; PyYAML is used if present, otherwise a tiny parser for the
flat YAML subset our robot side files use). It does NOT share code with the C++ loader, so it serves
as a cross-check of both the files and the loader.

What it does, per robot side file (default: configs/robots/anymal.yaml and quadruped.yaml):
  * parses the URDF named by `urdf:` and checks the conventions our loader supports:
    one root link `base`; 12 revolute joints named LF_HAA ... RH_KFE, legs in file order LF, RF, LH, RH;
    every revolute joint has <limit effort velocity lower upper>; every non-foot link has an <inertial>
    whose inertia is physically valid (positive principal moments obeying the triangle inequality);
    every foot link (yaml `feet:`) hangs off a fixed joint, has a <sphere> collision and no <inertial>;
  * total mass (fixed links merged; a link without <inertial> is massless) vs the reference facts;
  * forward kinematics at the zero pose and at `default_joint_pos`, with the base frame at the origin and
    unrotated: foot-sphere centres, knee positions, whole-body COM; stance base height = height of the
    base origin at which the lowest foot-sphere point touches z = 0;
  * compares those with the robots' published reference facts (their numbers copied below) and with the yaml's own `default_base_height`, `torque_limit` and `joint_order`.

Usage:  python3 tools/checks/check_urdf.py [ROBOT.yaml ...]     (exit status 1 if any check fails)
"""
import math
import os
import sys
import xml.etree.ElementTree as ET

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
JOINTS = [f"{leg}_{j}" for leg in ("LF", "RF", "LH", "RH") for j in ("HAA", "HFE", "KFE")]

# The robots' published reference numbers (key = URDF robot name).
FACTS = {
    "anymal": {  # anymal_d_facts.yaml: legs only, foot merged into the shank
        "total_mass": 51.755,
        "stance_height": 0.58851,          # derived_geometry.default_pose_base_height_feet_on_ground
        "zero_pose_height": 0.67853,        # derived_geometry.zero_pose_base_height_feet_on_ground
        "feet_xy": (0.49512, 0.30961),      # |x|, |y| of the foot centres at the default pose
        "effort": 80.0,
    },
    "quadruped": {  # warp_quadruped_facts.yaml: URDF inertials (paper Table 3), capsule end r 0.02
        "total_mass": 30.702,
        "stance_height": 0.47587,           # derived_geometry.nominal_stance_base_height
        "zero_pose_height": 0.52,
        # feet |x|,|y| at the nominal pose: warp-order reading (knees out) / naive URDF-order reading
        "feet_xy": {"warp_order": (0.348, 0.247), "urdf_order": (0.252, 0.247)},
        "effort": 20.0,                     # paper Table 3 / DESIGN.md (the original URDF says 80)
    },
}


# ----------------------------------------------------------------------------- small linear algebra
def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def matvec(a, v):
    return [sum(a[i][k] * v[k] for k in range(3)) for i in range(3)]


def transpose(a):
    return [[a[j][i] for j in range(3)] for i in range(3)]


def add(u, v):
    return [u[i] + v[i] for i in range(3)]


def rpy_to_R(r, p, y):
    """URDF convention R = Rz(y) * Ry(p) * Rx(r)."""
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr]]


def axis_angle(axis, q):
    n = math.sqrt(sum(t * t for t in axis))
    x, y, z = (t / n for t in axis)
    c, s, C = math.cos(q), math.sin(q), 1 - math.cos(q)
    return [[c + x * x * C, x * y * C - z * s, x * z * C + y * s],
            [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
            [z * x * C - y * s, z * y * C + x * s, c + z * z * C]]


def sym_eigvals(m):
    """Eigenvalues of a symmetric 3x3 matrix (closed form), ascending."""
    p1 = m[0][1] ** 2 + m[0][2] ** 2 + m[1][2] ** 2
    q = (m[0][0] + m[1][1] + m[2][2]) / 3
    if p1 == 0:
        return sorted([m[0][0], m[1][1], m[2][2]])
    p2 = sum((m[i][i] - q) ** 2 for i in range(3)) + 2 * p1
    p = math.sqrt(p2 / 6)
    b = [[(m[i][j] - (q if i == j else 0)) / p for j in range(3)] for i in range(3)]
    detb = (b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1]) - b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0])
            + b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]))
    r = max(-1.0, min(1.0, detb / 2))
    phi = math.acos(r) / 3
    e1 = q + 2 * p * math.cos(phi)
    e3 = q + 2 * p * math.cos(phi + 2 * math.pi / 3)
    return sorted([e1, 3 * q - e1 - e3, e3])


# ----------------------------------------------------------------------------- input parsing
def floats(s, n=3):
    v = [float(t) for t in (s or "").split()]
    return v if v else [0.0] * n


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def parse_urdf(path):
    root = ET.parse(path).getroot()
    links, joints = {}, []
    for l in root.findall("link"):
        d = {"name": l.get("name"), "mass": 0.0, "com": [0.0] * 3, "I": [[0.0] * 3 for _ in range(3)],
             "has_inertial": False, "spheres": []}
        ine = l.find("inertial")
        if ine is not None:
            o = ine.find("origin")
            xyz = floats(o.get("xyz")) if o is not None else [0.0] * 3
            rpy = floats(o.get("rpy")) if o is not None else [0.0] * 3
            i = ine.find("inertia").attrib
            Ic = [[float(i["ixx"]), float(i["ixy"]), float(i["ixz"])],
                  [float(i["ixy"]), float(i["iyy"]), float(i["iyz"])],
                  [float(i["ixz"]), float(i["iyz"]), float(i["izz"])]]
            R = rpy_to_R(*rpy)
            d.update(mass=float(ine.find("mass").get("value")), com=xyz, I=matmul(matmul(R, Ic), transpose(R)),
                     has_inertial=True, I_local=Ic)
        for c in l.findall("collision"):
            s = c.find("geometry/sphere")
            if s is not None:
                o = c.find("origin")
                d["spheres"].append((floats(o.get("xyz")) if o is not None else [0.0] * 3, float(s.get("radius"))))
        links[d["name"]] = d
    for j in root.findall("joint"):
        o = j.find("origin")
        lim = j.find("limit")
        joints.append({
            "name": j.get("name"), "type": j.get("type"),
            "parent": j.find("parent").get("link"), "child": j.find("child").get("link"),
            "xyz": floats(o.get("xyz")) if o is not None else [0.0] * 3,
            "rpy": floats(o.get("rpy")) if o is not None else [0.0] * 3,
            "axis": floats(j.find("axis").get("xyz")) if j.find("axis") is not None else [1.0, 0.0, 0.0],
            "limit": dict(lim.attrib) if lim is not None else None,
        })
    return root.get("name"), links, joints


def fk(links, joints, q):
    """World pose (R, p) of every link with the base at the origin, unrotated."""
    pose = {"base": ([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]], [0.0, 0.0, 0.0])}
    pending = list(joints)
    while pending:
        rest = []
        for j in pending:
            if j["parent"] not in pose:
                rest.append(j)
                continue
            Rp, pp = pose[j["parent"]]
            R = matmul(Rp, rpy_to_R(*j["rpy"]))
            p = add(pp, matvec(Rp, j["xyz"]))
            if j["type"] in ("revolute", "continuous"):
                R = matmul(R, axis_angle(j["axis"], q.get(j["name"], 0.0)))
            pose[j["child"]] = (R, p)
        if len(rest) == len(pending):
            raise ValueError("disconnected joints: " + ", ".join(j["name"] for j in rest))
        pending = rest
    return pose


def stance(links, joints, feet, q):
    pose = fk(links, joints, q)
    centres, lowest = {}, math.inf
    for f in feet:
        R, p = pose[f]
        for xyz, r in links[f]["spheres"]:
            c = add(p, matvec(R, xyz))
            centres[f] = c
            lowest = min(lowest, c[2] - r)
    return -lowest, centres, pose


# ----------------------------------------------------------------------------- checks
class Checker:
    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, ok, what):
        print(("  ok    " if ok else "  FAIL  ") + what)
        if ok:
            self.passed += 1
        else:
            self.failed += 1


def check_robot(yaml_path, chk):
    cfg = load_yaml(yaml_path)
    urdf_path = os.path.join(os.path.dirname(yaml_path), cfg["urdf"])
    name, links, joints = parse_urdf(urdf_path)
    facts = FACTS.get(name, {})
    print(f"== {os.path.relpath(yaml_path, REPO)}  ->  {os.path.relpath(urdf_path, REPO)}  (robot '{name}')")
    feet = list(cfg["feet"])

    # --- structure
    children = {j["child"] for j in joints}
    roots = [l for l in links if l not in children]
    chk(roots == ["base"] and cfg.get("base_link", "base") == "base", f"single root link 'base' (roots: {roots})")
    rev = [j for j in joints if j["type"] == "revolute"]
    chk([j["name"] for j in rev] == JOINTS, "12 revolute joints LF_HAA..RH_KFE in file order LF, RF, LH, RH")
    chk(list(cfg["joint_order"]) == JOINTS, "yaml joint_order matches the URDF order")
    chk(all(j["type"] in ("revolute", "fixed") for j in joints), "only revolute and fixed joints")
    chk(all(j["limit"] and all(k in j["limit"] for k in ("effort", "velocity", "lower", "upper")) for j in rev),
        "every revolute joint has <limit effort velocity lower upper>")
    efforts = {float(j["limit"]["effort"]) for j in rev}
    chk(efforts == {float(cfg["torque_limit"])} == {facts.get("effort", float(cfg["torque_limit"]))},
        f"effort limits {sorted(efforts)} == yaml torque_limit {cfg['torque_limit']} == facts {facts.get('effort')}")
    for f in feet:
        fj = [j for j in joints if j["child"] == f]
        chk(len(fj) == 1 and fj[0]["type"] == "fixed" and not links[f]["has_inertial"]
            and len(links[f]["spheres"]) == 1,
            f"foot {f}: fixed joint, massless (no <inertial>), one sphere r={links[f]['spheres'][0][1] if links[f]['spheres'] else None}")
    bad = []
    for l in links.values():
        if l["name"] in feet:
            continue
        if not l["has_inertial"] or l["mass"] <= 0:
            bad.append(l["name"] + " (no inertial)")
            continue
        e = sym_eigvals(l["I_local"])
        if e[0] <= 0 or e[0] + e[1] < e[2] * (1 - 1e-9):
            bad.append(f"{l['name']} (principal moments {e})")
    chk(not bad, "every non-foot link has a valid <inertial>" + (": " + ", ".join(bad) if bad else ""))
    q0 = {k: float(v) for k, v in cfg["default_joint_pos"].items()}
    chk(sorted(q0) == sorted(JOINTS), "default_joint_pos names all 12 joints")
    for j in rev:
        lo, hi = float(j["limit"]["lower"]), float(j["limit"]["upper"])
        if not lo <= q0.get(j["name"], 0.0) <= hi:
            chk(False, f"default {j['name']}={q0[j['name']]} within [{lo}, {hi}]")

    # --- mass
    total = sum(l["mass"] for l in links.values())
    per = {k: links[k]["mass"] for k in ("base", "LF_HIP", "LF_THIGH", "LF_SHANK") if k in links}
    print(f"  total mass {total:.5f} kg; " + ", ".join(f"{k} {v:g}" for k, v in per.items()))
    if "total_mass" in facts:
        chk(abs(total - facts["total_mass"]) < 1e-3, f"total mass {total:.5f} vs facts {facts['total_mass']}")

    # --- kinematics
    h0, _, _ = stance(links, joints, feet, {})
    h, centres, pose = stance(links, joints, feet, q0)
    m_com = [0.0] * 3
    for l in links.values():
        R, p = pose[l["name"]]
        m_com = add(m_com, [l["mass"] * t for t in add(p, matvec(R, l["com"]))])
    com = [t / total for t in m_com]
    print(f"  zero-pose stance height {h0:.5f} m; default-pose stance height {h:.5f} m; "
          f"COM at default pose (base frame) ({com[0]:.4f}, {com[1]:.4f}, {com[2]:.4f})")
    for f in feet:
        leg = f.split("_")[0]
        hfe = pose[leg + "_THIGH"][1]
        knee = pose[leg + "_SHANK"][1]
        c = centres[f]
        print(f"    {leg}: HFE x {hfe[0]:+.4f}  knee ({knee[0]:+.4f}, {knee[1]:+.4f}, {knee[2]:+.4f})  "
              f"foot centre ({c[0]:+.5f}, {c[1]:+.5f}, {c[2]:+.5f})")
    if "zero_pose_height" in facts:
        chk(abs(h0 - facts["zero_pose_height"]) < 5e-4, f"zero-pose height {h0:.5f} vs facts {facts['zero_pose_height']}")
    if "stance_height" in facts:
        chk(abs(h - facts["stance_height"]) < 5e-4, f"default-pose height {h:.5f} vs facts {facts['stance_height']}")
    chk(abs(h - float(cfg["default_base_height"])) < 1e-4,
        f"yaml default_base_height {cfg['default_base_height']} vs computed {h:.5f}")
    xs = sorted({round(abs(c[0]), 3) for c in centres.values()})
    ys = sorted({round(abs(c[1]), 3) for c in centres.values()})
    fx = facts.get("feet_xy")
    if isinstance(fx, dict):
        match = [k for k, v in fx.items() if abs(xs[0] - v[0]) < 2e-3 and abs(ys[0] - v[1]) < 2e-3]
        chk(len(xs) == 1 and len(ys) == 1 and len(match) == 1,
            f"feet at (+-{xs}, +-{ys}) symmetric; matches facts reading {match}")
    elif fx:
        chk(len(xs) == 1 and len(ys) == 1 and abs(xs[0] - fx[0]) < 2e-3 and abs(ys[0] - fx[1]) < 2e-3,
            f"feet at (+-{xs}, +-{ys}) vs facts (+-{fx[0]}, +-{fx[1]})")


def main(argv):
    paths = argv[1:] or [os.path.join(REPO, "configs", "robots", n) for n in ("anymal.yaml", "quadruped.yaml")]
    chk = Checker()
    for p in paths:
        check_robot(os.path.abspath(p), chk)
    print(f"{chk.passed} passed, {chk.failed} failed")
    return 1 if chk.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
