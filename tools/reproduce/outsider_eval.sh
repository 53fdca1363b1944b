#!/usr/bin/env bash
# docs/terrain.md's evaluation from the exported files alone: each policy's ONNX file run by the
# reference deployer (runtime/examples/mujoco_deployer.py: MuJoCo 4.0 and ONNX Runtime, no
# diffloco code) on grounds built of MuJoCo's own geoms, as someone who never saw our terrain
# would build them (random bumps as an hfield, a single step and stairs as boxes across the path,
# up and down), and on the plane at friction 0.3 and 1.5 and with 1 and 2 control steps of
# latency; the file's recommended MuJoCo options, eval seed 0. One JSON object per line: policy,
# condition label, the deployer's result (its conditions included).
# usage: tools/reproduce/outsider_eval.sh EPISODES STEM... [> out.jsonl]
#   CONDITIONS (environment): labels to run (default all), e.g. "stairs_up_21cm_0.5 plane".
#   e.g. tools/reproduce/outsider_eval.sh 100 pretrained/velocity_anymal_rough \
#          pretrained/velocity_anymal
#   DEPLOYER_PYTHON: a Python with mujoco and onnxruntime (default /opt/diffloco-venv/bin/python,
#   .ci/install-deps makes it). JOBS: evaluations run at once (default 2).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: tools/reproduce/outsider_eval.sh EPISODES STEM..." >&2; exit 2; }
episodes=$1
shift
py=${DEPLOYER_PYTHON:-/opt/diffloco-venv/bin/python}
deployer=$(cd "$(dirname "$0")/../.." && pwd)/runtime/examples/mujoco_deployer.py
# label|deployer options. Commands: the file's ranges, one draw per episode, on the plane and the
# bumps; straight ahead at 0.5 and 1 m/s across a step or stairs (legged_gym's stairs: rise
# 0.05 + 0.18 d on a 0.31 m tread, 21.2 cm on its last row); legged_gym's last-row pyramid of those
# stairs as boxes, from its centre.
conditions=(
  "plane|"
  "bumps_8cm|--ground bumps --height 0.08 --cell 0.2"
  "step_up_10cm_0.5|--ground step --height 0.1 --command 0.5 0 0"
  "step_down_10cm_0.5|--ground step --height -0.1 --command 0.5 0 0"
  "stairs_up_10cm_0.5|--ground stairs --height 0.1 --run 0.3 --command 0.5 0 0"
  "stairs_up_10cm_1.0|--ground stairs --height 0.1 --run 0.3 --command 1.0 0 0"
  "stairs_down_10cm_0.5|--ground stairs --height -0.1 --run 0.3 --command 0.5 0 0"
  "stairs_down_10cm_1.0|--ground stairs --height -0.1 --run 0.3 --command 1.0 0 0"
  "stairs_up_12cm_0.5|--ground stairs --height 0.12 --run 0.3 --command 0.5 0 0"
  "stairs_down_12cm_0.5|--ground stairs --height -0.12 --run 0.3 --command 0.5 0 0"
  "stairs_up_15cm_0.5|--ground stairs --height 0.15 --run 0.31 --command 0.5 0 0"
  "stairs_down_15cm_0.5|--ground stairs --height -0.15 --run 0.31 --command 0.5 0 0"
  "stairs_up_18cm_0.5|--ground stairs --height 0.18 --run 0.31 --command 0.5 0 0"
  "stairs_down_18cm_0.5|--ground stairs --height -0.18 --run 0.31 --command 0.5 0 0"
  "stairs_up_21cm_0.5|--ground stairs --height 0.212 --run 0.31 --command 0.5 0 0"
  "stairs_down_21cm_0.5|--ground stairs --height -0.212 --run 0.31 --command 0.5 0 0"
  "pyramid_up_21cm_0.5|--ground pyramid --height 0.212 --run 0.31 --command 0.5 0 0"
  "pyramid_down_21cm_0.5|--ground pyramid --height -0.212 --run 0.31 --command 0.5 0 0"
  "friction_0.3|--friction 0.3"
  "friction_1.5|--friction 1.5"
  "latency_1|--latency 1"
  "latency_2|--latency 2"
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jobs=()
for stem in "$@"; do
  [ -f "$stem.onnx" ] || { echo "outsider_eval.sh: no $stem.onnx" >&2; exit 2; }
  for c in "${conditions[@]}"; do
    [ -z "${CONDITIONS:-}" ] || [[ " $CONDITIONS " == *" ${c%%|*} "* ]] || continue
    jobs+=("$stem|$c")
  done
done
run_one() {  # index, "stem|label|options"
  local stem label options
  IFS='|' read -r stem label options <<<"$2"
  # shellcheck disable=SC2086
  result=$("$py" "$deployer" "$stem.onnx" --episodes "$episodes" --seed 0 $options --json)
  printf '{"policy": "%s", "condition": "%s", "result": %s}\n' "$(basename "$stem")" "$label" \
    "$result" >"$work/$1.json"
}
export -f run_one
export py deployer episodes work
for i in "${!jobs[@]}"; do printf '%s\0%s\0' "$i" "${jobs[$i]}"; done |
  xargs -0 -n 2 -P "${JOBS:-2}" bash -c 'run_one "$0" "$1"'
for i in "${!jobs[@]}"; do cat "$work/$i.json"; done
