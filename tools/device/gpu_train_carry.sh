#!/bin/bash
# Prepares a folder that trains with the simulator on the GPU (run.sim_device: cuda) on a GPU
# machine that has a CUDA PyTorch 2.x but no Eigen, yaml-cpp or build tools: diffloco built here
# against the LibTorch of that PyTorch's wheel (tools/device/libtorch2_check.sh's build, generic
# x86-64), the shared libraries it needs besides LibTorch, CUDA and the C/C++ runtimes, the
# configs, gpu_check (tools/device/gpu_check_carry.sh) and run.sh. On the GPU machine run.sh finds
# PyTorch's torch/lib and its nvidia/*/lib folders through python3 and writes into $OUT (default:
# the folder itself):
#   gpu_check.json, .log       parity and timing of the step, the VJP and the batch runner
#   bench.json                 diffloco bench --json (the rough SHAC iteration on the device too)
#   sim_device_<dev>_<n>.csv   metrics of 12 iterations of the rough SHAC config with n envs
#                              (256, 1024, 4096), the simulator on cpu (all cores) or cuda
#   walk_<dev>.csv             4 iterations of the walk config on each, to compare their metrics
#
#   tools/device/gpu_train_carry.sh DEST [WORKDIR]   (WORKDIR default /tmp/diffloco-libtorch2: the
#                                              wheel, its LibTorch and the build; about 880 MB
#                                              from PyPI once, then about 20 min of two cores)
set -euo pipefail
dest=${1:?usage: tools/device/gpu_train_carry.sh DEST [WORKDIR]}
root="$(cd "$(dirname "$0")/../.." && pwd)"
work=${2:-/tmp/diffloco-libtorch2}
# The LibTorch libraries against the wheel (configures WORKDIR/build), then the program. Generic
# x86-64: the GPU machine's CPU is not this one's.
COMPILE_ONLY=1 CMAKE_ARGS="-DDIFFLOCO_NATIVE=OFF -DDIFFLOCO_TESTS=OFF" \
  "$root/tools/device/libtorch2_check.sh" "$work"
ninja -C "$work/build" diffloco
"$root/tools/device/gpu_check_carry.sh" "$dest"
cp "$work/build/diffloco" "$dest/"
# Every library diffloco loads from this machine but LibTorch's, CUDA's and the C/C++ runtimes
skip='libtorch|libc10|libcuda|libcudart|libcublas|libcusparse|libcufft|libcurand|libcusolver|libnv|libcudnn|libnccl|libcupti|libgomp|libshm|libcaffe2|linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libpthread|libdl\.so|librt\.so'
# (the GPU machine has those, newer), compressed: the folder must stay small to travel. gpu_check's
# two (tinyxml2, yaml-cpp) stay in lib/.
rm -rf "$dest/train-lib" && mkdir "$dest/train-lib"
ldd "$work/build/diffloco" | awk '$3 ~ /^\// {print $1, $3}' | grep -Ev "^($skip)" |
  while read -r _ path; do cp -L "$path" "$dest/train-lib/"; done
tar -cJf "$dest/train-lib.tar.xz" -C "$dest" train-lib && rm -rf "$dest/train-lib"
cat > "$dest/train.sh" <<'RUN'
#!/bin/bash
# The training checks of the simulator on the GPU (tools/device/gpu_train_carry.sh made this
# folder).
C="$(cd "$(dirname "$0")" && pwd)"
OUT=${OUT:-$C}
# TORCH_DIR: a torch/ folder (default: the python3's); SIZES: the rough runs' env counts.
torch=${TORCH_DIR:-$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')}
nvidia=$(python3 -c 'import os, glob, torch; s = os.path.dirname(os.path.dirname(torch.__file__)); print(":".join(sorted(glob.glob(s + "/nvidia/*/lib") + glob.glob(s + "/nvidia/cu*/lib*"))))' 2>/dev/null)
libs=${TMPDIR:-/tmp}/diffloco-train-lib
rm -rf "$libs" && mkdir -p "$libs" && tar -xJf "$C/train-lib.tar.xz" -C "$libs"
export LD_LIBRARY_PATH="$libs/train-lib:$C/lib:$torch/lib:$nvidia:${LD_LIBRARY_PATH:-}"
export DIFFLOCO_CONFIG_DIR="$C/configs"
cores=$(nproc)
cd "$OUT"
log="$OUT/train_checks.log"
{ echo "torch $torch"; ldd "$C/diffloco" | grep -E "torch|c10|not found"; } > "$log" 2>&1
timeout 240 "$C/diffloco" bench --json --seconds 1 > "$OUT/bench.json" 2>> "$log"
echo "bench rc=$?" >> "$log"
for dev in cpu cuda; do
  timeout 120 "$C/diffloco" train "$C/configs/walk_quadruped_shac.yaml" --set shac.iterations=4 \
    --set run.sim_device=$dev --set run.sim_threads=$cores --out "$OUT/runs_walk_$dev" >> "$log" 2>&1
  echo "walk $dev rc=$?" >> "$log"
  cp "$OUT"/runs_walk_$dev/*/metrics.csv "$OUT/walk_$dev.csv" 2>> "$log"
done
for n in ${SIZES:-256 1024 4096}; do
  for dev in cpu cuda; do
    timeout 150 "$C/diffloco" train "$C/configs/velocity_anymal_rough_shac.yaml" \
      --set shac.iterations=12 --set shac.num_envs=$n --set run.sim_device=$dev \
      --set run.sim_threads=$cores --set run.checkpoint_every=1000 \
      --out "$OUT/runs_rough_${dev}_$n" >> "$log" 2>&1
    echo "rough $dev $n rc=$?" >> "$log"
    cp "$OUT"/runs_rough_${dev}_$n/*/metrics.csv "$OUT/sim_device_${dev}_$n.csv" 2>> "$log"
  done
done
rm -rf "$OUT"/runs_*
cat "$log"
RUN
chmod +x "$dest/train.sh"
du -sh "$dest"
echo "ready: $dest (on the GPU machine: $dest/run.sh, then $dest/train.sh)"
