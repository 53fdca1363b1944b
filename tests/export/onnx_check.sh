#!/bin/bash
# ctest deploy_onnx_runtime: test_export exports policies as ONNX and TorchScript with the
# TorchScript actions on 1000 observations, then ONNX Runtime (PyPI, in the test venv that
# .ci/install-deps makes) runs the ONNX files and compares. Skipped (exit 77) with a message when
# the Python has no onnxruntime or onnx.
# usage: onnx_check.sh TEST_EXPORT PYTHON SCRIPT WORKDIR
set -u
test_export=$1 python=$2 script=$3 work=$4
if ! "$python" -c "import onnxruntime, onnx, numpy" 2>/dev/null; then
  echo "SKIP: $python lacks onnxruntime/onnx/numpy (bash .ci/install-deps makes the test venv)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
DIFFLOCO_ONNX_FIXTURE="$work" "$test_export" --gtest_filter=OnnxExport.WritesModelsForOnnxRuntime \
  || exit 1
[ -f "$work/walk_run.onnx" ] || { echo "SKIP: diffloco built without libonnx-dev"; exit 77; }
"$python" "$script" "$work" walk_run walk_bounded walk_quadruped velocity_anymal
