#!/usr/bin/env bash
# End-to-end checks of `diffloco robot`, run by ctest (tests/CMakeLists.txt):
#   robot_test.sh DIFFLOCO DATA DIR
# DATA is tests/robots/data (vendor-style URDFs). init on go_like.urdf writes a YAML that loads and
# stands (check exits 0 with STANDS and the camera warnings); init refuses to overwrite without
# --force; check on mini_like.yaml (IsaacLab joint order, no feet key) stands; a robot file with an
# unknown key exits 1 naming file, line and key; check --task prints both gaits' rewards and a
# verdict, and an unknown --set key is an error naming it.
set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

bin=$1 data=$2 dir=$3
rm -rf "$dir"
mkdir -p "$dir"

rc=0
"$bin" robot init "$data/go_like.urdf" -o "$dir/go.yaml" >"$dir/init.log" 2>&1 || rc=$?
cat "$dir/init.log"
[ "$rc" -eq 0 ] || fail "robot init exited with $rc"
for key in urdf joint_order feet default_joint_pos default_base_height torque_limit; do
  grep -q "^$key: " "$dir/go.yaml" || fail "the proposed YAML has no '$key'"
done
grep -q "^torque_limit: 35.55$" "$dir/go.yaml" || fail "torque_limit is not the largest URDF effort 35.55"
grep -q "^feet: \[FR_foot, FL_foot, RR_foot, RL_foot\]$" "$dir/go.yaml" || fail "feet not found"
grep -q "stands" "$dir/init.log" || fail "init did not report a standing pose"

rc=0
"$bin" robot init "$data/go_like.urdf" -o "$dir/go.yaml" >"$dir/init2.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "init over an existing file exited with $rc, expected 1"
grep -q "exists (use --force" "$dir/init2.log" || fail "no message about the existing file"

# Gains from the command line: the proposed drive, and the settle simulation's.
rc=0
"$bin" robot init "$data/go_like.urdf" -o "$dir/go_kp.yaml" --kp 60 --kd 1.5 >"$dir/init3.log" 2>&1 ||
  rc=$?
[ "$rc" -eq 0 ] || fail "robot init --kp 60 --kd 1.5 exited with $rc"
grep -q "^  actuator: {kp: 60, kd: 1.5," "$dir/go_kp.yaml" || fail "the given gains are not the drive"
grep -q "(kp 60, kd 1.5," "$dir/go_kp.yaml" || fail "the settle simulation did not use the given gains"

rc=0
"$bin" robot check "$dir/go.yaml" >"$dir/check.log" 2>&1 || rc=$?
cat "$dir/check.log"
[ "$rc" -eq 0 ] || fail "robot check of the proposed YAML exited with $rc"
grep -q "STANDS" "$dir/check.log" || fail "check did not report STANDS"
grep -q "warning: .*link 'camera_face': rotational inertia is not physical" "$dir/check.log" ||
  fail "check did not print the camera warning"
grep -q "^mass 13.1[0-9]* kg" "$dir/check.log" || fail "check did not print the mass"

rc=0
"$bin" robot check "$data/mini_like.yaml" >"$dir/mini.log" 2>&1 || rc=$?
cat "$dir/mini.log"
[ "$rc" -eq 0 ] || fail "robot check of mini_like.yaml exited with $rc"
grep -q "STANDS" "$dir/mini.log" || fail "check did not report STANDS for mini_like"

# --task: the proposed YAML under the velocity task, standing against a trot in place.
rc=0
"$bin" robot check "$dir/go.yaml" --task velocity --task-envs 8 --task-seconds 1 \
  >"$dir/task.log" 2>&1 || rc=$?
cat "$dir/task.log"
[ "$rc" -eq 0 ] || fail "robot check --task exited with $rc"
grep -q "^  foot_height_tracking  *[0-9.-]*  *[0-9.-]*  *[+-][0-9.]*$" "$dir/task.log" ||
  fail "check --task did not print the foot-height term for both gaits"
grep -Eq "^(stepping pays|warning: standing pays too well)" "$dir/task.log" ||
  fail "check --task gave no verdict"
rc=0
"$bin" robot check "$dir/go.yaml" --task velocity --set rewards.no_such_term.weight=1 \
  >"$dir/task_bad.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "robot check --task with an unknown --set key exited 0"
grep -q "no_such_term" "$dir/task_bad.log" || fail "the --set error does not name the key"

sed 's/^torque_limit:/torque_limimt:/' "$dir/go.yaml" >"$dir/bad.yaml"
rc=0
"$bin" robot check "$dir/bad.yaml" >"$dir/bad.log" 2>&1 || rc=$?
cat "$dir/bad.log"
[ "$rc" -eq 1 ] || fail "check of a bad robot file exited with $rc, expected 1"
grep -q "$dir/bad.yaml:[0-9]*: unknown key 'torque_limimt'" "$dir/bad.log" ||
  fail "the error does not name file, line and key"
echo "robot_test: all checks passed"
