#!/usr/bin/env bash
# End-to-end checks of `diffloco play` and `diffloco eval --record`, run by ctest:
#   play_test.sh video DIFFLOCO REPO DIR     mp4 of 2 s at 25 fps: duration, rate, frame count
#                                            (ffprobe); frames not blank; the walking robot moves
#                                            right (its commanded +x) under a fixed camera
#   play_test.sh gif DIFFLOCO REPO DIR       gif of 1 s at 10 fps: format, size, frame count
#   play_test.sh mujoco DIFFLOCO REPO DIR    the same episode in MuJoCo: a video, the robot moves
#   play_test.sh html DIFFLOCO REPO DIR      the viewer page in headless chromium: its clock runs,
#                                            a paused page holds its time, and at t = 0.5 s and
#                                            t = 1.5 s the robot is at two places, the later one
#                                            further right
#   play_test.sh record DIFFLOCO REPO DIR    eval --record: the JSON record's layout and sizes
#   play_test.sh terrain DIFFLOCO REPO DIR   a policy of the rough task (2 iterations) recorded on
#                                            the hardest stairs up: the record carries the terrain
#                                            around the robot, which stands on it; none on the plane
#   play_test.sh terrain_mujoco DIFFLOCO REPO DIR  the same in MuJoCo (an exported policy)
#   play_test.sh readme_gifs DIFFLOCO REPO DIR  the README's GIFs exist, under 2 MB each
#   play_test.sh badinput DIFFLOCO REPO DIR  missing policy, unwritable output, unknown engine,
#                                            unknown format: exit != 0 and a message naming it
set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

mode=$1 bin=$2 repo=$3 dir=$4
here=$(cd "$(dirname "$0")" && pwd)
walk=$repo/pretrained/walk_quadruped.pt
rm -rf "$dir"
mkdir -p "$dir"

# probe FILE ENTRY: one ffprobe stream field of the video
probe() { ffprobe -v error -select_streams v:0 -count_frames -show_entries "stream=$2" -of csv=p=0 "$1"; }
# frame VIDEO INDEX PNG: one frame of a video as an image
frame() { ffmpeg -v error -y -i "$1" -vf "select=eq(n\,$2)" -frames:v 1 "$3"; }
# position IMAGE -> "count x y width height colours"
position() { python3 "$here/robot_position.py" "$1"; }

# moved_right FIRST LAST MIN_PIXELS: the robot is visible in both images (not blank, many
# colours) and its centroid moved right by more than MIN_PIXELS.
moved_right() {
  local a b
  a=$(position "$1")
  b=$(position "$2")
  echo "robot in $1: $a; in $2: $b"
  python3 - "$a" "$b" "$3" <<'PY' || fail "the robot did not move right by more than $3 pixels ($1 -> $2)"
import sys
a, b, d = [float(x) for x in sys.argv[1].split()], [float(x) for x in sys.argv[2].split()], float(sys.argv[3])
assert a[5] > 50 and b[5] > 50, "blank frame"
assert a[0] > 30 and b[0] > 30, "robot not found"
assert b[1] - a[1] > d, (a, b)
PY
}

case "$mode" in
  video)
    out=$dir/walk.mp4
    "$bin" play "$walk" -o "$out" --duration 2 --fps 25 --size 320x180 --camera fixed \
      --contact hard --dt 0.005 | tee "$dir/log" || fail "play exited with $?"
    [ -f "$out" ] && [ ! -e "$out.tmp" ] || fail "$out missing or its .tmp left behind"
    grep -q "wrote $out: 50 frames" "$dir/log" || fail "no 'wrote $out: 50 frames' in the output"
    [ "$(probe "$out" codec_name)" = h264 ] || fail "codec $(probe "$out" codec_name)"
    [ "$(probe "$out" r_frame_rate)" = 25/1 ] || fail "frame rate $(probe "$out" r_frame_rate)"
    [ "$(probe "$out" nb_read_frames)" = 50 ] || fail "$(probe "$out" nb_read_frames) frames"
    [ "$(probe "$out" width,height)" = 320,180 ] || fail "size $(probe "$out" width,height)"
    duration=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$out")
    python3 -c "import sys; d = float('$duration'); sys.exit(0 if abs(d - 2.0) < 0.05 else 1)" ||
      fail "duration $duration s, expected 2 s"
    frame "$out" 0 "$dir/first.png"
    frame "$out" 49 "$dir/last.png"
    moved_right "$dir/first.png" "$dir/last.png" 20
    ;;
  gif)
    out=$dir/walk.gif
    "$bin" play "$walk" -o "$out" --duration 1 --fps 10 --size 160x96 || fail "play exited with $?"
    [ "$(ffprobe -v error -show_entries format=format_name -of csv=p=0 "$out")" = gif ] ||
      fail "$out is not a GIF"
    [ "$(probe "$out" width,height)" = 160,96 ] || fail "size $(probe "$out" width,height)"
    [ "$(probe "$out" nb_read_frames)" = 10 ] || fail "$(probe "$out" nb_read_frames) frames"
    ;;
  mujoco)
    out=$dir/walk_mujoco.mp4
    "$bin" play "$walk" --engine mujoco -o "$out" --duration 2 --fps 10 --size 320x180 \
      --camera fixed --dt 0.002 | tee "$dir/log" || fail "play --engine mujoco exited with $?"
    grep -q "mujoco" "$dir/log" || fail "the output does not say MuJoCo ran"
    [ "$(probe "$out" nb_read_frames)" = 20 ] || fail "$(probe "$out" nb_read_frames) frames"
    frame "$out" 0 "$dir/first.png"
    frame "$out" 19 "$dir/last.png"
    moved_right "$dir/first.png" "$dir/last.png" 20
    ;;
  html)
    page=$dir/walk.html
    "$bin" play "$walk" -o "$page" --duration 6 --envs 2 || fail "play -o page.html exited with $?"
    browser=$(command -v chromium || command -v chromium-browser || true)
    [ -n "$browser" ] || fail "chromium not found (.ci/install-deps installs it)"
    # Software WebGL (SwiftShader): CI has no GPU and no display.
    flags=(--headless --no-sandbox --disable-dev-shm-usage --use-angle=swiftshader
           --enable-unsafe-swiftshader --hide-scrollbars --window-size=640,400
           --user-data-dir="$dir/profile")
    # pagetime BUDGET_MS FRAGMENT: the page's clock (data-time) after that much virtual time.
    pagetime() {
      "$browser" "${flags[@]}" --virtual-time-budget="$1" --dump-dom "file://$page$2" 2>/dev/null |
        grep -o 'data-time="[0-9.]*"' | grep -o '[0-9.]*' || true
    }
    # The clock runs on its own from t = 0 (how far depends on the machine's load, so only that it
    # moved is checked), and a paused page stays at the time its URL names.
    running=$(pagetime 1500 "")
    paused=$(pagetime 1500 "#t=2&paused=1")
    echo "page time: playing from 0: '$running'; paused at 2: '$paused'"
    python3 -c "import sys; sys.exit(0 if float('$running' or -1) > 0.1 else 1)" ||
      fail "the page's clock does not advance ('$running')"
    [ "$paused" = 2.000 ] || fail "the paused page is at '$paused', not 2.000"
    # Paused at two times, orbit camera (it stays where the robots started): the robot moved.
    for t in 0.5 1.5; do
      "$browser" "${flags[@]}" --virtual-time-budget=2000 --screenshot="$dir/at_$t.png" \
        "file://$page#t=$t&paused=1&camera=orbit" 2>/dev/null || fail "chromium exited with $?"
      [ -s "$dir/at_$t.png" ] || fail "no screenshot at t = $t"
    done
    moved_right "$dir/at_0.5.png" "$dir/at_1.5.png" 20
    ;;
  record)
    out=$dir/traj.json
    "$bin" eval "$walk" --episodes 3 --envs 3 --record "$out" --record-envs 2 --json \
      >"$dir/eval.json" || fail "eval --record exited with $?"
    python3 -c "import json; json.load(open('$dir/eval.json'))" || fail "--json output is not JSON"
    python3 - "$out" <<'PY' || fail "$out is not a valid rollout record"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["format"] == "diffloco-rollout-2" and r["task"] == "walk", r["format"]
assert abs(r["dt"] - 0.01) < 1e-12 and len(r["envs"]) == 2
nb = len(r["bodies"])
assert r["bodies"][0] == "base" and nb == 13, r["bodies"]
assert {s["kind"] for s in r["shapes"]} == {"box", "capsule", "sphere"}
for e in r["envs"]:
    n = e["frames"]
    assert n > 100 and len(e["time"]) == n and len(e["pose"]) == n * nb * 7, n
    assert len(e["command"]) == 3 * n and len(e["velocity"]) == 3 * n
    x0, x1 = e["pose"][0], e["pose"][(n - 1) * nb * 7]
    assert x1 - x0 > 0.5, (x0, x1)  # the walk policy walks forward
print("record ok:", [e["frames"] for e in r["envs"]], "frames")
PY
    ;;
  terrain | terrain_mujoco)
    "$bin" train "$repo/configs/velocity_anymal_rough_shac.yaml" --set shac.iterations=2 \
      --out "$dir/runs" >"$dir/train.log" 2>&1 || fail "training exited with $? ($dir/train.log)"
    run=$(ls -d "$dir"/runs/*/ | head -1)
    policy=$run engine=()
    if [ "$mode" = terrain_mujoco ]; then
      "$bin" export "$run" -o "$dir/rough.pt" >/dev/null || fail "export exited with $?"
      policy=$dir/rough.pt engine=(--engine mujoco --dt 0.005)
    fi
    for ground in pyramid_stairs_inverted none; do
      "$bin" eval "$policy" "${engine[@]}" --terrain "$ground" --episodes 2 --envs 2 \
        --record "$dir/$ground.json" >/dev/null || fail "eval --record --terrain $ground exited with $?"
    done
    python3 - "$dir/pyramid_stairs_inverted.json" "$dir/none.json" <<'PY' || fail "terrain record"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["terrain"]
nx, ny, s, (x0, y0), h = t["nx"], t["ny"], t["spacing"], t["origin"], t["heights"]
assert len(h) == nx * ny and nx * ny < 400_000, (nx, ny)  # a window, not the whole field
assert min(h) < -0.5, min(h)  # the sunk stairs
nb = len(r["bodies"])
for e in r["envs"]:
    for k in range(e["frames"]):
        x, y, z = e["pose"][k * nb * 7:k * nb * 7 + 3]
        # 3 m of terrain on every side of the base
        assert x0 + 2.9 < x < x0 + (nx - 1) * s - 2.9 and y0 + 2.9 < y < y0 + (ny - 1) * s - 2.9
    x, y, z = e["pose"][:3]
    ground = h[round((y - y0) / s) * nx + round((x - x0) / s)]
    assert ground < -0.5 and 0.3 < z - ground < 0.9, (z, ground)  # standing on the pit's floor
assert "terrain" not in json.load(open(sys.argv[2]))
print("terrain ok:", nx, "x", ny, "samples, floor", min(h))
PY
    ;;
  badinput)
    # expect_error WHAT NEEDLE ARGS...: exit != 0 and stderr naming NEEDLE.
    expect_error() {
      local what=$1 needle=$2 rc=0
      shift 2
      "$bin" "$@" >"$dir/err" 2>&1 || rc=$?  # the program logs errors on stdout
      cat "$dir/err"
      [ "$rc" -ne 0 ] || fail "$what: exit code 0"
      grep -qF -- "$needle" "$dir/err" || fail "$what: the message does not name '$needle'"
    }
    expect_error "missing policy" "$dir/nope.pt" play "$dir/nope.pt" -o "$dir/a.mp4"
    expect_error "missing policy (mujoco)" "$dir/nope.pt" play "$dir/nope.pt" --engine mujoco -o "$dir/a.mp4"
    expect_error "unwritable output" "/nonexistent-dir/a.mp4" play "$walk" -o /nonexistent-dir/a.mp4
    expect_error "unwritable record" "/nonexistent-dir/t.json" eval "$walk" --record /nonexistent-dir/t.json
    expect_error "unknown engine" "warp" play "$walk" --engine warp -o "$dir/a.mp4"
    expect_error "unknown format" "a.avi" play "$walk" -o "$dir/a.avi"
    expect_error "bad size" "--size 300" play "$walk" -o "$dir/a.mp4" --size 300
    [ ! -e "$dir/a.mp4" ] || fail "a failed play left $dir/a.mp4"
    ;;
  readme_gifs)
    # The README shows a GIF of each shipped policy, each under 2 MB.
    for f in walk_quadruped velocity_anymal velocity_anymal_rough; do
      gif=$repo/docs/media/$f.gif
      [ -f "$gif" ] || fail "$gif missing"
      size=$(stat -c %s "$gif")
      [ "$size" -lt 2000000 ] || fail "$gif is $size bytes (over 2 MB)"
      [ "$(head -c 6 "$gif")" = GIF89a ] || fail "$gif is not a GIF"
      grep -q "docs/media/$f.gif" "$repo/README.md" || fail "README.md does not show $f.gif"
    done
    ;;
  *)
    fail "unknown mode $mode"
    ;;
esac
echo "play_test $mode ok"
