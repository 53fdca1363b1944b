#!/usr/bin/env bash
# End-to-end checks of the diffloco program, run by ctest (tests/CMakeLists.txt):
#   cli_test.sh sim DIFFLOCO ROBOT CONTACT CSV   drop test: exit 0, CSV header, rows, finite values
#   cli_test.sh bench DIFFLOCO PYTHON3 MUJOCO    bench --json: valid JSON with the documented keys
#   cli_test.sh badrobot DIFFLOCO                unknown robot: exit 1, message names the file
#   cli_test.sh badflags DIFFLOCO POLICY DIR     absurd flag values and outputs that are folders or
#                                                devices: a quick error naming the flag or path
#   cli_test.sh toy DIFFLOCO DIR                 toy falling-mass: CSV columns and rows, the PNG
#   cli_test.sh gradnorm DIFFLOCO DIR            toy grad-norm, tiny: CSV columns, rows, finite > 0
#   cli_test.sh sysid DIFFLOCO DIR               sysid --generate cube, a short fit of side and mu
#                                                (outputs, accuracy), a NaN in the data (exit 1)
set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

mode=$1
bin=$2
shift 2

case "$mode" in
  sim)
    robot=$1 contact=$2 csv=$3
    dt=0.005 duration=0.5
    rm -f "$csv" "$csv".*tmp
    rc=0
    "$bin" sim --robot "$robot" --contact "$contact" --duration "$duration" --dt "$dt" \
      --csv "$csv" >"$csv.log" 2>&1 || rc=$?
    cat "$csv.log"
    [ "$rc" -eq 0 ] || fail "diffloco sim exited with $rc"
    [ -f "$csv" ] || fail "$csv was not written"
    ! ls "$csv".*tmp >/dev/null 2>&1 || fail "temporary files were left behind: $(ls "$csv".*tmp)"
    header=$(head -n 1 "$csv")
    expected="t,x,y,z,qw,qx,qy,qz,LF_FOOT_fn,RF_FOOT_fn,LH_FOOT_fn,RH_FOOT_fn"
    [ "$header" = "$expected" ] || fail "header is '$header', expected '$expected'"
    # One row per step: duration / dt = 100, each with 12 finite numbers, t = k dt, the base above
    # the ground, a unit quaternion (to the 6 digits written) and non-negative normal forces.
    awk -F, -v n=100 -v dt="$dt" '
      NR == 1 { next }
      {
        rows++
        if (NF != 12) { printf "row %d has %d fields\n", NR, NF; bad = 1; exit }
        for (i = 1; i <= NF; i++)
          if ($i !~ /^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/) {
            printf "row %d field %d is not a finite number: %s\n", NR, i, $i; bad = 1; exit
          }
        k = NR - 1
        if ($1 - k * dt > 1e-9 || k * dt - $1 > 1e-9) { printf "row %d: t = %s\n", NR, $1; bad = 1; exit }
        if ($4 <= 0 || $4 > 2) { printf "row %d: base height %s\n", NR, $4; bad = 1; exit }
        qn = $5 * $5 + $6 * $6 + $7 * $7 + $8 * $8
        if (qn < 1 - 1e-4 || qn > 1 + 1e-4) { printf "row %d: |quat|^2 = %g\n", NR, qn; bad = 1; exit }
        for (i = 9; i <= 12; i++)
          if ($i < -1e-9) { printf "row %d: negative normal force %s\n", NR, $i; bad = 1; exit }
      }
      END {
        if (bad) exit 1
        if (rows != n) { printf "%d rows, expected %d\n", rows, n; exit 1 }
      }' "$csv" || fail "$csv content"
    # The summary line names the file written.
    grep -q "wrote $csv" "$csv.log" || fail "no 'wrote $csv' in the output"
    ;;

  bench)
    python=$1 mujoco=$2
    out=$("$bin" bench --json --seconds 0.05) || fail "diffloco bench exited with $?"
    echo "$out"
    echo "$out" | "$python" -c '
import json, math, sys
mujoco = sys.argv[1] == "1"
lines = sys.stdin.read().strip().splitlines()
assert len(lines) == 1, f"expected one line of JSON, got {len(lines)}"
d = json.loads(lines[0])
keys = ["step_us_hard", "step_us_smoothed", "step_us_soft", "batch_steps_per_s", "batch_scaling",
        "step_us_hard_terrain", "vjp_us_smoothed_terrain", "terrain_over_flat_step_smoothed"]
for task in ("walk", "velocity"):
    keys += [f"shac_iteration_s_{task}", f"shac_iteration_{task}_rollout_s",
             f"shac_iteration_{task}_actor_backward_s", f"shac_iteration_{task}_critic_s"]
keys += ["critic_step_us_fused", "critic_step_us_autograd", "critic_step_autograd_over_fused"]
if mujoco:
    keys += ["mujoco_step_us", "shac_iteration_walk_over_mujoco_step",
             "shac_iteration_velocity_over_mujoco_step"]
missing = [k for k in keys if k not in d]
assert not missing, f"missing keys: {missing}"
for k in keys:
    v = d[k]
    assert isinstance(v, (int, float)) and math.isfinite(v) and v > 0, f"{k} = {v!r}"
if mujoco:  # the anchor names its library, "4.0.0"
    import re
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", d.get("mujoco_version", "")), d.get("mujoco_version")
assert d["contacts_in_bench_state"] == 4, "the bench state must have all four feet in contact"
for task in ("walk", "velocity"):  # an iteration holds its rollout
    assert d[f"shac_iteration_s_{task}"] > d[f"shac_iteration_{task}_rollout_s"], task
print("bench JSON ok:", ", ".join(f"{k}={d[k]:.4g}" for k in keys))
' "$mujoco" || fail "bench JSON"
    ;;

  badrobot)
    rc=0
    out=$("$bin" sim --robot nosuchrobot --duration 0.01 2>&1) || rc=$?
    echo "$out"
    [ "$rc" -eq 1 ] || fail "exit code $rc, expected 1"
    echo "$out" | grep -q "nosuchrobot.yaml" || fail "the error does not name nosuchrobot.yaml"
    echo "$out" | grep -q "not found" || fail "the error does not say the file was not found"
    ;;

  badflags)
    policy=$1
    dir=$2
    mkdir -p "$dir"
    # Each case: the arguments, then a text the error must contain. 10 s each at most: before
    # the ranges, some of these hung (a billion solver iterations, 100 000 threads).
    check() {
      local want=$1 rc=0 out
      shift
      out=$(timeout 10 "$bin" "$@" 2>&1) || rc=$?
      [ "$rc" -ne 124 ] || fail "'$*' hung"
      [ "$rc" -ne 0 ] || fail "'$*' succeeded: $out"
      # A here-string, not `echo | grep -q`: grep -q exits at the first match and the echo's
      # SIGPIPE would fail the pipeline under pipefail.
      grep -q -- "$want" <<<"$out" || fail "'$*': the error does not name '$want': $out"
    }
    check "--threads" eval "$policy" --threads 100000
    check "--threads" eval "$policy" --threads 0
    check "--iterations" eval "$policy" --iterations 2000000000
    check "--envs" eval "$policy" --envs 2000000000
    check "--dt" eval "$policy" --dt 0
    check "--dt" eval "$policy" --dt -1
    check "--seed" eval "$policy" --seed 99999999999999999999
    check "--seed" eval "$policy" --seed -1
    check "--seed" train "$policy" --seed 99999999999999999999
    check "--kp" sim --kp -5
    check "--duration" sim --duration 1e12
    check "--dt" sim --dt 0
    check "/dev/null: is a special file" sim --duration 0.01 --csv /dev/null
    check "$dir: is a directory" sim --duration 0.01 --csv "$dir"
    # Every numeric flag has a range: a delay of 1e9 s crashed fit-actuator's search.
    logdir=${dir}_log
    rm -rf "$logdir"
    mkdir -p "$logdir"
    "$bin" fit-actuator --synthesize "$logdir/log.csv" --duration 1 >/dev/null 2>&1 ||
      fail "fit-actuator --synthesize exited with $?"
    check "--max-delay" fit-actuator "$logdir/log.csv" --max-delay 1e9 -o "$logdir/a.yaml"
    check "--max-delay" fit-actuator "$logdir/log.csv" --max-delay -1 -o "$logdir/a.yaml"
    check "--duration" fit-actuator --synthesize "$logdir/s.csv" --duration 1e12
    check "--seed" fit-actuator --synthesize "$logdir/s.csv" --seed 99999999999
    check "--count" sysid --generate cube --count 0 --out "$logdir/g"
    check "--dt" sysid --generate cube --dt 0 --out "$logdir/g"
    check "--threads" toy grad-norm --threads 100000 --out "$logdir/t"
    check "--points" toy falling-mass --points 2000000000 --out "$logdir/t"
    check "--seconds" bench --seconds 1e9
    check "--eps" gradcheck --eps 0
    [ ! -e "$logdir/a.yaml" ] || fail "fit-actuator wrote $logdir/a.yaml despite a bad flag"
    rm -rf "$logdir"
    [ -c /dev/null ] || fail "/dev/null is no longer a character device"
    [ -z "$(ls -A "$dir")" ] || fail "$dir is not empty: $(ls -A "$dir")"
    ;;

  toy)
    dir=$1
    rm -rf "$dir"
    args=(toy falling-mass --out "$dir" --points 21 --samples 8 --kappa 300)
    command -v gnuplot >/dev/null || args+=(--no-plot)
    "$bin" "${args[@]}" || fail "diffloco toy falling-mass exited with $?"
    csv=$dir/falling_mass.csv
    [ -f "$csv" ] || fail "$csv was not written"
    ! ls "$dir"/*.tmp >/dev/null 2>&1 || fail "temporary files were left behind: $(ls "$dir"/*.tmp)"
    header=$(head -n 1 "$csv")
    expected="h0"
    for m in hard smoothed_k300 stochastic; do
      expected="$expected,${m}_z,${m}_vz,${m}_dz_dh0,${m}_dvz_dh0"
    done
    expected="$expected,stochastic_exact_dz_dh0,stochastic_exact_dvz_dh0"
    [ "$header" = "$expected" ] || fail "header is '$header', expected '$expected'"
    awk -F, 'NR > 1 { rows++; if (NF != 15) bad = 1 } END { exit (bad || rows != 21) }' "$csv" ||
      fail "$csv: expected 21 rows of 15 fields"
    if command -v gnuplot >/dev/null; then
      [ -s "$dir/falling_mass.png" ] || fail "$dir/falling_mass.png was not written"
      head -c 8 "$dir/falling_mass.png" | od -An -c | grep -q "P   N   G" || fail "not a PNG"
    fi
    ;;

  gradnorm)
    dir=$1
    rm -rf "$dir"
    args=(toy grad-norm --out "$dir" --horizons 2 4 --envs 2 --windows 1)
    command -v gnuplot >/dev/null || args+=(--no-plot)
    "$bin" "${args[@]}" || fail "diffloco toy grad-norm exited with $?"
    csv=$dir/grad_norm.csv
    [ -f "$csv" ] || fail "$csv was not written"
    header=$(head -n 1 "$csv")
    expected="horizon"
    for r in quadruped anymal; do
      expected="$expected,${r}_mean,${r}_median,${r}_max,${r}_resets,${r}_mean_over_h"
    done
    [ "$header" = "$expected" ] || fail "header is '$header', expected '$expected'"
    # 2 rows of 11 fields; every mean, median, max positive and finite (awk: nan/inf fail > 0 &&
    # < 1e300 or do not parse as numbers).
    awk -F, 'NR > 1 { rows++; if (NF != 11) bad = 1
                      for (i = 2; i <= NF; i++) if ((i - 1) % 5 != 4 && !($i + 0 > 0 && $i + 0 < 1e300)) bad = 1 }
             END { exit (bad || rows != 2) }' "$csv" || fail "$csv: expected 2 rows of 11 positive finite fields"
    if command -v gnuplot >/dev/null; then
      [ -s "$dir/grad_norm.png" ] || fail "$dir/grad_norm.png was not written"
    fi
    ;;

  sysid)
    dir=$1
    rm -rf "$dir"
    "$bin" sysid --generate cube --out "$dir/data" --count 3 --duration 0.4 --seed 3 ||
      fail "diffloco sysid --generate exited with $?"
    for f in toss_000.csv toss_001.csv toss_002.csv truth.txt; do
      [ -f "$dir/data/$f" ] || fail "$dir/data/$f was not written"
    done
    header=$(head -n 1 "$dir/data/toss_000.csv")
    [ "$header" = "t,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz" ] || fail "toss header is '$header'"
    awk 'NR > 1 { rows++ } END { exit rows != 81 }' "$dir/data/toss_000.csv" ||
      fail "toss_000.csv: expected 81 rows"
    grep -qx "side 0.1" "$dir/data/truth.txt" || fail "truth.txt has no 'side 0.1'"
    "$bin" sysid --model cube --data "$dir"/data/toss_*.csv --fit side,mu --set side=0.07,mu=0.4 \
      --iterations 40 --stride 2 --truth "$dir/data/truth.txt" --out "$dir/fit" \
      --json "$dir/fit/result.json" >"$dir/fit.log" 2>&1 || { cat "$dir/fit.log"; fail "fit exited with $?"; }
    cat "$dir/fit.log"
    grep -q "per gradient step" "$dir/fit.log" || fail "no runtime per gradient step in the output"
    header=$(head -n 1 "$dir/fit/sysid_log.csv")
    [ "$header" = "iteration,loss,lr,seconds,side,side_grad,mu,mu_grad" ] ||
      fail "sysid_log.csv header is '$header'"
    awk 'NR > 1 { rows++ } END { exit rows != 40 }' "$dir/fit/sysid_log.csv" ||
      fail "sysid_log.csv: expected 40 rows"
    awk '$1 == "side" { ok = ($2 > 0.095 && $2 < 0.105) } $1 == "mu" { okm = ($2 > 0.285 && $2 < 0.315) }
         END { exit !(ok && okm) }' "$dir/fit/params.txt" || fail "fitted side/mu off by more than 5 %"
    python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["params"]["side"]
sys.exit(abs(p["initial"] - 0.07) > 1e-12 or not 0.095 < p["fitted"] < 0.105)' \
      "$dir/fit/result.json" || fail "result.json: side $(cat "$dir/fit/result.json")"
    # Bad input: a NaN in row 5 (line 6), column vz (11).
    sed '6s/^\([^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,\)[^,]*/\1nan/' \
      "$dir/data/toss_000.csv" >"$dir/bad.csv"
    rc=0
    out=$("$bin" sysid --model cube --data "$dir/bad.csv" --fit side --iterations 1 --out "$dir/bad" 2>&1) || rc=$?
    echo "$out"
    [ "$rc" -eq 1 ] || fail "bad data: exit code $rc, expected 1"
    echo "$out" | grep -q "bad.csv:6: column 11 'vz': NaN" || fail "the error does not name file, line and column"
    ;;

  *)
    fail "unknown mode $mode"
    ;;
esac
echo "ok"
