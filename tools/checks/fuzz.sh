#!/usr/bin/env bash
# Fuzzes the readers with libFuzzer + ASan + UBSan (clang; CMake option DIFFLOCO_FUZZ): URDF,
# robot YAML, actuator joint log CSV, sysid trajectory CSV, torch archive check (zip), STL mesh
# (robot init's mesh feet), task YAML,
# training config with --set, policy file (policy.pt), exported policy metadata, checkpoint
# (--resume) (tests/fuzz/). Corpora are seeded from
# configs/ and pretrained/ and kept in build-fuzz/corpus/<target> between runs; crashes land in
# build-fuzz/findings/.
#   tools/checks/fuzz.sh                 60 s per target
#   tools/checks/fuzz.sh --seconds 600   longer
#   tools/checks/fuzz.sh --runs 20000    a fixed number of inputs, a fixed seed (deterministic: CI)
#   tools/checks/fuzz.sh --targets "fuzz_urdf fuzz_task_yaml" ...   only these
# The last five link LibTorch: their instrumented build compiles the torch layers again with
# clang (~10 min on 2 cores), so CI runs the six torch-free targets (--targets).
set -euo pipefail
cd "$(dirname "$0")/../.."
limit=(-max_total_time=60)
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) limit=(-max_total_time="$2"); shift 2 ;;
    --runs) limit=(-runs="$2" -seed=1); shift 2 ;;
    --targets) read -r -a only <<<"$2"; shift 2 ;;
    *) echo "usage: tools/checks/fuzz.sh [--seconds N | --runs N] [--targets \"T ...\"]" >&2
       exit 2 ;;
  esac
done
build=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDIFFLOCO_FUZZ=ON -DDIFFLOCO_TESTS=OFF -DDIFFLOCO_NATIVE=OFF -DDIFFLOCO_PYTHON=OFF >/dev/null
targets=(fuzz_urdf fuzz_robot_yaml fuzz_joint_log fuzz_sysid_csv fuzz_zip_archive fuzz_stl fuzz_task_yaml
         fuzz_train_config fuzz_policy_file fuzz_policy_metadata fuzz_checkpoint)
if [ -n "${only+x}" ]; then targets=("${only[@]}"); fi
cmake --build "$build" -j 2 --target "${targets[@]}"

# Seeds: the project's own files and small valid examples.
seed() { mkdir -p "$build/corpus/$1"; cp "${@:2}" "$build/corpus/$1/" 2>/dev/null || true; }
seed fuzz_urdf configs/robots/*.urdf
seed fuzz_robot_yaml configs/robots/*.yaml
seed fuzz_task_yaml configs/tasks/*.yaml
seed fuzz_train_config configs/*.yaml
mkdir -p "$build/corpus/fuzz_train_config"
printf 'name: t\nalgorithm: shac\ntask: walk\n#--set\nshac.iterations=3\ntask.sim.contact=hard\n' \
  >"$build/corpus/fuzz_train_config/sets.yaml"
seed fuzz_policy_metadata pretrained/*.yaml
# fuzz_policy_file and fuzz_checkpoint write a valid file of theirs to DIFFLOCO_FUZZ_SEED_DIR.
mkdir -p "$build/corpus/fuzz_policy_file" "$build/corpus/fuzz_checkpoint"
# Small archives of the shapes torch writes: stored and deflated records, plain and zip64.
mkdir -p "$build/corpus/fuzz_zip_archive"
python3 - "$build/corpus/fuzz_zip_archive" <<'PY'
import sys, zipfile
for name, z64 in (("plain.pt", False), ("zip64.pt", True)):
    with zipfile.ZipFile(f"{sys.argv[1]}/{name}", "w") as z:
        for rec, data, method in (("a/data.pkl", b"\x80\x02}q\x00." * 20, zipfile.ZIP_STORED),
                                  ("a/code/__torch__.py", b"def forward(self):\n  pass\n" * 30,
                                   zipfile.ZIP_DEFLATED), ("a/version", b"3\n", zipfile.ZIP_STORED)):
            info = zipfile.ZipInfo(rec)
            info.compress_type = method
            with z.open(info, "w", force_zip64=z64) as f:
                f.write(data)
PY
# A tetrahedron, binary and ASCII.
mkdir -p "$build/corpus/fuzz_stl"
python3 - "$build/corpus/fuzz_stl" <<'PY'
import struct, sys
tris = [((0, 0, 0), (1, 0, 0), (0, 1, 0)), ((0, 0, 0), (0, 1, 0), (0, 0, 1)),
        ((0, 0, 0), (0, 0, 1), (1, 0, 0)), ((1, 0, 0), (0, 1, 0), (0, 0, 1))]
with open(f"{sys.argv[1]}/binary.stl", "wb") as f:
    f.write(b" " * 80 + struct.pack("<I", len(tris)))
    for t in tris:
        f.write(struct.pack("<12fH", 0, 0, 0, *[c for v in t for c in v], 0))
with open(f"{sys.argv[1]}/ascii.stl", "w") as f:
    f.write("solid t\n")
    for t in tris:
        f.write("facet normal 0 0 0\nouter loop\n")
        f.write("".join(f"vertex {v[0]} {v[1]} {v[2]}\n" for v in t))
        f.write("endloop\nendfacet\n")
    f.write("endsolid t\n")
PY
mkdir -p "$build/corpus/fuzz_joint_log" "$build/corpus/fuzz_sysid_csv"
# A log the reader accepts needs at least 100 samples.
awk 'BEGIN { print "time,q_target,q,qd,tau"
             for (k = 0; k < 120; ++k)
               printf "%.3f,0.1,%.5f,%.3f,%.3f\n", 0.001 * k, 0.0008 * k, 0.1, 1.5 - 0.01 * k }' \
  >"$build/corpus/fuzz_joint_log/log.csv"
python3 - "$build/corpus/fuzz_sysid_csv/trajectory.csv" <<'PY'
import sys, xml.etree.ElementTree as ET
joints = [j.get("name") for j in ET.parse("configs/robots/quadruped.urdf").getroot().iter("joint")
          if j.get("type") != "fixed"]
cols = ["t", "x", "y", "z", "qw", "qx", "qy", "qz"] + ["q_" + j for j in joints]
cols += ["vx", "vy", "vz", "wx", "wy", "wz"] + ["v_" + j for j in joints] + ["target_" + j for j in joints]
rows = [",".join(cols)]
for k in range(3):
    vals = {c: 0.0 for c in cols}
    vals.update(t=0.01 * k, z=0.5, qw=1.0)
    rows.append(",".join(str(vals[c]) for c in cols))
open(sys.argv[1], "w").write("\n".join(rows) + "\n")
PY

mkdir -p "$build/findings"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan_torch.supp  # leaks inside LibTorch only
status=0
for t in "${targets[@]}"; do
  echo "== $t"
  # -timeout: an input that takes over 10 s is a hang finding; -rss_limit_mb: a memory blow-up.
  if ! DIFFLOCO_FUZZ_SEED_DIR="$PWD/$build/corpus/$t" "$build/$t" "$build/corpus/$t" "${limit[@]}" \
      -timeout=10 -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$build/findings/$t-" \
      -print_final_stats=1 2>"$build/$t.log"; then
    status=1
    tail -n 30 "$build/$t.log"
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/$t.log" | tr '\n' ' '
  echo
done
exit $status
