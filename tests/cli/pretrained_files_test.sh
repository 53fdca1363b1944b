#!/usr/bin/env bash
# The three files of each shipped policy describe one policy: the .yaml holds the .pt's
# metadata_json, and ONNX Runtime on the .onnx gives the TorchScript file's actions on 1000 random
# observations, with the same metadata (tests/export/check_onnx.py, the ONNX export's own check).
# Skipped (exit 77) with a message when TEST_PYTHON has no onnxruntime or onnx.
# usage: pretrained_files_test.sh SYSTEM_PYTHON TEST_PYTHON REPO WORKDIR
#   SYSTEM_PYTHON: torch and yaml (Debian's); TEST_PYTHON: onnx and onnxruntime (the test venv)
set -euo pipefail
sys_python=$1 test_python=$2 repo=$3 work=$4
if ! "$test_python" -c "import onnxruntime, onnx, numpy" 2>/dev/null; then
  echo "SKIP: $test_python lacks onnxruntime/onnx/numpy (bash .ci/install-deps makes the test venv)"
  exit 77
fi
names="velocity_anymal walk_quadruped velocity_anymal_rough"
rm -rf "$work" && mkdir -p "$work"
"$sys_python" - "$repo/pretrained" "$work" $names <<'PY'
import json, os, shutil, sys
import torch, yaml
src, work, names = sys.argv[1], sys.argv[2], sys.argv[3:]
torch.manual_seed(0)
for name in names:
    module = torch.jit.load(os.path.join(src, name + ".pt"))
    meta = json.loads(module.metadata_json)
    with open(os.path.join(src, name + ".yaml")) as f:
        if yaml.safe_load(f) != meta:
            sys.exit(f"pretrained/{name}.yaml is not pretrained/{name}.pt's metadata_json")
    with open(os.path.join(work, name + "_metadata.json"), "w") as f:
        json.dump(meta, f)
    shutil.copy(os.path.join(src, name + ".onnx"), work)
    obs = torch.randn(1000, meta["observation"]["size"], dtype=torch.float32)
    with torch.no_grad():
        actions = module(obs).double()
    for suffix, rows in (("_obs.csv", obs.double()), ("_actions.csv", actions)):
        with open(os.path.join(work, name + suffix), "w") as f:
            f.writelines(",".join(repr(float(x)) for x in row) + "\n" for row in rows.tolist())
    print(f"pretrained/{name}: .yaml == .pt metadata_json")
PY
"$test_python" "$repo/tests/export/check_onnx.py" "$work" $names
