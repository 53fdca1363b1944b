#!/usr/bin/env bash
# The README's walk and velocity tables, one training seed at a time: the exported policy in our
# simulator with hard contact (dt 0.005 s, 50 Gauss-Seidel iterations, the task's randomisation and
# reset noise, 100 episodes per eval seed) and in MuJoCo (the exported file, MuJoCo's default
# options), one JSON object per line: training seed, engine, eval seed, result.
# usage: tools/reproduce/shipped_eval.sh walk|velocity EXPORTED_POLICY TRAINING_SEED EVAL_SEEDS
#          [DIFFLOCO]
#   EVAL_SEEDS: the last eval seed (0..N); MuJoCo runs once, on eval seed 0.
#   e.g. tools/reproduce/shipped_eval.sh walk RUN/export/walk_quadruped.pt 0 49 \
#          >> docs/data/shipped/walk_quadruped.jsonl
set -euo pipefail
task=$1 policy=$2 seed=$3 last=$4 bin=${5:-build/diffloco}
case "$task" in
  walk) mujoco_dt=0.002 ;;      # the walk task's MuJoCo protocol (docs/training.md)
  velocity) mujoco_dt=0.005 ;;  # the velocity task's (docs/velocity_anymal.md)
  *) echo "shipped_eval.sh: task must be walk or velocity, not '$task'" >&2; exit 2 ;;
esac
for m in $(seq 0 "$last"); do
  printf '{"training_seed": %d, "engine": "diffloco", "eval_seed": %d, "result": ' "$seed" "$m"
  "$bin" eval "$policy" --contact hard --dt 0.005 --iterations 50 --seed "$m" --json | tr -d '\n'
  printf '}\n'
done
printf '{"training_seed": %d, "engine": "mujoco", "eval_seed": 0, "result": ' "$seed"
"$bin" eval "$policy" --engine mujoco --dt "$mujoco_dt" --json | tr -d '\n'
printf '}\n'
