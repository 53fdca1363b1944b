#!/bin/bash
# ctest deploy_python_load: the C++ test writes an exported policy and reference values, then
# Debian's Python (python3-torch) loads the file with torch.jit.load and compares.
# usage: python_check.sh TEST_EXPORT PYTHON SCRIPT WORKDIR
set -u
test_export=$1 python=$2 script=$3 work=$4
if ! "$python" -c "import torch" 2>/dev/null; then
  echo "SKIP: $python has no torch (apt-get install python3-torch)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
DIFFLOCO_EXPORT_FIXTURE="$work" "$test_export" \
  --gtest_filter=Export.ActionsMatchTheTrainingActorAndPythonFixture || exit 1
"$python" "$script" "$work"
