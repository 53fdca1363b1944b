#!/usr/bin/env python3
"""tools/robot/foot_reach.py on a synthetic one-legged robot (run by ctest, tests/CMakeLists.txt).

The leg hangs straight down from its hip: an abduction joint, then hip flexion and knee about y,
thigh and shank 0.3 m each, a foot sphere of radius 0.02 at the shank's end, default pose all
zeros, base height 0.62 (the foot's bottom on the ground). With both swept joints in [-R, R] the
highest foot ahead of the hip is at hip R and knee R (the foot swings forward and up): its centre
0.3 cos R + 0.3 cos 2R below the hip, so its bottom 0.6 - 0.3 cos R - 0.3 cos 2R above the ground.
"""
import math
import os
import subprocess
import sys
import tempfile

repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tool = os.path.join(repo, "tools/robot/foot_reach.py")

URDF = """<?xml version="1.0"?>
<robot name="leg">
  <link name="base"><inertial><mass value="10"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="HAA" type="revolute"><parent link="base"/><child link="HIP"/>
    <origin xyz="0 0 0"/><axis xyz="1 0 0"/><limit effort="80" velocity="8" lower="-1" upper="1"/></joint>
  <link name="HIP"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="HFE" type="revolute"><parent link="HIP"/><child link="THIGH"/>
    <origin xyz="0 0 0"/><axis xyz="0 -1 0"/><limit effort="80" velocity="8" lower="-9" upper="9"/></joint>
  <link name="THIGH"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="KFE" type="revolute"><parent link="THIGH"/><child link="SHANK"/>
    <origin xyz="0 0 -0.3"/><axis xyz="0 -1 0"/><limit effort="80" velocity="8" lower="-9" upper="9"/></joint>
  <link name="SHANK"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="FOOT_J" type="fixed"><parent link="SHANK"/><child link="FOOT"/><origin xyz="0 0 -0.3"/></joint>
  <link name="FOOT"><collision><geometry><sphere radius="0.02"/></geometry></collision></link>
</robot>
"""

YAML = """urdf: leg.urdf
feet: [FOOT]
default_joint_pos: {HAA: 0.0, HFE: 0.0, KFE: 0.0}
default_base_height: 0.62
"""

with tempfile.TemporaryDirectory() as d:
    open(os.path.join(d, "leg.urdf"), "w").write(URDF)
    robot = os.path.join(d, "leg.yaml")
    open(robot, "w").write(YAML)
    out = subprocess.run([sys.executable, tool, robot, "--ranges", "0.5", "--grid", "21"],
                         capture_output=True, text=True, check=True).stdout
print(out)
line = next(l for l in out.splitlines() if "FOOT" in l and "+-0.50" in l)
got = float(line.split("highest ahead of the hip")[1].split()[0])
want = 0.6 - 0.3 * math.cos(0.5) - 0.3 * math.cos(1.0)
ok = abs(got - want) < 5e-4
print(f"highest ahead of the hip: {got:.4f}, closed form {want:.4f} -> {'ok' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
