#!/usr/bin/env bash
# `diffloco fit-actuator` and `diffloco export` end to end (run by ctest, tests/CMakeLists.txt):
#   cli_deploy_test.sh DIFFLOCO PYTHON DIR
# A synthetic drive log is fitted within 5% of its drive; a bad log exits 1 naming file and line;
# a tiny SHAC run takes its actuator from the fitted file (--set task.actuator.file=...), and the
# exported policy's metadata carries exactly the fitted values.
set -euo pipefail
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
bin=$1 py=$2 dir=$3
rm -rf "$dir"
mkdir -p "$dir"

"$bin" fit-actuator --synthesize "$dir/log.csv" --kp 40 --kd 0.8 --effort 20 --saturation 30 \
  --velocity-limit 12 --true-inertia 0.02 --delay 0.003 >"$dir/synth.log" 2>&1 ||
  { cat "$dir/synth.log"; fail "synthesize failed"; }
"$bin" fit-actuator "$dir/log.csv" -o "$dir/actuator.yaml" | tee "$dir/fit.log" ||
  fail "fit-actuator failed"
"$py" - "$dir/actuator.yaml" <<'PY' || fail "fitted values off by more than 5%"
import sys
vals = {}
for line in open(sys.argv[1]):
    if ":" in line and not line.startswith((" ", "#")):
        k, v = line.split(":", 1)
        if v.strip():
            vals[k.strip()] = float(v)
truth = {"kp": 40, "kd": 0.8, "effort": 20, "saturation": 30, "velocity_limit": 12, "armature": 0.02}
bad = {k: (vals[k], t) for k, t in truth.items() if abs(vals[k] - t) > 0.05 * t}
print("fitted:", {k: round(vals[k], 4) for k in truth}, "off by > 5%:", bad)
sys.exit(1 if bad else 0)
PY

# Bad logs: the message names the file and the line.
printf 'time,q_target,q,qd\n0.0,0,0,0\n0.001,0,nan,0\n' >"$dir/nan.csv"
rc=0
"$bin" fit-actuator "$dir/nan.csv" >"$dir/nan.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a NaN row must exit 1 (got $rc)"
grep -q "nan.csv:3: column 'q': non-finite value nan" "$dir/nan.log" || fail "$(cat "$dir/nan.log")"
printf 'time,q,qd\n0,0,0\n' >"$dir/cols.csv"
rc=0
"$bin" fit-actuator "$dir/cols.csv" >"$dir/cols.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "cols.csv:1: missing column 'q_target'" "$dir/cols.log" ||
  fail "missing column: $(cat "$dir/cols.log")"

# Train with the fitted actuator, export, and compare.
cat >"$dir/tiny.yaml" <<'YAML'
name: cli_fitted
algorithm: shac
task: walk
shac:
  iterations: 1
  num_envs: 2
  horizon: 3
  critic_iterations: 1
policy:
  actor_hidden: [8]
  critic_hidden: [8]
YAML
"$bin" train "$dir/tiny.yaml" --set task.actuator.file="$dir/actuator.yaml" --out "$dir/runs" \
  >"$dir/train.log" 2>&1 || { cat "$dir/train.log"; fail "train failed"; }
run=$(ls -d "$dir"/runs/*_cli_fitted)
"$bin" export "$run" -o "$dir/export/policy.pt" || fail "export failed"
[ -f "$dir/export/policy.yaml" ] || fail "policy.yaml missing"
"$py" - "$dir/actuator.yaml" "$dir/export/policy.yaml" <<'PY' || fail "export != fitted actuator"
import json, sys
fit = {}
for line in open(sys.argv[1]):
    if ":" in line and not line.startswith((" ", "#")):
        k, v = line.split(":", 1)
        if v.strip():
            fit[k.strip()] = float(v)
# policy.yaml: block YAML whose values are JSON; read the actuator section by hand.
sec, meta = None, {}
for line in open(sys.argv[2]):
    if line.startswith("#") or not line.strip():
        continue
    if not line.startswith(" "):
        sec = line.split(":")[0]
        continue
    k, v = line.strip().split(":", 1)
    if sec == "actuator":
        meta[k] = json.loads(v)
for k in ["kp", "kd", "saturation", "velocity_limit", "armature"]:
    assert abs(meta[k] - fit[k]) <= 1e-9 * abs(fit[k]), (k, meta[k], fit[k])
assert all(abs(e - min(fit["effort"], 20.0)) < 1e-9 for e in meta["effort"]), meta["effort"]
assert meta["source"].endswith("actuator.yaml")
print("exported actuator == fitted:", {k: meta[k] for k in ["kp", "kd", "saturation"]})
PY
echo "cli_deploy: OK"
