#!/usr/bin/env bash
# A screen of a change to the rough config at a third of its iterations (docs/terrain.md, "A
# 5000-iteration screen"): the config from scratch for 5000 iterations (its learning-rate schedule
# stretched over them, as the iterations table's 5000-iteration runs), exported, and evaluated on
# every ground at the hardest level in our hard contact (1000 episodes each,
# tools/reproduce/terrain_eval.sh), on the flat floor at nominal conditions in both engines (100
# episodes, tools/reproduce/robustness_eval.sh's nominal row) and by how high its feet swing
# (tools/reproduce/rough_policy_evals.sh's swing group).
# usage: tools/reproduce/rough_screen.sh OUT_DIR SEED [--set KEY=VALUE ...] [DIFFLOCO via env]
#   OUT_DIR: gets train/ (the run), metrics.csv (every 10th row of the run's), policy.{pt,yaml}
#   (exported), terrain_eval.jsonl, flat_nominal.jsonl and policy_swing.jsonl; each file is
#   written whole or not at all.
#   The --set arguments are the change, e.g. --set shac.actor_grad_norm=3; none: the control.
#   They come after the script's own, so --set shac.iterations=15000 trains the config's length.
#   Two screens side by side: add --set run.sim_threads=1 to each (it changes no result;
#   docs/performance.md, "Trainings side by side").
#   DIFFLOCO (environment, default build/diffloco): the binary.
set -euo pipefail
out=$1 seed=$2
shift 2
bin=${DIFFLOCO:-build/diffloco}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$bin" train configs/velocity_anymal_rough_shac.yaml --seed "$seed" --set shac.iterations=5000 \
  "$@" --out "$out/train"
run=$(ls -d "$out"/train/*/ | tail -1)
awk -F, 'NR == 1 || $1 % 10 == 0' "$run/metrics.csv" >"$out/metrics.csv.tmp"
mv "$out/metrics.csv.tmp" "$out/metrics.csv"
"$bin" export "$run" -o "$out/policy.pt"
ENGINES=diffloco "$here/terrain_eval.sh" "$out/policy.pt" 1000 0 "$bin" >"$out/terrain_eval.jsonl.tmp"
mv "$out/terrain_eval.jsonl.tmp" "$out/terrain_eval.jsonl"
CONDITIONS=nominal "$here/robustness_eval.sh" "$out/policy.pt" 100 "$bin" >"$out/flat_nominal.jsonl.tmp"
mv "$out/flat_nominal.jsonl.tmp" "$out/flat_nominal.jsonl"
EVALS=swing "$here/rough_policy_evals.sh" "$out/policy.pt" "$out/policy" "$bin"
