#!/usr/bin/env bash
# Public vendor quadrupeds as their makers publish them, through `diffloco robot init` and
# `robot check` (with `--task velocity`: does the velocity task pay this robot for stepping?): the
# URDFs of example-robot-data (Pinocchio's robot collection, a PyPI wheel; pinned below), each
# file untouched, each proposal written as robot init writes it.
# usage: tools/reproduce/vendor_robots.sh OUT_DIR [DIFFLOCO] > summary.txt
#   OUT_DIR/wheel caches the wheel (pip downloads it once); OUT_DIR/<robot>.yaml is the proposal
#   (with OUT_DIR/<robot>_sphere_feet.urdf, the URDF it names, for a robot with mesh feet),
#   OUT_DIR/<robot>.log what robot init and robot check printed. Train one with
#   `diffloco train configs/velocity_anymal_shac.yaml --set task.robot=OUT_DIR/<robot>.yaml`.
set -euo pipefail
out=$1 bin=$(realpath "${2:-build/diffloco}")
version=6.0.0
root=cmeel.prefix/share/example-robot-data/robots
# name:path inside the wheel's robots folder
robots=(
  "a1:a1_description/urdf/a1.urdf"
  "go1:go1_description/urdf/go1.urdf"
  "go2:go2_description/urdf/go2.urdf"
  "laikago:laikago_description/urdf/laikago.urdf"
  "b1:b1_description/urdf/b1.urdf"
  "anymal_b:anymal_b_simple_description/robots/anymal.urdf"
  "anymal_c:anymal_c_simple_description/urdf/anymal.urdf"
  "solo12:solo_description/robots/solo12.urdf"
)
mkdir -p "$out/wheel"
wheel=$(ls "$out"/wheel/example_robot_data-"$version"-*.whl 2>/dev/null | head -1 || true)
if [[ -z "$wheel" ]]; then
  python3 -m pip download "example-robot-data==$version" --no-deps -d "$out/wheel" >&2
  wheel=$(ls "$out"/wheel/example_robot_data-"$version"-*.whl | head -1)
fi
for r in "${robots[@]}"; do
  name=${r%%:*} urdf=${r#*:}
  unzip -q -o "$wheel" "$root/$urdf" -d "$out"
  log="$out/$name.log"
  if "$bin" robot init "$out/$root/$urdf" -o "$out/$name.yaml" --force >"$log" 2>&1 &&
     "$bin" robot check "$out/$name.yaml" >>"$log" 2>&1; then
    "$bin" robot check "$out/$name.yaml" --task velocity >"$out/$name.task.log" 2>&1 || true
    mass=$(sed -n 's/.*for .* (\([0-9.]*\) kg).*/\1/p' "$out/$name.yaml" | head -1)
    drive=$(sed -n 's/.*actuator: {\(kp: [0-9.]*, kd: [0-9.]*\).*/\1/p' "$out/$name.yaml")
    echo "$name ($urdf): $mass kg; $drive; $(grep -m1 'standing test' "$log" || true)"
    # mesh feet: the spheres robot init fitted (their mesh's path shortened to the wheel's)
    grep '^foot sphere on' "$log" | sed 's|fitted to .*/robots/|fitted to |; s|^|  |' || true
    echo "  $(grep -m1 'standing earns' "$out/$name.task.log" || true)"
    echo "  $(grep -m1 -E '^(stepping pays|warning: standing pays)' "$out/$name.task.log")"
  else
    echo "$name ($urdf): $(grep -m1 -E 'error|Error' "$log" | sed 's/^\[[^]]*\] //' || tail -1 "$log")"
  fi
done
