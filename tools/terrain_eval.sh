#!/usr/bin/env bash
# docs/terrain.md's per-terrain table of a rough-terrain policy: every sub-terrain of its task at the
# hardest level and the plane, in our simulator with hard contact and in MuJoCo (the same height
# field as an hfield; elliptic cone with noslip, docs/terrain.md says why), one JSON object per line
# with the condition's name first.
# usage: tools/terrain_eval.sh EXPORTED_POLICY EPISODES MUJOCO_EPISODES [DIFFLOCO] > out.jsonl
#   EXPORTED_POLICY: a file written by `diffloco export` (our simulator reads the same file).
#   ENGINES (environment, default "diffloco mujoco"): the engines to run, e.g. one per process.
set -euo pipefail
policy=$1 episodes=$2 mujoco_episodes=$3 bin=${4:-build/diffloco}
engines=${ENGINES:-diffloco mujoco}
types="none rough pyramid_slope pyramid_slope_inverted pyramid_stairs pyramid_stairs_inverted obstacles"
for t in $types; do
  [[ " $engines " == *" diffloco "* ]] || break
  printf '{"engine": "diffloco", "terrain_type": "%s", "result": ' "$t"
  "$bin" eval "$policy" --contact hard --terrain "$t" --episodes "$episodes" --envs 250 --seed 1 \
    --json | tr -d '\n'
  printf '}\n'
done
for t in $types; do
  [[ " $engines " == *" mujoco "* ]] || break
  printf '{"engine": "mujoco", "terrain_type": "%s", "result": ' "$t"
  "$bin" eval "$policy" --engine mujoco --cone elliptic --noslip 10 --terrain "$t" \
    --episodes "$mujoco_episodes" --seed 1 --json | tr -d '\n'
  printf '}\n'
done
