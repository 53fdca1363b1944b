#!/usr/bin/env bash
# docs/experiments/climbing_levers.md#engine-knobs: one policy up legged_gym's 21.2 cm pyramid
# (straight ahead at 0.5 m/s from the centre), in our simulator under MuJoCo's protocol and in
# MuJoCo 4 (the reference deployer, the pyramid as boxes unless --grid), each engine with one of
# its own settings changed at a time: what moves the corner climbing in either engine.
# usage: tools/reproduce/corner_engine_knobs.sh STEM [DIFFLOCO] > out.jsonl
#   STEM: an exported policy (STEM.pt for ours, STEM.onnx for MuJoCo 4).
#   OURS_EPISODES (default 200), MUJOCO_EPISODES (default 50); DEPLOYER_PYTHON as outsider_eval.sh.
# One JSON object per line: engine, knob (the setting changed; "" the default), result.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: tools/reproduce/corner_engine_knobs.sh STEM [DIFFLOCO]" >&2; exit 2; }
stem=$1
bin=${2:-build/diffloco}
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${DEPLOYER_PYTHON:-/opt/diffloco-venv/bin/python}
# label|contact|--set words: our simulator, hard contact unless the contact says otherwise.
ours=(
  "default|hard|"
  "sim.iterations=50|hard|sim.iterations=50"
  "sim.dt=0.001|hard|sim.dt=0.001"
  "contact=smoothed|smoothed|"
  "contact=soft|soft|"
  "friction=0.5|hard|randomization.friction=[0.5,0.5]"
  "terrain.spacing=0.02|hard|terrain.spacing=0.02"
  "terrain.interpolant=catmull_rom|hard|terrain.interpolant=catmull_rom"
  "sim.terrain_contact=vertical|hard|sim.terrain_contact=vertical"
)
for o in "${ours[@]}"; do
  IFS='|' read -r label contact sets <<<"$o"
  printf '{"engine": "diffloco", "knob": "%s", "result": ' "${label/default/}"
  OURS_CONTACT=$contact OURS_SET=$sets PROTOCOL=mujoco ENGINES=diffloco COMMAND="0.5 0 0" \
    TYPES=pyramid_stairs_inverted LEVELS=9 ENVS=100 THREADS=1 \
    "$root/tools/reproduce/terrain_eval.sh" "$stem.pt" "${OURS_EPISODES:-200}" 0 "$bin" |
    python3 -c 'import json, sys; print(json.dumps(json.loads(sys.stdin.read())["result"]), end="")'
  printf '}\n'
done
# label|deployer options: MuJoCo 4 with the file's options (elliptic cone, 10 noslip iterations).
mujoco=(
  "default|"
  "friction=1.2|--friction 1.2"
  "dt=0.001|--dt 0.001"
  "dt=0.001 noslip=0|--dt 0.001 --noslip 0"
  "cone=pyramidal noslip=0|--cone pyramidal --noslip 0"
  "impratio=10|--impratio 10"
  "dt=0.001 solref=0.002|--dt 0.001 --solref 0.002 1"
  "grid=0.05|--grid 0.05"
)
for o in "${mujoco[@]}"; do
  IFS='|' read -r label options <<<"$o"
  printf '{"engine": "mujoco", "knob": "%s", "result": ' "${label/default/}"
  # shellcheck disable=SC2086
  "$py" "$root/runtime/examples/mujoco_deployer.py" "$stem.onnx" --episodes "${MUJOCO_EPISODES:-50}" \
    --seed 0 --ground pyramid --height 0.212 --run 0.31 --command 0.5 0 0 $options --json |
    tr -d '\n'
  printf '}\n'
done
