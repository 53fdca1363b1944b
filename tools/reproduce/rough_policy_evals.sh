#!/usr/bin/env bash
# Every evaluation behind docs/terrain.md's tables of a rough-terrain velocity policy, each written to
# PREFIX_<name> (the file names docs/terrain.md cites for the shipped policy), one group at a time.
# usage: tools/reproduce/rough_policy_evals.sh EXPORTED_POLICY PREFIX [DIFFLOCO]
#   e.g. tools/reproduce/rough_policy_evals.sh pretrained/velocity_anymal_rough.pt \
#          docs/data/terrain/velocity_anymal_rough
#   EVALS (environment, default all, in this order): terrain closest_monotone robustness levels
#   commands stairs_conditions slope_conditions friction_closest_monotone smoothed spacing falls
#   footholds same_protocol friction15_mujoco swing; e.g. two processes with disjoint groups use
#   both cores.
# Each file is written whole or not at all (a temporary file renamed at the end). The recordings
# that falls and footholds read go to a temporary folder and are removed.
set -euo pipefail
policy=$1 prefix=$2 bin=${3:-build/diffloco}
here=$(cd "$(dirname "$0")" && pwd)
groups=${EVALS:-terrain closest_monotone robustness levels commands stairs_conditions
  slope_conditions friction_closest_monotone smoothed spacing falls footholds same_protocol
  friction15_mujoco swing}
stairs="pyramid_stairs pyramid_stairs_inverted"
closest_monotone="sim.terrain_contact=closest terrain.interpolant=monotone"
nominal=(--set 'randomization.friction=[0.8,0.8]' --set randomization.push_velocity=0
  --set randomization.observation_noise=false --set 'randomization.motor_strength=[1,1]'
  --set 'randomization.action_delay_steps=[0,0]' --set 'randomization.added_base_mass=[0,0]')
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# write NAME CMD...: CMD's stdout to PREFIX_NAME, atomically.
write() {
  local name=$1
  shift
  "$@" >"$scratch/out"
  mv "$scratch/out" "${prefix}_$name"
  echo "wrote ${prefix}_$name" >&2
}

levels() {
  for t in $stairs; do
    for l in 3 6 8; do
      printf '{"engine": "diffloco", "terrain_type": "%s", "level": %d, "result": ' "$t" "$l"
      "$bin" eval "$policy" --contact hard --terrain "$t" --level "$l" --episodes 1000 --envs 250 \
        --seed 1 --json | tr -d '\n'
      printf '}\n'
    done
  done
}

smoothed() {
  for t in $stairs; do
    printf '{"engine": "diffloco", "contact": "smoothed", "terrain_type": "%s", "result": ' "$t"
    "$bin" eval "$policy" --contact smoothed --terrain "$t" --episodes 1000 --envs 250 --seed 1 \
      --json | tr -d '\n'
    printf '}\n'
  done
}

friction15_mujoco() {
  for t in $stairs; do
    printf '{"engine": "mujoco", "condition": "friction_1.5", "terrain_type": "%s", "result": ' "$t"
    "$bin" eval "$policy" --engine mujoco --cone elliptic --noslip 10 --terrain "$t" --episodes 300 \
      --seed 1 --friction 1.5 --json | tr -d '\n'
    printf '}\n'
  done
}

# falls: the last decision of the episodes that fell, 32 recorded episodes each way.
falls() {
  echo "# tools/record/record_falls.py of diffloco eval $policy --contact hard" \
    "--terrain pyramid_stairs --episodes 32 --envs 32 --seed 1 --record down.json --record-envs 32"
  local first=1
  for t in $stairs; do
    [[ $first == 1 ]] || echo "# the same with --terrain $t"
    first=0
    "$bin" eval "$policy" --contact hard --terrain "$t" --episodes 32 --envs 32 --seed 1 \
      --record "$scratch/falls.json" --record-envs 32 >/dev/null
    python3 "$here/../record/record_falls.py" "$scratch/falls.json"
    rm -f "$scratch/falls.json"
  done
}

# footholds [SET...]: planted feet on an edge by friction, 128 recorded episodes each.
footholds() {
  local extra=("$@")
  echo "# for T in $stairs, f in 0.5 0.8 1.5:"
  echo "#   diffloco eval $policy --contact hard --terrain T --episodes 128 --envs 128 --seed 1 \\"
  echo "#     <tools/reproduce/robustness_eval.sh's nominal --sets>" \
    "--set randomization.friction=[f,f] ${extra[*]:+${extra[*]} }--record R.json --record-envs 128"
  echo "#   tools/record/record_footholds.py R.json"
  for t in $stairs; do
    for f in 0.5 0.8 1.5; do
      "$bin" eval "$policy" --contact hard --terrain "$t" --episodes 128 --envs 128 --seed 1 \
        "${nominal[@]}" --set "randomization.friction=[$f,$f]" ${extra[@]+"${extra[@]}"} \
        --record "$scratch/feet.json" --record-envs 128 --json >"$scratch/feet_eval.json"
      python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("# %s, friction %s: falls %d / %d, lin. RMS %.3f" % (sys.argv[2], sys.argv[3], r["falls"],
      r["episodes"], r["lin_vel_rms"]))' "$scratch/feet_eval.json" "$t" "$f"
      python3 "$here/../record/record_footholds.py" "$scratch/feet.json" |
        sed "s|^$scratch/feet.json|$t, friction $f|"
      rm -f "$scratch/feet.json"
    done
  done
}

# swing: how high the feet swing (tools/record/record_swing.py), 32 recorded episodes on the plane
# at nominal conditions and up the hardest stairs under the task's randomisation, a JSON line each.
swing() {
  local t set
  for t in none pyramid_stairs_inverted; do
    set=()
    [[ $t != none ]] || set=("${nominal[@]}")
    "$bin" eval "$policy" --contact hard --terrain "$t" --episodes 32 --envs 32 --seed 1 \
      ${set[@]+"${set[@]}"} --record "$scratch/swing.json" --record-envs 32 >/dev/null
    printf '{"engine": "diffloco", "terrain_type": "%s", "protocol": "%s", "result": ' "$t" \
      "$([[ $t == none ]] && echo nominal || echo task)"
    python3 "$here/../record/record_swing.py" "$scratch/swing.json" --json |
      python3 -c 'import json, sys; d = json.load(sys.stdin); d.pop("record"); print(json.dumps(d), end="")'
    printf '}\n'
    rm -f "$scratch/swing.json"
  done
}

# same_protocol: ours under MuJoCo's protocol beside MuJoCo's rows (the stairs at 300 episodes, the
# other grounds from the per-terrain file, which runs MuJoCo's protocol).
same_protocol() {
  [[ -s ${prefix}_terrain_eval.jsonl ]] ||
    { echo "same_protocol reads MuJoCo's rows from ${prefix}_terrain_eval.jsonl:" \
        "run the terrain group first" >&2; exit 2; }
  PROTOCOL=mujoco ENGINES=diffloco "$here/terrain_eval.sh" "$policy" 1000 0 "$bin"
  ENGINES=mujoco TYPES="$stairs" "$here/terrain_eval.sh" "$policy" 0 300 "$bin"
  grep '"engine": "mujoco"' "${prefix}_terrain_eval.jsonl" | grep -v '"pyramid_stairs'
}

for g in $groups; do
  case $g in
    terrain) write terrain_eval.jsonl "$here/terrain_eval.sh" "$policy" 1000 100 "$bin" ;;
    closest_monotone)
      write terrain_eval_closest_monotone.jsonl env OURS_SET="$closest_monotone" ENGINES=diffloco \
        "$here/terrain_eval.sh" "$policy" 1000 0 "$bin" ;;
    robustness) write robustness.jsonl "$here/robustness_eval.sh" "$policy" 100 "$bin" ;;
    levels) write stairs_levels_eval.jsonl levels ;;
    commands) write commands_eval.jsonl "$here/command_split_eval.sh" "$policy" 1000 "$bin" ;;
    stairs_conditions | slope_conditions)
      pairs="stairs_down:pyramid_stairs stairs_up:pyramid_stairs_inverted"
      [[ $g == stairs_conditions ]] ||
        pairs="slope_down:pyramid_slope slope_up:pyramid_slope_inverted"
      for pair in $pairs; do
        write "${pair%%:*}_conditions.jsonl" env TERRAIN="${pair#*:}" ENGINES=diffloco \
          "$here/robustness_eval.sh" "$policy" 1000 "$bin"
      done ;;
    friction_closest_monotone)
      for pair in stairs_down:pyramid_stairs stairs_up:pyramid_stairs_inverted; do
        write "${pair%%:*}_friction_closest_monotone.jsonl" env TERRAIN="${pair#*:}" \
          ENGINES=diffloco CONDITIONS="nominal friction_0.5 friction_1.5" \
          OURS_SET="$closest_monotone" "$here/robustness_eval.sh" "$policy" 1000 "$bin"
      done ;;
    smoothed) write stairs_smoothed_eval.jsonl smoothed ;;
    spacing)
      write stairs_spacing0025_eval.jsonl env OURS_SET="terrain.spacing=0.025" ENGINES=diffloco \
        TYPES="$stairs" "$here/terrain_eval.sh" "$policy" 1000 0 "$bin" ;;
    falls) write stairs_falls.txt falls ;;
    footholds)
      write stairs_footholds.txt footholds
      write stairs_footholds_spacing0025.txt footholds --set terrain.spacing=0.025 ;;
    same_protocol)
      write same_protocol.jsonl same_protocol
      write same_protocol_closest.jsonl env OURS_SET="sim.terrain_contact=closest" PROTOCOL=mujoco \
        ENGINES=diffloco TYPES="$stairs obstacles" "$here/terrain_eval.sh" "$policy" 1000 0 "$bin"
      write same_protocol_closest_monotone.jsonl env OURS_SET="$closest_monotone" PROTOCOL=mujoco \
        ENGINES=diffloco "$here/terrain_eval.sh" "$policy" 1000 0 "$bin" ;;
    friction15_mujoco) write stairs_friction15_mujoco.jsonl friction15_mujoco ;;
    swing) write swing.jsonl swing ;;
    *) echo "unknown group '$g'" >&2; exit 2 ;;
  esac
done
