#!/usr/bin/env bash
# The shipped policies (pretrained/) load and evaluate as the README states: 100 hard-contact
# episodes (the task's randomisation; dt 0.005 and 50 solver iterations, eval seed 0, except where
# the rough policy's terrain table says otherwise) each.
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
# The rough policy on every sub-terrain of its own ground at the hardest level, as the README's
# table evaluates it (the trained 10 solver iterations, eval seed 1): falls within about four
# standard deviations of the documented rate in 1000 (docs/data/terrain/
# velocity_anymal_rough_terrain_eval.jsonl: 15, 48, 18, 92, 56 and 70), so that a policy falling
# twice as often fails.
rough() {  # type, most falls in 100
  local out
  out=$("$bin" eval "$repo/pretrained/velocity_anymal_rough.pt" --contact hard --terrain "$1" \
        --episodes 100 --seed 1 --json 2>/dev/null) || fail "eval of the rough policy on $1 exited with $?"
  echo "velocity_anymal_rough.pt on $1: $out"
  echo "$out" | "$python" -c "import json, sys; d = json.load(sys.stdin); \
assert d['terrain'] == '$1 level 9' and d['episodes'] == 100 and d['falls'] <= $2, d" ||
    fail "the rough policy falls more than $2 times in 100 on $1 (level 9)"
}
rough rough 7
rough pyramid_slope 14
rough pyramid_slope_inverted 8
rough pyramid_stairs 21
rough pyramid_stairs_inverted 15
rough obstacles 18
echo "pretrained policies ok"
