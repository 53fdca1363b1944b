#!/usr/bin/env bash
# The shipped policies (pretrained/) load and evaluate as the README states: 100 hard-contact
# episodes (dt 0.005, 50 solver iterations, the task's randomisation, eval seed 0) each.
# usage: pretrained_test.sh DIFFLOCO PYTHON3 REPO
set -euo pipefail
bin=$1 python=$2 repo=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
check() {  # file, python condition on the eval's JSON object d, extra eval arguments
  local out
  out=$("$bin" eval "$repo/pretrained/$1" --contact hard --dt 0.005 --iterations 50 \
        --episodes 100 --seed 0 --json "${@:3}" 2>/dev/null) || fail "eval of pretrained/$1 exited with $?"
  echo "$1: $out"
  echo "$out" | "$python" -c "import json, sys; d = json.load(sys.stdin); assert $2, d" ||
    fail "pretrained/$1 does not evaluate as documented: $2"
}
# Every shipped policy in all three forms (TorchScript, ONNX, metadata), and nothing unnamed.
shipped="velocity_anymal walk_quadruped velocity_anymal_rough"
for name in $shipped; do
  for ext in pt onnx yaml; do
    [ -s "$repo/pretrained/$name.$ext" ] || fail "pretrained/$name.$ext is missing or empty"
  done
done
for f in "$repo"/pretrained/*.pt; do
  name=$(basename "$f" .pt)
  [[ " $shipped " == *" $name "* ]] || fail "$f is not among the policies this test checks"
done
check velocity_anymal.pt \
  'd["task"] == "velocity" and d["falls"] == 0 and d["lin_vel_rms"] <= 0.15 and d["yaw_rate_rms"] <= 0.10'
check walk_quadruped.pt \
  'd["task"] == "walk" and d["falls"] == 0 and abs(d["forward_velocity_mean"] - 1.0) < 0.05'
check velocity_anymal_rough.pt \
  'd["task"] == "velocity_rough" and d["falls"] <= 2 and d["lin_vel_rms"] <= 0.21' \
  --terrain none
check velocity_anymal_rough.pt \
  'd["terrain"] == "rough level 9" and d["falls"] <= 30' --terrain rough
echo "pretrained policies ok"
