#!/usr/bin/env python3
"""Where the robot is in an image: the centroid of its base's orange pixels (viz::kBaseColor at any
shade; tests/viz/robot_pixels.h uses the same rule).

usage: robot_position.py IMAGE    prints "COUNT X Y WIDTH HEIGHT DISTINCT_COLOURS"
The image (PNG from chromium, a video frame, ...) is decoded to raw RGB by ffmpeg."""
import subprocess
import sys


def main():
    path = sys.argv[1]
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "stream=width,height", "-of", "csv=p=0", path],
                           check=True, capture_output=True, text=True).stdout.split(",")
    w, h = int(probe[0]), int(probe[1])
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-frames:v", "1", "-f", "rawvideo",
                          "-pix_fmt", "rgb24", "-"], check=True, capture_output=True).stdout
    n = sx = sy = 0
    colours = set()
    for i in range(0, w * h * 3, 3):
        r, g, b = raw[i], raw[i + 1], raw[i + 2]
        colours.add((r, g, b))
        if r > g + 30 and g > b + 15:
            p = i // 3
            n += 1
            sx += p % w
            sy += p // w
    print(n, sx / n if n else -1, sy / n if n else -1, w, h, len(colours))


if __name__ == "__main__":
    main()
