#!/usr/bin/env bash
# A training run's checkpoints on sub-terrains at the hardest level, in our simulator with hard
# contact (the task's randomisation, resets and commands, eval seed 1, as tools/terrain_eval.sh),
# one JSON object per line with the checkpoint's iteration first; the table:
# tools/terrain_tables.py checkpoints OUT.jsonl.
# usage: tools/checkpoint_terrain_eval.sh RUN_DIR EPISODES ITERATION... [> out.jsonl]
#   TYPES (environment, default the two stairs): the sub-terrains, e.g. "pyramid_stairs obstacles".
#   DIFFLOCO (environment, default build/diffloco): the binary.
set -euo pipefail
run=$1 episodes=$2
shift 2
bin=${DIFFLOCO:-build/diffloco}
types=${TYPES:-pyramid_stairs pyramid_stairs_inverted}
for it in "$@"; do
  [[ -f $run/model_$it.pt ]] || { echo "$run/model_$it.pt: no such checkpoint" >&2; exit 2; }
  for t in $types; do
    printf '{"iteration": %d, "engine": "diffloco", "terrain_type": "%s", "result": ' "$it" "$t"
    "$bin" eval "$run/model_$it.pt" --contact hard --terrain "$t" --episodes "$episodes" \
      --envs 250 --seed 1 --json | tr -d '\n'
    printf '}\n'
  done
done
