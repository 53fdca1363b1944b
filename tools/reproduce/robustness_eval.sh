#!/usr/bin/env bash
# The robustness table of a velocity policy: the conditions a robot meets (ground friction, action
# latency, weaker and stronger drives, payload, sensor noise, pushes) one at a time on the flat
# floor, in MuJoCo (`eval --engine mujoco` condition flags) and in our simulator with hard contact
# (the task's randomisation keys fixed to the condition), one JSON object per line.
# usage: tools/reproduce/robustness_eval.sh EXPORTED_POLICY EPISODES [DIFFLOCO] > out.jsonl
#   ENGINES (environment, default "mujoco diffloco"): the engines to run, e.g. one per process.
#   TERRAIN (environment, default none: the flat floor): a sub-terrain of a terrain policy's task
#   at its hardest level instead (`eval --terrain`), e.g. pyramid_stairs.
#   CONDITIONS (environment, default all): the conditions to run by name, e.g. "nominal friction_1.5".
#   OURS_SET (environment): more task overrides for our simulator, e.g.
#   "sim.terrain_contact=closest" (each word one `--set`).
set -euo pipefail
policy=$1 episodes=$2 bin=${3:-build/diffloco}
engines=${ENGINES:-mujoco diffloco}
terrain=${TERRAIN:-none}
ours_set=()
for kv in ${OURS_SET:-}; do ours_set+=(--set "$kv"); done
# name | MuJoCo flags | our simulator's task overrides (each also fixes the others to nominal)
nominal="--set randomization.friction=[0.8,0.8] --set randomization.push_velocity=0
  --set randomization.observation_noise=false --set randomization.motor_strength=[1,1]
  --set randomization.action_delay_steps=[0,0] --set randomization.added_base_mass=[0,0]"
conditions=(
  "nominal||"
  "friction_0.3|--friction 0.3|--set randomization.friction=[0.3,0.3]"
  "friction_0.5|--friction 0.5|--set randomization.friction=[0.5,0.5]"
  "friction_1.5|--friction 1.5|--set randomization.friction=[1.5,1.5]"
  "delay_1|--action-delay 1|--set randomization.action_delay_steps=[1,1]"
  "delay_2|--action-delay 2|--set randomization.action_delay_steps=[2,2]"
  "motor_0.8|--motor-strength 0.8|--set randomization.motor_strength=[0.8,0.8]"
  "motor_1.2|--motor-strength 1.2|--set randomization.motor_strength=[1.2,1.2]"
  "payload_+5kg|--added-mass 5|--set randomization.added_base_mass=[5,5]"
  "noise|--observation-noise|--set randomization.observation_noise=true"
  "push_1.0|--push-velocity 1.0 --push-interval 5 8|--set randomization.push_velocity=1.0 --set randomization.push_interval_s=[5,8]"
)
for c in "${conditions[@]}"; do
  IFS='|' read -r name mj ours <<<"$c"
  [[ -z ${CONDITIONS:-} || " $CONDITIONS " == *" $name "* ]] || continue
  if [[ " $engines " == *" mujoco "* ]]; then
    printf '{"engine": "mujoco", "condition": "%s", "terrain_type": "%s", "result": ' "$name" \
      "$terrain"
    # shellcheck disable=SC2086
    "$bin" eval "$policy" --engine mujoco --cone elliptic --noslip 10 --terrain "$terrain" \
      --episodes "$episodes" --seed 1 $mj --json | tr -d '\n'
    printf '}\n'
  fi
  [[ " $engines " == *" diffloco "* ]] || continue
  printf '{"engine": "diffloco", "condition": "%s", "terrain_type": "%s", "result": ' "$name" \
    "$terrain"
  # shellcheck disable=SC2086
  "$bin" eval "$policy" --contact hard --terrain "$terrain" --episodes "$episodes" --envs 100 --seed 1 \
    $nominal $ours ${ours_set[@]+"${ours_set[@]}"} --json | tr -d '\n'
  printf '}\n'
done
