#!/bin/bash
# Prepares a folder that runs gpu_check on a GPU machine without this machine's build tools:
# gpu_check built for a generic x86-64 CPU with CUDA's runtime linked statically, the shared
# libraries it needs that such a machine may lack (tinyxml2, yaml-cpp), the robot configs, and
# run.sh, which writes gpu_check.json and its log (plus nvidia-smi, host and register/stack
# reports) into $OUT (default: the folder itself).
#
#   tools/device/gpu_check_carry.sh DEST [BUILD_DIR]   (BUILD_DIR default: build-gpu, configured here)
set -euo pipefail
dest=${1:?usage: tools/device/gpu_check_carry.sh DEST [BUILD_DIR]}
root="$(cd "$(dirname "$0")/../.." && pwd)"
build=${2:-$root/build-gpu}
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DDIFFLOCO_NATIVE=OFF \
        -DDIFFLOCO_TESTS=OFF
fi
ninja -C "$build" gpu_check
mkdir -p "$dest/lib"
cp "$build/gpu_check" "$dest/"
for lib in $(ldd "$build/gpu_check" | awk '/tinyxml2|yaml-cpp/ {print $3}'); do cp -L "$lib" "$dest/lib/"; done
rm -rf "$dest/configs"
cp -r "$root/configs" "$dest/configs"
cat > "$dest/run.sh" <<'RUN'
#!/bin/bash
C="$(cd "$(dirname "$0")" && pwd)"
OUT=${OUT:-$C}
export LD_LIBRARY_PATH="$C/lib:${LD_LIBRARY_PATH:-}"
export DIFFLOCO_CONFIG_DIR="$C/configs"
{ nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$OUT/nvidia-smi.txt" 2>&1
{ nproc; lscpu | head -20; head -2 /etc/os-release; } > "$OUT/host.txt" 2>&1
cuobjdump --dump-resource-usage "$C/gpu_check" > "$OUT/resource_usage.txt" 2>&1
timeout 380 "$C/gpu_check" --out "$OUT/gpu_check.json" "$@" > "$OUT/gpu_check.log" 2>&1
echo "gpu_check rc=$?" >> "$OUT/gpu_check.log"
cat "$OUT/gpu_check.log"
RUN
chmod +x "$dest/run.sh"
echo "ready: $dest (run $dest/run.sh on the GPU machine)"
