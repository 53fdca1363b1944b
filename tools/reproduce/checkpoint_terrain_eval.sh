#!/usr/bin/env bash
# A training run's checkpoints on sub-terrains at the hardest level, in our simulator with hard
# contact (tools/reproduce/terrain_eval.sh's protocol for ours: the task's randomisation, resets and
# commands, eval seed 1), one JSON object per line with the checkpoint's iteration first; the
# table: tools/tables/terrain_tables.py checkpoints OUT.jsonl.
# usage: tools/reproduce/checkpoint_terrain_eval.sh RUN_DIR EPISODES ITERATION... [> out.jsonl]
#   TYPES (environment, default the two stairs): the sub-terrains, e.g. "pyramid_stairs obstacles".
#   DIFFLOCO (environment, default build/diffloco): the binary.
set -euo pipefail
run=$1 episodes=$2
shift 2
here=$(dirname "$0")
export TYPES=${TYPES:-pyramid_stairs pyramid_stairs_inverted}
for it in "$@"; do
  [[ -f $run/model_$it.pt ]] || { echo "$run/model_$it.pt: no such checkpoint" >&2; exit 2; }
  ENGINES=diffloco "$here/terrain_eval.sh" "$run/model_$it.pt" "$episodes" 0 \
    "${DIFFLOCO:-build/diffloco}" | sed "s/^{/{\"iteration\": $it, /"
done
