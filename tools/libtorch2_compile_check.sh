#!/usr/bin/env bash
# Compiles every LibTorch-using library of diffloco against LibTorch 2.x from the PyTorch wheel on
# PyPI (the LibTorch of the GPU machine's CUDA PyTorch), beside the default build against Debian's
# 1.13: the code must compile with both (docs/gpu.md#libtorch-2x). Compiles, does not link: the
# wheel's libtorch_cuda needs CUDA's runtime libraries, which a machine without a GPU lacks.
# usage: tools/libtorch2_compile_check.sh [WORKDIR] [TORCH_VERSION]
#   WORKDIR (default /tmp/diffloco-libtorch2): the wheel, its unpacked LibTorch and the build.
#   TORCH_VERSION (default 2.11.0). Needs network to PyPI once (about 530 MB) and about 25 min of
#   two cores for the build.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/diffloco-libtorch2} version=${2:-2.11.0}
mkdir -p "$work"
py=$(python3 -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
wheel=$(ls "$work"/torch-"$version"-cp"$py"-*.whl 2>/dev/null | head -1 || true)
if [[ -z $wheel ]]; then
  python3 -m pip download --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
    "torch==$version" -d "$work"
  wheel=$(ls "$work"/torch-"$version"-cp"$py"-*.whl | head -1)
fi
[[ -d $work/torch/include ]] ||
  (cd "$work" && python3 -m zipfile -e "$wheel" "$work/unpacked" &&
   mv "$work/unpacked/torch" "$work/torch" && rm -rf "$work/unpacked")
torch=$work/torch
cmake -S "$repo" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDIFFLOCO_PYTHON=OFF \
  -DCMAKE_PREFIX_PATH="$torch" -DCaffe2_DIR="$torch/share/cmake/Caffe2" \
  -DTorch_DIR="$torch/share/cmake/Torch"
grep -q "TORCH_LIBRARY:FILEPATH=$torch/lib/libtorch.so" "$work/build/CMakeCache.txt" ||
  { echo "cmake did not take LibTorch from $torch" >&2; exit 1; }
ninja -C "$work/build" diffloco_envs diffloco_policies diffloco_algorithms diffloco_distributed \
  diffloco_train diffloco_runtime diffloco_export diffloco_onnx_export diffloco_mujoco_eval \
  diffloco_experiments diffloco_cli
echo "diffloco's LibTorch libraries compile against LibTorch $version ($torch)"
