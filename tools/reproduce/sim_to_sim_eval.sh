#!/usr/bin/env bash
# docs/sim_to_sim.md's tables of a shipped policy: `diffloco eval --engine mujoco` (the .pt, the
# MuJoCo diffloco is built against) and the reference deployer (the .onnx alone), per MuJoCo
# option set and time step, 100 episodes, eval seed 0; one JSON object per line: options, dt,
# engine, result.
# usage: tools/reproduce/sim_to_sim_eval.sh PRETRAINED_STEM DT... [> out.jsonl]
#   e.g. tools/reproduce/sim_to_sim_eval.sh pretrained/walk_quadruped 0.002 0.005 0.01
#   DIFFLOCO (environment): the program (default build/diffloco); DEPLOYER_PYTHON: a Python with
#   mujoco and onnxruntime (default /opt/diffloco-venv/bin/python, .ci/install-deps makes it).
#   OPTIONS (environment): MuJoCo option sets, "defaults" and/or "rk4" (default: "defaults rk4").
set -euo pipefail
stem=$1
shift
bin=${DIFFLOCO:-build/diffloco}
py=${DEPLOYER_PYTHON:-/opt/diffloco-venv/bin/python}
for options in ${OPTIONS:-defaults rk4}; do
  case "$options" in
    defaults) ours=() theirs=() ;;
    rk4) ours=(--integrator RK4) theirs=(--integrator rk4) ;;
    *) echo "sim_to_sim_eval.sh: unknown option set '$options'" >&2; exit 2 ;;
  esac
  for dt in "$@"; do
    printf '{"options": "%s", "dt": %s, "engine": "diffloco", "result": ' "$options" "$dt"
    "$bin" eval "$stem.pt" --engine mujoco --dt "$dt" "${ours[@]}" --episodes 100 --seed 0 \
      --json | tr -d '\n'
    printf '}\n{"options": "%s", "dt": %s, "engine": "deployer", "result": ' "$options" "$dt"
    "$py" runtime/examples/mujoco_deployer.py "$stem.onnx" --dt "$dt" "${theirs[@]}" \
      --episodes 100 --seed 0 --json | tr -d '\n'
    printf '}\n'
  done
done
