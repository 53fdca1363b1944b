#!/usr/bin/env bash
# Builds diffloco against LibTorch 2.x from the PyTorch wheel on PyPI (the LibTorch of the GPU
# machine's CUDA PyTorch), beside the default build against Debian's 1.13: the code must compile
# with both (docs/gpu.md#libtorch-2x). Then, on the CPU: links everything, runs a short SHAC and
# PPO training, export and evaluation, and the test suite.
# usage: tools/device/libtorch2_check.sh [WORKDIR] [TORCH_VERSION]
#   WORKDIR (default /tmp/diffloco-libtorch2): the wheels, the unpacked LibTorch and the build.
#   TORCH_VERSION (default 2.11.0). Needs network to PyPI once (about 880 MB) and about 40 min of
#   two cores.
#   COMPILE_ONLY=1 (environment): compile the LibTorch libraries and stop (no CUDA libraries
#   needed). CMAKE_ARGS (environment): more arguments for the configure step.
# The wheel's libtorch_cuda needs CUDA's runtime libraries at load time even on the CPU: those of
# the CUDA toolkit (/usr/local/cuda/lib64) and three that the toolkit lacks (cuSPARSELt, NVSHMEM,
# cuFile), taken from their PyPI wheels. The link allows symbols that shared libraries leave
# undefined (the CUDA ones a CPU run never calls).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-/tmp/diffloco-libtorch2} version=${2:-2.11.0}
mkdir -p "$work"
py=$(python3 -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
fetch() {  # fetch PIP_REQUIREMENT: its wheel into $work (no dependencies)
  python3 -m pip download --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
    --platform manylinux2014_x86_64 --python-version "$py" "$1" -d "$work"
}
wheel=$(ls "$work"/torch-"$version"-cp"$py"-*.whl 2>/dev/null | head -1 || true)
if [[ -z $wheel ]]; then
  fetch "torch==$version"
  wheel=$(ls "$work"/torch-"$version"-cp"$py"-*.whl | head -1)
fi
[[ -d $work/torch/include ]] ||
  (python3 -m zipfile -e "$wheel" "$work/unpacked" && mv "$work/unpacked/torch" "$work/torch" &&
   rm -rf "$work/unpacked")
torch=$work/torch
# Caffe2's CMake files give CUDA targets every architecture of the wheel unless told one (90: H100,
# H200), some of which a newer nvcc rejects.
TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} \
cmake -S "$repo" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDIFFLOCO_PYTHON=OFF \
  -DCMAKE_PREFIX_PATH="$torch" -DCaffe2_DIR="$torch/share/cmake/Caffe2" \
  -DTorch_DIR="$torch/share/cmake/Torch" -DCMAKE_EXE_LINKER_FLAGS="-Wl,--allow-shlib-undefined" \
  -DTORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}" ${CMAKE_ARGS:-}
grep -q "TORCH_LIBRARY:FILEPATH=$torch/lib/libtorch.so" "$work/build/CMakeCache.txt" ||
  { echo "cmake did not take LibTorch from $torch" >&2; exit 1; }
ninja -C "$work/build" diffloco_envs diffloco_policies diffloco_algorithms diffloco_distributed \
  diffloco_train diffloco_runtime diffloco_export diffloco_onnx_export diffloco_mujoco_eval \
  diffloco_experiments diffloco_cli
echo "diffloco's LibTorch libraries compile against LibTorch $version ($torch)"
[[ -z ${COMPILE_ONLY:-} ]] || exit 0

if [[ ! -d $work/cudalibs ]]; then
  for req in nvidia-cusparselt-cu13 nvidia-nvshmem-cu13 nvidia-cufile; do fetch "$req"; done
  mkdir -p "$work/cudalibs.tmp"
  for w in "$work"/nvidia_*.whl; do
    python3 -m zipfile -e "$w" "$work/cudalibs.tmp/$(basename "$w" .whl)"
  done
  mkdir -p "$work/cudalibs.new"
  find "$work/cudalibs.tmp" -name '*.so*' -exec cp {} "$work/cudalibs.new/" \;
  rm -rf "$work/cudalibs.tmp" && mv "$work/cudalibs.new" "$work/cudalibs"
fi
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$work/cudalibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ninja -C "$work/build"
bin=$work/build/diffloco run=$work/runs
rm -rf "$run"
"$bin" train "$repo/configs/velocity_anymal_shac.yaml" --set shac.iterations=5 --out "$run/shac"
"$bin" train "$repo/configs/velocity_anymal_ppo.yaml" --set ppo.iterations=2 --out "$run/ppo"
"$bin" train "$repo/configs/walk_quadruped_shac.yaml" --set shac.iterations=2 --set shac.num_envs=4 \
  --nproc 2 --out "$run/two_ranks"
"$bin" export "$(ls -d "$run"/shac/*/)" --format both -o "$run/policy.pt"
"$bin" eval "$run/policy.pt" --contact hard --episodes 4 --envs 4
"$bin" eval "$repo/pretrained/velocity_anymal_rough.pt" --contact hard --terrain pyramid_stairs \
  --episodes 8 --envs 8
# cli_train_distributed also launches ranks with the system Python's torchrun, whose TCPStore
# (Debian's torch 1.13) a 2.x rank cannot talk to; its other launches are the --nproc run above.
ctest --test-dir "$work/build" -j2 --output-on-failure -E cli_train_distributed
echo "diffloco builds, trains and passes its tests against LibTorch $version on the CPU"
