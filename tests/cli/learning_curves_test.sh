#!/usr/bin/env bash
# tools/reproduce/learning_curves.py end to end (run by ctest, tests/CMakeLists.txt):
#   learning_curves_test.sh DIFFLOCO PYTHON3 REPO DIR
# Tiny SHAC and PPO runs that keep every checkpoint; the tool places each checkpoint at its run's
# env steps and reports the evaluation `diffloco eval` gives for that checkpoint.
set -euo pipefail
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
bin=$1 python=$2 repo=$3 dir=$4
curves=$repo/tools/reproduce/learning_curves.py plot=$repo/tools/tables/learning_curves_plot.py
rm -rf "$dir"
mkdir -p "$dir"
cat >"$dir/shac.yaml" <<'YAML'
name: lc_shac
algorithm: shac
task: walk
shac: {iterations: 3, num_envs: 2, horizon: 4, critic_iterations: 1}
policy: {actor_hidden: [8], critic_hidden: [8]}
run: {torch_threads: 1, sim_threads: 1, checkpoint_every: 1}
YAML
cat >"$dir/ppo.yaml" <<'YAML'
name: lc_ppo
algorithm: ppo
task: walk
ppo: {iterations: 2, num_envs: 4, rollout: 5, epochs: 1, minibatches: 1}
policy: {actor_hidden: [8], critic_hidden: [8]}
run: {torch_threads: 1, sim_threads: 1, checkpoint_every: 1}
YAML
for a in shac ppo; do
  "$bin" train "$dir/$a.yaml" --out "$dir/runs" >"$dir/$a.log" 2>&1 || {
    cat "$dir/$a.log"
    fail "diffloco train $a.yaml"
  }
done
shac=$(ls -d "$dir"/runs/*_lc_shac) ppo=$(ls -d "$dir"/runs/*_lc_ppo)
"$python" "$curves" --diffloco "$bin" --shac "$shac" --ppo "$ppo" \
  --episodes 2 --envs 2 --csv "$dir/curves.csv" --cache "$dir/cache" >"$dir/out.txt" ||
  fail "learning_curves.py exited with $?"
cat "$dir/out.txt"
grep -q "^median samples to the level: SHAC .* PPO .*; PPO / SHAC = " "$dir/out.txt" ||
  fail "no summary line"
direct=$("$bin" eval "$shac/model_2.pt" --contact hard --dt 0.005 --iterations 50 --episodes 2 \
  --envs 2 --seed 0 --json)
"$python" - "$dir/curves.csv" "$direct" <<'PY' || fail "curves.csv does not match the runs"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
shac = [r for r in rows if r["algorithm"] == "shac"]
ppo = [r for r in rows if r["algorithm"] == "ppo"]
# One row per checkpoint, at the env steps of its iteration: 2 x 4 per SHAC and 4 x 5 per PPO
# iteration.
assert [int(r["iteration"]) for r in shac] == [1, 2, 3], shac
assert [int(r["env_steps"]) for r in shac] == [8, 16, 24], shac
assert [int(r["env_steps"]) for r in ppo] == [20, 40], ppo
direct = json.loads(sys.argv[2])
row = shac[1]
assert abs(float(row["return_mean"]) - direct["return_mean"]) <= 1e-4 * abs(direct["return_mean"]), (row, direct)
assert int(row["falls"]) == direct["falls"], (row, direct)
assert row["lin_vel_rms"] == "nan", row  # the walk task tracks no commands
PY
[ "$(ls "$dir/cache" | wc -l)" -eq 5 ] || fail "expected one cached evaluation per checkpoint"
grep -q "^ratio within the checkpoints' brackets: .*; over seed pairs: " "$dir/out.txt" ||
  fail "no interval line"
# --speed: the walk task's forward speed as a second criterion, from the cached evaluations; a
# speed no checkpoint reaches gives infinite samples, not an error.
"$python" "$curves" --diffloco "$bin" --shac "$shac" --ppo "$ppo" \
  --episodes 2 --envs 2 --cache "$dir/cache" --speed 50 60 --csv "$dir/speed.csv" >"$dir/speed.txt" ||
  fail "--speed exited with $?"
grep -q "^median samples to walking at 50 m/s (falls <= 5%): SHAC inf, PPO inf; PPO / SHAC = " "$dir/speed.txt" ||
  fail "no forward-speed summary: $(cat "$dir/speed.txt")"
grep -q "walks at >= 50 m/s at inf (after .*walks at >= 60 m/s at inf" "$dir/speed.txt" || fail "no per-run speed"
grep -q "^median samples to walking at 60 m/s " "$dir/speed.txt" || fail "no second speed"
head -1 "$dir/speed.csv" | tr -d "\r" | grep -q ",forward_velocity_mean$" || fail "no speed column"
[ "$(ls "$dir/cache" | wc -l)" -eq 5 ] || fail "--speed must reuse the cached evaluations"
if "$python" "$curves" --shac "$shac" --ppo "$ppo" --speed 0 \
  >"$dir/speed0.log" 2>&1; then
  fail "--speed 0 must fail"
fi
grep -q "^--speed must be a speed > 0 m/s (got 0.0)" "$dir/speed0.log" || fail "bad --speed message"
# --coarse: a synthetic run whose evaluated return is its iteration (1..20, 100 env steps each)
# reaches 13.5 between iterations 13 and 14; the last checkpoint first, then every 5th in order
# until one crosses (5, 10, 15), then the bracket refined to one checkpoint interval (11-14).
mkdir -p "$dir/synth"
{
  echo "iteration,env_steps"
  for i in $(seq 1 20); do echo "$i,$((100 * i))"; done
} >"$dir/synth/metrics.csv"
for i in $(seq 1 20); do : >"$dir/synth/model_$i.pt"; done
"$python" - "$repo/tools/reproduce" "$dir/synth" <<'PY' || fail "--coarse does not refine the bracket"
import os, re, sys
sys.path.insert(0, sys.argv[1])
import learning_curves as lc
seen = []
def one(path):
    it = int(re.search(r"model_(\d+)", path).group(1))
    seen.append(it)
    return {"return_mean": float(it), "falls": 0}
c = lc.Curve(sys.argv[2], 5, one)
assert seen == [20], seen
assert c.bracket(lambda p: p[2] >= 13.5) == (1300, 1400), c.bracket(lambda p: p[2] >= 13.5)
assert seen == [20, 5, 10, 15, 11, 12, 13, 14], seen
# A crossing at the first coarse checkpoint evaluates none after it.
seen.clear()
early = lc.Curve(sys.argv[2], 5, one)
assert early.bracket(lambda p: p[2] >= 3.5) == (300, 400)
assert seen == [20, 5, 1, 2, 3, 4], seen
# Not monotone: a spike at 7 between coarse checkpoints 5 and 10 is the first crossing, as when
# every checkpoint is evaluated.
spike = lambda path: {"return_mean": 100.0 if "model_7." in path else float(
    re.search(r"model_(\d+)", path).group(1)), "falls": 0}
for coarse in (5, 0):
    got = lc.Curve(sys.argv[2], coarse, spike).bracket(lambda p: p[2] >= 9.5)
    assert got == (600, 700), (coarse, got)
assert c.bracket(lambda p: p[2] >= 0.5) == (0.0, 100), "the first checkpoint reaches it"
assert c.bracket(lambda p: p[2] >= 99) == (2000, float("inf")), "never reached"
full = lc.Curve(sys.argv[2], 0, one)
assert len(full.points()) == 20
reach = {"shac": [(100, 200), (200, 300), (300, 400)], "ppo": [(1000, 2000), (3000, 4000)]}
ratio, low, high, lo_pair, hi_pair = lc.ratio_summary(reach)
assert (ratio, low, high) == (3000 / 300, 2000 / 300, 3000 / 200), (ratio, low, high)
assert (lo_pair, hi_pair) == (2000 / 400, 4000 / 200), (lo_pair, hi_pair)
PY
# tools/tables/learning_curves_plot.py: the CSV to a PNG; a CSV with a bad number names file and
# line.
"$python" "$plot" "$dir/speed.csv" "$dir/curves.png" ||
  fail "learning_curves_plot.py exited with $?"
[ "$(head -c 4 "$dir/curves.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "not a PNG"
# The right panel: the linear RMS where every evaluation has one (velocity tracking), else the
# forward speed (the walk task).
"$python" - "$repo/tools/tables" <<'PY' || fail "the plot's right panel"
import math, sys
sys.path.insert(0, sys.argv[1])
import learning_curves_plot as plot
velocity = {("shac", "a"): [(1, 10.0, 0.5, 0.01)], ("ppo", "b"): [(2, 20.0, 0.4, 0.02)]}
walk = {("shac", "a"): [(1, 10.0, math.nan, 0.9)], ("ppo", "b"): [(2, 20.0, math.nan, 0.8)]}
assert plot.second_panel(velocity) == (2, "linear-velocity RMS [m/s]")
assert plot.second_panel(walk) == (3, "mean forward speed [m/s]")
PY
sed '3s/,[^,]*$/,fast/' "$dir/speed.csv" >"$dir/bad.csv"
if "$python" "$plot" "$dir/bad.csv" "$dir/bad.png" >"$dir/bad.log" 2>&1; then
  fail "a bad number must fail"
fi
grep -q "bad.csv:3: expected a number in the column 'forward_velocity_mean'" "$dir/bad.log" ||
  fail "the error must name the file, line and column: $(cat "$dir/bad.log")"
# Walking and tracking need few falls: a stand-in for `diffloco eval` whose checkpoint N moves at
# N / 10 m/s, tracks with a linear RMS of (20 - N) / 10 m/s and falls in every episode before
# checkpoint 15; at 1 m/s the synthetic run walks from 15, not 10, and within 0.8 m/s it tracks
# from 15, not 12.
cat >"$dir/fake_eval.sh" <<'SH'
#!/usr/bin/env bash
n=$(echo "$2" | sed 's/.*model_\([0-9]*\)\.pt/\1/')
falls=0; [ "$n" -lt 15 ] && falls=100
echo "{\"return_mean\": $n, \"falls\": $falls, \"forward_velocity_mean\": $(awk "BEGIN { print $n / 10 }"),
  \"lin_vel_rms\": $(awk "BEGIN { print (20 - $n) / 10 }")}" | tr -d '\n'
SH
chmod +x "$dir/fake_eval.sh"
"$python" "$curves" --diffloco "$dir/fake_eval.sh" --shac "$dir/synth" \
  --ppo "$dir/synth" --coarse 5 --speed 1 >"$dir/falls.txt" || fail "fake evaluations: $?"
grep -q "walks at >= 1 m/s at 1.5e+03 (after 1.4e+03)" "$dir/falls.txt" ||
  fail "a checkpoint that falls must not count as walking: $(cat "$dir/falls.txt")"
"$python" "$curves" --diffloco "$dir/fake_eval.sh" --shac "$dir/synth" \
  --ppo "$dir/synth" --coarse 5 --tracking 0.8 5 >"$dir/tracking.txt" || fail "--tracking: $?"
grep -q "tracks within 0.8 m/s at 1.5e+03 (after 1.4e+03), tracks within 5 m/s at 1.5e+03" \
  "$dir/tracking.txt" || fail "a checkpoint that falls must not count as tracking: $(cat "$dir/tracking.txt")"
grep -q "^median samples to tracking within 0.8 m/s (falls <= 5%): SHAC 1.5e+03, PPO 1.5e+03; PPO / SHAC = 1.0" \
  "$dir/tracking.txt" || fail "no tracking summary: $(cat "$dir/tracking.txt")"
if "$python" "$curves" --diffloco "$bin" --shac "$shac" --ppo "$ppo" \
  --episodes 2 --envs 2 --cache "$dir/cache" --tracking 0.5 >"$dir/walktrack.log" 2>&1; then
  fail "--tracking on the walk task must fail"
fi
grep -q "needs a velocity task's lin_vel_rms" "$dir/walktrack.log" || fail "bad --tracking message"
# A run folder without checkpoints is an error naming it.
mkdir -p "$dir/empty" && cp "$shac/metrics.csv" "$dir/empty/"
if "$python" "$curves" --diffloco "$bin" --shac "$dir/empty" \
  --ppo "$ppo" --episodes 2 --envs 2 >"$dir/empty.log" 2>&1; then
  fail "a run without checkpoints must fail"
fi
grep -q "empty: no checkpoints" "$dir/empty.log" || fail "the error must name the run"
# A run folder without metrics.csv, and a checkpoint diffloco cannot evaluate: errors naming the file.
mkdir -p "$dir/nometrics"
if "$python" "$curves" --diffloco "$bin" --shac "$dir/nometrics" \
  --ppo "$ppo" --episodes 2 --envs 2 >"$dir/nometrics.log" 2>&1; then
  fail "a run without metrics.csv must fail"
fi
grep -q "nometrics/metrics.csv: cannot read" "$dir/nometrics.log" ||
  fail "the error must name metrics.csv: $(cat "$dir/nometrics.log")"
mkdir -p "$dir/broken" && cp "$shac/metrics.csv" "$dir/broken/"
it=$(ls "$shac" | sed -n 's/^model_\([0-9]*\)\.pt$/\1/p' | head -1)
printf 'not a torch archive' >"$dir/broken/model_$it.pt"
if "$python" "$curves" --diffloco "$bin" --shac "$dir/broken" \
  --ppo "$ppo" --episodes 2 --envs 2 >"$dir/broken.log" 2>&1; then
  fail "a damaged checkpoint must fail"
fi
grep -q "broken/model_$it.pt: \`diffloco eval\` failed (exit 1): .*not a valid archive" "$dir/broken.log" ||
  fail "the error must name the checkpoint: $(cat "$dir/broken.log")"
grep -q "Traceback" "$dir/broken.log" "$dir/nometrics.log" && fail "no Python traceback expected"
echo "learning curves ok"
