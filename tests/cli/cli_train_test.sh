#!/usr/bin/env bash
# `diffloco train` and `diffloco plot` end to end (run by ctest, tests/CMakeLists.txt):
#   cli_train_test.sh DIFFLOCO DIR
# A misspelt key exits 1 naming file, line and the suggestion; a bad --set names the argument; a
# tiny SHAC run writes its run folder and a console line per iteration; plot writes a PNG.
set -euo pipefail
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
bin=$1 dir=$2
rm -rf "$dir"
mkdir -p "$dir"
cfg="$dir/tiny.yaml"
cat >"$cfg" <<'YAML'
name: cli_tiny
algorithm: shac
task: walk
shac:
  iterations: 2
  num_envs: 2
  horizon: 3
  critic_iterations: 1
policy:
  actor_hidden: [8]
  critic_hidden: [8]
run:
  torch_threads: 1
YAML

sed 's/  horizon: 3/  horizn: 3/' "$cfg" >"$dir/typo.yaml"
rc=0
"$bin" train "$dir/typo.yaml" --out "$dir/runs" >"$dir/typo.log" 2>&1 || rc=$?
cat "$dir/typo.log"
[ "$rc" -eq 1 ] || fail "a misspelt key must exit 1 (got $rc)"
grep -q "typo.yaml:7: unknown key 'shac.horizn' (did you mean 'horizon'?)" "$dir/typo.log" ||
  fail "the message must name file, line, key and suggestion"

rc=0
"$bin" train "$cfg" --set shac.horizon=x --out "$dir/runs" >"$dir/set.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a bad --set must exit 1 (got $rc)"
grep -q -- "--set shac.horizon=x: shac.horizon: expected an integer, got 'x'" "$dir/set.log" ||
  fail "the message must name the --set argument: $(cat "$dir/set.log")"
[ ! -d "$dir/runs" ] || fail "a config error must not create a run folder"

"$bin" train "$cfg" --seed 3 --out "$dir/runs" >"$dir/train.log" 2>&1 || {
  cat "$dir/train.log"
  fail "diffloco train failed"
}
cat "$dir/train.log"
run=$(ls -d "$dir"/runs/*_cli_tiny)
for f in config.yaml metrics.csv model_2.pt policy.pt train.log git.txt; do
  [ -f "$run/$f" ] || fail "$run/$f missing"
done
grep -q "^seed: 3 " "$run/config.yaml" || fail "--seed not in the resolved config"
[ "$(grep -c 'shac it ' "$dir/train.log")" -eq 2 ] || fail "expected one progress line per iteration"
grep -q "ETA" "$dir/train.log" || fail "no ETA in the progress line"
[ "$(wc -l <"$run/metrics.csv")" -eq 3 ] || fail "metrics.csv: header + 2 rows expected"

# Two tiny iterations end no episode, so Train/mean_reward is still empty: plot a loss.
if command -v gnuplot >/dev/null 2>&1; then
  "$bin" plot "$run" "$run" --metric Loss/actor -o "$dir/curves.png" >"$dir/plot.log" 2>&1 || {
    cat "$dir/plot.log"
    fail "diffloco plot failed"
  }
  [ -s "$dir/curves.png" ] || fail "no PNG written"
  [ "$(head -c 8 "$dir/curves.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] ||
    fail "curves.png is not a PNG"
else
  echo "gnuplot not installed: plot not checked"
fi
rc=0
"$bin" plot "$dir/nowhere" >"$dir/plot_bad.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "plot of a missing run must exit 1"

# --trace-iteration: iteration 2's torch operations as a Chrome trace in the run folder, which
# tools/tables/trace_summary.py summarises (the simulator's step is an autograd node of its own).
"$bin" train "$cfg" --trace-iteration 2 --out "$dir/traced" >"$dir/trace.log" 2>&1 ||
  { cat "$dir/trace.log"; fail "train --trace-iteration failed"; }
traced=$(ls -d "$dir"/traced/*_cli_tiny)
[ -s "$traced/trace_iteration_2.json" ] || fail "no trace_iteration_2.json in $traced"
[ ! -e "$traced/trace_iteration_1.json" ] || fail "only the named iteration is traced"
python3 "$(dirname "$0")/../../tools/tables/trace_summary.py" "$traced/trace_iteration_2.json" \
  >"$dir/trace_summary.txt" || fail "trace_summary.py failed"
grep -q "SimStepFunction" "$dir/trace_summary.txt" ||
  fail "the summary must list the simulator's autograd node: $(cat "$dir/trace_summary.txt")"
rc=0
"$bin" train "$cfg" --trace-iteration 0 --out "$dir/traced" >"$dir/trace_bad.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q -- "--trace-iteration" "$dir/trace_bad.log" ||
  fail "--trace-iteration 0 must be refused naming the flag: $(cat "$dir/trace_bad.log")"
rc=0
"$bin" train "$cfg" --trace-iteration 3 --out "$dir/traced_late" >"$dir/trace_late.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q -- "--trace-iteration 3: this session runs iterations 1 to 2" "$dir/trace_late.log" ||
  fail "an iteration beyond the run must be refused: $(cat "$dir/trace_late.log")"
[ ! -d "$dir/traced_late" ] || fail "a refused --trace-iteration must not create a run folder"

# json_is FILE KEY.PATH VALUE: the member's value, written as JSON, is VALUE ("3", '"hard"', null).
json_is() {
  python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v = v[k]
sys.exit(json.dumps(v) != sys.argv[3])' "$@"
}

# eval: the tiny run's policy over 3 episodes on 2 envs, own contact and hard, JSON and table.
"$bin" eval "$run" --episodes 3 --envs 2 --json >"$dir/eval.json" 2>"$dir/eval.err" ||
  { cat "$dir/eval.err"; fail "eval failed"; }
json_is "$dir/eval.json" episodes 3 || fail "eval must report 3 episodes: $(cat "$dir/eval.json")"
json_is "$dir/eval.json" contact '"smoothed"' || fail "eval must use the trained contact model"
"$bin" eval "$run/policy.pt" --episodes 2 --envs 2 --contact hard --dt 0.005 --iterations 50 \
  >"$dir/eval.txt" 2>&1 || { cat "$dir/eval.txt"; fail "eval --contact hard failed"; }
grep -q "contact hard, sim dt 0.005 s, 50 solver iterations, ground plane: 2 episodes" "$dir/eval.txt" ||
  fail "eval overrides not applied: $(cat "$dir/eval.txt")"
rc=0
"$bin" eval "$run" --dt 0.003 >"$dir/eval_bad.txt" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "must be a multiple of sim.dt" "$dir/eval_bad.txt" ||
  fail "a sim step that does not divide the env step must be a clear error: $(cat "$dir/eval_bad.txt")"

# same_numbers A.json B.json REL: every number of evaluation A equals B's to REL (relative).
same_numbers() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
tol = float(sys.argv[3])
for k in a:
    if isinstance(a[k], float) and abs(a[k] - b[k]) > tol * max(1.0, abs(a[k])):
        sys.exit(f"{k}: {sys.argv[1]} {a[k]} vs {sys.argv[2]} {b[k]}")
PY
}

# eval of the last training checkpoint: the same actor as policy.pt, so the same numbers; --set
# overrides a task key, and a misspelt one is an error naming it.
"$bin" eval "$run/model_2.pt" --episodes 3 --envs 2 --json >"$dir/eval_ckpt.json" \
  2>"$dir/eval_ckpt.err" || { cat "$dir/eval_ckpt.err"; fail "eval of a checkpoint failed"; }
same_numbers "$dir/eval.json" "$dir/eval_ckpt.json" 1e-9 ||
  fail "checkpoint and policy.pt must evaluate alike"
"$bin" eval "$run" --episodes 2 --envs 2 --set episode_length_s=0.2 --json >"$dir/eval_set.json" \
  2>"$dir/eval_set.err" || { cat "$dir/eval_set.err"; fail "eval --set failed"; }
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["length_s_mean"] > 0.2 + 1e-9)' \
  "$dir/eval_set.json" || fail "eval --set episode_length_s=0.2 not applied: $(cat "$dir/eval_set.json")"
rc=0
"$bin" eval "$run" --set episode_lenght_s=1 >"$dir/eval_set_bad.txt" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q -- "--set episode_lenght_s=1: unknown key 'episode_lenght_s' (did you mean 'episode_length_s'?)" "$dir/eval_set_bad.txt" ||
  fail "a misspelt eval --set key must be a clear error: $(cat "$dir/eval_set_bad.txt")"
# --task: the run was trained on walk itself, so --task walk evaluates alike; another robot's task
# is refused.
"$bin" eval "$run" --task walk --episodes 3 --envs 2 --json >"$dir/eval_task.json" \
  2>"$dir/eval_task.err" || { cat "$dir/eval_task.err"; fail "eval --task failed"; }
same_numbers "$dir/eval.json" "$dir/eval_task.json" 1e-12 || fail "eval --task walk must match"
rc=0
"$bin" eval "$run" --task velocity >"$dir/eval_task_bad.txt" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "does not fit a policy trained for robot 'quadruped'" "$dir/eval_task_bad.txt" ||
  fail "eval --task of another robot must be a clear error: $(cat "$dir/eval_task_bad.txt")"

# eval of an exported file: same numbers as the run it came from (same seed), and under MuJoCo.
"$bin" export "$run" -o "$dir/exported/policy.pt" >"$dir/export.log" 2>&1 ||
  { cat "$dir/export.log"; fail "export failed"; }
"$bin" eval "$dir/exported/policy.pt" --episodes 3 --envs 2 --json >"$dir/eval_exported.json" \
  2>"$dir/eval_exported.err" || { cat "$dir/eval_exported.err"; fail "eval of an exported file failed"; }
same_numbers "$dir/eval.json" "$dir/eval_exported.json" 1e-4 ||
  fail "exported and training-time policies must evaluate alike"
if "$bin" eval --help | grep -q mujoco; then
  "$bin" eval "$dir/exported/policy.pt" --engine mujoco --episodes 2 --json --save-mjcf "$dir/mj.xml" \
    >"$dir/eval_mj.json" 2>"$dir/eval_mj.err" || { cat "$dir/eval_mj.err"; fail "eval --engine mujoco failed"; }
  grep -q '<freejoint' "$dir/mj.xml" && grep -q '<option timestep=' "$dir/mj.xml" ||
    fail "--save-mjcf must write the compiled MJCF: $(head -c 300 "$dir/mj.xml")"
  json_is "$dir/eval_mj.json" contact '"mujoco"' && json_is "$dir/eval_mj.json" return_mean null ||
    fail "MuJoCo evaluation JSON: $(cat "$dir/eval_mj.json")"
  rc=0
  "$bin" eval "$run" --engine mujoco >"$dir/eval_mj_bad.txt" 2>&1 || rc=$?
  [ "$rc" -eq 1 ] && grep -q "takes a file written by .diffloco export" "$dir/eval_mj_bad.txt" ||
    fail "MuJoCo eval of a training archive must say it needs an exported file"
  rc=0
  "$bin" eval "$dir/exported/policy.pt" --engine mujoco --set episode_length_s=1 \
    >"$dir/eval_mj_set.txt" 2>&1 || rc=$?
  [ "$rc" -eq 1 ] && grep -q -- "--set applies to --engine diffloco only" "$dir/eval_mj_set.txt" ||
    fail "an option of the other engine must be an error: $(cat "$dir/eval_mj_set.txt")"
  rc=0
  "$bin" eval "$dir/exported/policy.pt" --save-mjcf "$dir/no.xml" >"$dir/eval_mj_save.txt" 2>&1 || rc=$?
  [ "$rc" -eq 1 ] && grep -q -- "--save-mjcf applies to --engine mujoco only" "$dir/eval_mj_save.txt" ||
    fail "--save-mjcf with --engine diffloco must be an error: $(cat "$dir/eval_mj_save.txt")"
fi

# Resume: 4 iterations in one go == 2 iterations, then --resume to 4 (same seed). The learning
# columns of metrics.csv (everything but wall-clock and speed) must match to the last digit.
cat >"$dir/resume.yaml" <<'YAML'
name: cli_resume
algorithm: shac
task: walk
shac:
  iterations: 4
  num_envs: 4
  horizon: 8
  critic_iterations: 2
policy:
  actor_hidden: [8]
  critic_hidden: [8]
run:
  torch_threads: 1
  checkpoint_every: 2
YAML
"$bin" train "$dir/resume.yaml" --seed 5 --out "$dir/full" >"$dir/full.log" 2>&1 ||
  { cat "$dir/full.log"; fail "uninterrupted run failed"; }
"$bin" train "$dir/resume.yaml" --seed 5 --set shac.iterations=2 --out "$dir/part" \
  >"$dir/part.log" 2>&1 || { cat "$dir/part.log"; fail "first half failed"; }
part=$(ls -d "$dir"/part/*_cli_resume)
"$bin" train --resume "$part" --set shac.iterations=4 >"$dir/resumed.log" 2>&1 ||
  { cat "$dir/resumed.log"; fail "resume failed"; }
learning_columns() { # drop wall_s and Perf/* columns
  awk -F, 'NR==1{for(i=1;i<=NF;i++) keep[i]=($i!="wall_s" && $i !~ /^Perf\//)}
           {o=""; for(i=1;i<=NF;i++) if(keep[i]) o=o $i ","; print o}' "$1"
}
full=$(ls -d "$dir"/full/*_cli_resume)
[ "$(wc -l <"$part/metrics.csv")" -eq 5 ] || fail "resumed metrics.csv: header + 4 rows expected"
diff <(learning_columns "$full/metrics.csv") <(learning_columns "$part/metrics.csv") ||
  fail "a resumed run must match the uninterrupted one"
echo "resume matches"
echo "OK"
