#!/usr/bin/env bash
# Where a velocity policy falls on a terrain, by command: the per-terrain evaluation of
# tools/reproduce/terrain_eval.sh (our simulator, hard contact, the hardest level, eval seed 1) with
# the task's command ranges narrowed to one kind of command at a time (forward or backward, fast or
# slow; sideways; turning on the spot; every command at half the range), one JSON object per line.
# usage: tools/reproduce/command_split_eval.sh EXPORTED_POLICY EPISODES [DIFFLOCO] > out.jsonl
#   TYPES (environment, default "pyramid_stairs pyramid_stairs_inverted"): the sub-terrain types.
set -euo pipefail
policy=$1 episodes=$2 bin=${3:-build/diffloco}
types=${TYPES:-pyramid_stairs pyramid_stairs_inverted}
# name | command ranges [m/s, m/s, rad/s] (x | y | yaw); "task": the task's own
splits=(
  "task|||"
  "forward_fast|[0.5,1.0]|[0,0]|[0,0]"
  "forward_slow|[0.0,0.5]|[0,0]|[0,0]"
  "backward_fast|[-1.0,-0.5]|[0,0]|[0,0]"
  "backward_slow|[-0.5,0.0]|[0,0]|[0,0]"
  "sideways|[0,0]|[-1.0,1.0]|[0,0]"
  "turning|[0,0]|[0,0]|[-1.0,1.0]"
  "half_range|[-0.5,0.5]|[-0.5,0.5]|[-0.5,0.5]"
)
for t in $types; do
  for s in "${splits[@]}"; do
    IFS='|' read -r name vx vy wz <<<"$s"
    ranges=()
    [[ -z $vx ]] || ranges=(--set "commands.lin_vel_x=$vx" --set "commands.lin_vel_y=$vy"
      --set "commands.ang_vel_z=$wz")
    printf '{"terrain_type": "%s", "commands": "%s", "result": ' "$t" "$name"
    "$bin" eval "$policy" --contact hard --terrain "$t" --episodes "$episodes" --envs 250 --seed 1 \
      "${ranges[@]}" --json | tr -d '\n'
    printf '}\n'
  done
done
