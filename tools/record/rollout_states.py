#!/usr/bin/env python3
"""States for `gpu_check --states` from a rollout record (`diffloco eval --record FILE.json`).

  tools/record/rollout_states.py REC.json OUT_PREFIX [--max N]

Writes OUT_PREFIX.poses.bin: int32 count, int32 bodies, then per state the poses of every body
(x y z qw qx qy qz, the record's body order) at a recorded frame and at the frame after it (the
same env), float64; OUT_PREFIX.bodies.txt: the body names, one per line; OUT_PREFIX.field.bin:
the record's height field (float64 origin x, origin y, spacing; int32 nx, ny; float64 heights,
x fastest). gpu_check turns the poses into joint angles and finite-difference velocities.
At most N states (default 20000), taken evenly over the record's frames.
"""
import json
import struct
import sys


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    limit = 20000
    if "--max" in argv:
        i = argv.index("--max") + 1
        if i >= len(argv) or not argv[i].isdigit() or int(argv[i]) < 1:
            sys.exit("rollout_states.py: --max needs a whole number >= 1")
        limit = int(argv[i])
    try:
        with open(argv[1]) as f:
            rec = json.load(f)
        bodies, envs = rec["bodies"], rec["envs"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"{argv[1]}: not a rollout record (diffloco eval --record): {e}")
    if "terrain" not in rec:
        sys.exit(f"{argv[1]}: the record has no height field (a rollout on the plane)")
    nb = len(bodies)
    pairs = []
    w = 7 * nb  # the record's pose: frames x bodies x 7, flat
    for env in envs:
        pose = env["pose"]
        for k in range(env["frames"] - 1):
            pairs.append((pose[k * w:(k + 1) * w], pose[(k + 1) * w:(k + 2) * w]))
    if not pairs:
        sys.exit(f"{argv[1]}: no env has two frames")
    step = max(1, len(pairs) // limit)
    pairs = pairs[::step][:limit]
    out = argv[2]
    with open(out + ".poses.bin", "wb") as f:
        f.write(struct.pack("<ii", len(pairs), nb))
        for a, b in pairs:
            for frame in (a, b):
                f.write(struct.pack(f"<{w}d", *frame))
    with open(out + ".bodies.txt", "w") as f:
        f.write("\n".join(bodies) + "\n")
    t = rec["terrain"]
    with open(out + ".field.bin", "wb") as f:
        f.write(struct.pack("<3d2i", t["origin"][0], t["origin"][1], t["spacing"], t["nx"], t["ny"]))
        f.write(struct.pack(f"<{len(t['heights'])}d", *t["heights"]))
    print(f"{out}: {len(pairs)} states of {nb} bodies, field {t['nx']} x {t['ny']}, dt {rec['dt']}")


if __name__ == "__main__":
    main(sys.argv)
