#!/bin/bash
# ctest deploy_reference_mujoco: the contract test. The shipped policies are upgraded to the
# current metadata and exported as ONNX (`diffloco export OLD.pt --format both`); the reference
# deployer (runtime/examples/mujoco_deployer.py: MuJoCo from PyPI, the robot from the embedded
# URDF, no diffloco code) runs them, and its numbers are compared with `diffloco eval --engine
# mujoco` (the MuJoCo it is built against, a model generated from our parsed URDF) on the same
# seeds and options.
# The two MuJoCo models are compared field by field first (tests/runtime/compare_mujoco_models.py).
# The two programs run the same episodes on models equal to round-off (MuJoCo 2.2.2 and 4.0, the
# inertia's principal axes in another order): the shipped files' falls agree and their speeds and
# tracking errors to four digits (docs/sim_to_sim.md), so the tolerance here is 1e-3.
# Skipped (exit 77) when the Python lacks mujoco/onnxruntime/onnx or diffloco lacks ONNX.
# usage: reference_deployer_test.sh DIFFLOCO PYTHON REPO WORKDIR
set -u
bin=$1 python=$2 repo=$3 work=$4
if ! "$python" -c "import mujoco, onnxruntime, onnx, numpy" 2>/dev/null; then
  echo "SKIP: $python lacks mujoco/onnxruntime/onnx (bash .ci/install-deps makes the test venv)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
compare() {  # name, dt, episodes, python condition on cpp (c) and reference (r) JSON objects,
             # MuJoCo options given to both (optional); the policy: pretrained/<name>.pt, or the
             # run folder or file in $source; $length: episodes of that many seconds
  local name=$1 dt=$2 episodes=$3 cond=$4 options=${5:-} out policy=${source:-$repo/pretrained/$1.pt}
  out=$("$bin" export "$policy" --format both -o "$work/$name.pt" 2>&1) || {
    echo "$out"
    if echo "$out" | grep -q "without libonnx-dev"; then echo "SKIP: no ONNX"; exit 77; fi
    fail "export of $policy"
  }
  local cpp ref
  # shellcheck disable=SC2086
  cpp=$("$bin" eval "$work/$name.pt" --engine mujoco --dt "$dt" --episodes "$episodes" --seed 0 $options \
        ${length:+--episode-length "$length"} \
        --save-mjcf "$work/$name.xml" --json 2>/dev/null) || fail "diffloco eval --engine mujoco of $name"
  # The models themselves agree to round-off (masses, full inertia tensors, frames, joints,
  # geoms and contact parameters, engine options): what the file says is enough to rebuild it.
  # shellcheck disable=SC2086
  "$python" "$repo/tests/runtime/compare_mujoco_models.py" "$work/$name.onnx" "$work/$name.xml" \
    "$dt" $options || fail "$name: the reference deployer's MuJoCo model differs from diffloco's"
  # shellcheck disable=SC2086
  ref=$("$python" "$repo/runtime/examples/mujoco_deployer.py" "$work/$name.onnx" --dt "$dt" \
        --episodes "$episodes" --seed 0 $options ${length:+--episode-length "$length"} --json) ||
    fail "reference deployer on $name.onnx"
  echo "$name, diffloco eval --engine mujoco: $cpp"
  echo "$name, reference deployer:             $ref"
  "$python" - "$cpp" "$ref" <<PY || fail "$name: the reference deployer disagrees: $cond"
import json, sys
c, r = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert $cond, (c, r)
PY
}
compare walk_quadruped 0.002 20 \
  'c["falls"] == r["falls"] and abs(c["forward_velocity_mean"] - r["forward_velocity_mean"]) < 1e-3'
compare velocity_anymal 0.005 10 \
  'c["falls"] == r["falls"] and abs(c["lin_vel_rms"] - r["lin_vel_rms"]) < 1e-3 and abs(c["yaw_rate_rms"] - r["yaw_rate_rms"]) < 1e-3'
# The rough-terrain policy on the plane: its height scan computed from the term's definition
# alone (rays down onto the ground), with the cone and no-slip iterations its file recommends.
compare velocity_anymal_rough 0.005 10 \
  'c["falls"] == r["falls"] and abs(c["lin_vel_rms"] - r["lin_vel_rms"]) < 1e-3 and abs(c["yaw_rate_rms"] - r["yaw_rate_rms"]) < 1e-3' \
  "--cone elliptic --noslip 10"
# The last actions as an observation (action_history): tests/runtime/velocity_action_history.pt
# is a policy of the velocity config with the term (`diffloco train
# configs/velocity_anymal_shac.yaml --set shac.iterations=20 --set
# 'task.observations.action_history={steps: 3}'`, then `diffloco export`), kept as a file so
# that the check does not depend on a training's round-off. It stumbles; over 1 s episodes,
# before the two engines' round-off grows, the two programs agree to 1e-7 (the history in
# reversed order: 0.05 m/s apart).
source=$repo/tests/runtime/velocity_action_history.pt length=1 compare velocity_action_history 0.005 10 \
  'c["falls"] == r["falls"] and abs(c["lin_vel_rms"] - r["lin_vel_rms"]) < 1e-5 and abs(c["yaw_rate_rms"] - r["yaw_rate_rms"]) < 1e-5'
echo "reference deployer ok"
