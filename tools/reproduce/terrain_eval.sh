#!/usr/bin/env bash
# docs/terrain.md's per-terrain table of a rough-terrain policy: every sub-terrain of its task at the
# hardest level and the plane, in our simulator with hard contact and in MuJoCo (the same height
# field as an hfield; elliptic cone with noslip, docs/terrain.md says why), one JSON object per line
# with the condition's name first.
# usage: tools/reproduce/terrain_eval.sh EXPORTED_POLICY EPISODES MUJOCO_EPISODES [DIFFLOCO]
#          > out.jsonl
#   EXPORTED_POLICY: a file written by `diffloco export` (our simulator reads the same file).
#   ENGINES (environment, default "diffloco mujoco"): the engines to run, e.g. one per process.
#   TYPES (environment, default all seven): the grounds to evaluate, e.g. "pyramid_stairs".
#   PROTOCOL (environment): "task" (default): ours draws the task's randomisation and resets and
#   resamples commands, MuJoCo runs nominal conditions; "mujoco": ours runs MuJoCo's protocol too
#   (nominal conditions, one command per episode, no standing commands, the default pose at the
#   spawn point with joints + U(-0.1, 0.1) rad), so that only the engine differs.
#   OURS_SET (environment): more task overrides for our simulator, e.g.
#   "sim.terrain_contact=closest" (each word one `--set`).
#   OURS_CONTACT (environment, default hard): our simulator's contact model, e.g. soft.
#   OURS_TASK (environment): ours evaluates on this task (name or .yaml) instead of the policy's,
#   e.g. velocity_rough: a policy of another layout on legged_gym's (MuJoCo keeps the file's).
#   COMMAND (environment): "VX VY WZ", every episode of both engines holds this command (e.g.
#   "0.5 0 0": straight ahead across the tile, counted as climbed when the base gets past it).
#   LEVELS (environment): ours evaluates each of these levels instead of the hardest, e.g.
#   "0 1 2 3 4 5 6 7 8 9" (each line then has its "level").
#   ENVS, THREADS (environment, default 250 and 2): ours' parallel envs and simulator threads.
#   MUJOCO_OPTIONS (environment, default "--cone elliptic --noslip 10"): MuJoCo's options; ""
#   for the file's recommendation.
set -euo pipefail
policy=$1 episodes=$2 mujoco_episodes=$3 bin=${4:-build/diffloco}
engines=${ENGINES:-diffloco mujoco}
types=${TYPES:-none rough pyramid_slope pyramid_slope_inverted pyramid_stairs pyramid_stairs_inverted obstacles}
protocol=()
case ${PROTOCOL:-task} in
  task) ;;
  mujoco)
    protocol=(--set 'randomization.friction=[0.8,0.8]' --set randomization.push_velocity=0
      --set randomization.observation_noise=false --set 'randomization.motor_strength=[1,1]'
      --set 'randomization.action_delay_steps=[0,0]' --set 'randomization.added_base_mass=[0,0]'
      --set commands.resample_s=0 --set commands.standing_fraction=0
      --set reset.base_pos_noise=0 --set reset.random_yaw=0 --set reset.base_lin_vel_noise=0
      --set reset.base_ang_vel_noise=0 --set reset.joint_pos_noise=0.1) ;;
  *) echo "PROTOCOL must be task or mujoco, not '$PROTOCOL'" >&2; exit 2 ;;
esac
for kv in ${OURS_SET:-}; do protocol+=(--set "$kv"); done
[ -z "${OURS_TASK:-}" ] || protocol+=(--task "$OURS_TASK")
command=()
if [ -n "${COMMAND:-}" ]; then read -r -a words <<<"$COMMAND"; command=(--command "${words[@]}"); fi
read -r -a mujoco_options <<<"${MUJOCO_OPTIONS---cone elliptic --noslip 10}"
for t in $types; do
  [[ " $engines " == *" diffloco "* ]] || break
  for level in ${LEVELS:--1}; do
    printf '{"engine": "diffloco", "terrain_type": "%s", ' "$t"
    at=()
    if [ "$level" != -1 ]; then printf '"level": %s, ' "$level"; at=(--level "$level"); fi
    printf '"result": '
    "$bin" eval "$policy" --contact "${OURS_CONTACT:-hard}" --terrain "$t" ${at[@]+"${at[@]}"} --episodes "$episodes" \
      --envs "${ENVS:-250}" --seed 1 --threads "${THREADS:-2}" \
      ${protocol[@]+"${protocol[@]}"} ${command[@]+"${command[@]}"} --json | tr -d '\n'
    printf '}\n'
  done
done
for t in $types; do
  [[ " $engines " == *" mujoco "* ]] || break
  printf '{"engine": "mujoco", "terrain_type": "%s", "result": ' "$t"
  "$bin" eval "$policy" --engine mujoco ${mujoco_options[@]+"${mujoco_options[@]}"} --terrain "$t" \
    --episodes "$mujoco_episodes" --seed 1 ${command[@]+"${command[@]}"} --json | tr -d '\n'
  printf '}\n'
done
