#!/usr/bin/env bash
# A fine-tune of a trained rough-terrain run, evaluated as the shipped policy's per-terrain table
# (docs/terrain.md, "Fine-tunes of the shipped run"): 2000 iterations of the rough config from the
# checkpoint, the learning rates 5e-4 falling linearly to the config's final 1e-5, the command and
# reward curricula at their final values from the first iteration; then exported and evaluated on
# every ground at the hardest level in our hard contact, 1000 episodes each
# (tools/reproduce/terrain_eval.sh).
# usage: tools/reproduce/rough_finetune.sh CHECKPOINT OUT_DIR SEED [--set KEY=VALUE ...]
#   (DIFFLOCO via env)
#   CHECKPOINT: a model_<iteration>.pt of a `train configs/velocity_anymal_rough_shac.yaml` run.
#   OUT_DIR: gets train/ (the run), policy.{pt,yaml} (exported) and terrain_eval.jsonl.
#   The --set arguments change the fine-tune, e.g. --set task.sim.terrain_contact=closest; a later
#   --set of the same key wins (e.g. --set shac.actor_lr=5e-5).
#   DIFFLOCO (environment, default build/diffloco): the binary.
set -euo pipefail
checkpoint=$1 out=$2 seed=$3
shift 3
bin=${DIFFLOCO:-build/diffloco}
mkdir -p "$out"
"$bin" train configs/velocity_anymal_rough_shac.yaml --seed "$seed" --set init_from="$checkpoint" \
  --set shac.iterations=2000 --set shac.actor_lr=0.0005 --set shac.critic_lr=0.0005 \
  --set curriculum.command_resample.initial=0.3 \
  --set curriculum.rewards.lin_vel_tracking_l2.initial=0.5 --set run.checkpoint_every=1000 \
  "$@" --out "$out/train"
run=$(ls -d "$out"/train/*/ | tail -1)
"$bin" export "$run" -o "$out/policy.pt"
ENGINES=diffloco "$(dirname "$0")/terrain_eval.sh" "$out/policy.pt" 1000 0 "$bin" \
  > "$out/terrain_eval.jsonl"
