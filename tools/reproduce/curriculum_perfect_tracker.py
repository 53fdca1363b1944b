#!/usr/bin/env python3
"""How the terrain curriculum moves a robot that tracks every command perfectly.

docs/terrain.md: with commands resampled within an episode, legged_gym's demotion rule (the final
command x the episode length) demotes robots that do exactly what they were told, because their
displacement is a random walk. This script replays the rule on perfect trackers of the rough
task's commands (configs/tasks/velocity_rough.yaml, scaled as configs/velocity_anymal_rough_shac.yaml
trains them) and prints, per resampling interval and rule, the fractions promoted and demoted as
JSON lines.

usage: tools/reproduce/curriculum_perfect_tracker.py [EPISODES] > docs/data/terrain/curriculum_perfect_tracker.jsonl
"""
import json
import sys

import numpy as np

EPISODE_S = 20.0        # episode_length_s
ENV_DT = 0.02           # env_dt
COMMAND_SCALE = 1.25    # curriculum.commands: the task's +-1 ranges, 25 % wider
STANDING = 0.02         # commands.standing_fraction
SPAWN_NOISE = 0.5       # reset.base_pos_noise: the spawn around the tile's centre
TILE = 8.0              # terrain.tile_size
PROMOTE, DEMOTE = 0.5, 0.5


def commands(rng, n):
    c = rng.uniform(-COMMAND_SCALE, COMMAND_SCALE, (n, 3))
    c[rng.uniform(0, 1, n) < STANDING] = 0
    return c


def replay(resample_s, episodes, rng):
    steps, every = round(EPISODE_S / ENV_DT), round(resample_s / ENV_DT)
    pos = rng.uniform(-SPAWN_NOISE, SPAWN_NOISE, (episodes, 2))
    yaw = rng.uniform(-np.pi, np.pi, episodes)
    path = np.zeros((episodes, 2))
    c = commands(rng, episodes)
    for t in range(steps):
        # The command of step t moves the base (a perfect tracker), then the due ones change.
        world = np.stack([np.cos(yaw) * c[:, 0] - np.sin(yaw) * c[:, 1],
                          np.sin(yaw) * c[:, 0] + np.cos(yaw) * c[:, 1]], 1)
        pos += world * ENV_DT
        path += world * ENV_DT
        yaw += c[:, 2] * ENV_DT
        if (t + 1) % every == 0 and t + 1 < steps:
            c = commands(rng, episodes)
    walked = np.hypot(pos[:, 0], pos[:, 1])
    up = walked > PROMOTE * TILE
    rules = {"final_command": np.hypot(c[:, 0], c[:, 1]) * EPISODE_S,
             "commanded_path": np.hypot(path[:, 0], path[:, 1])}
    for rule, commanded in rules.items():
        down = ~up & (walked < DEMOTE * commanded)
        yield {"resample_s": resample_s, "demote_against": rule, "episodes": episodes,
               "promoted": round(float(up.mean()), 4), "demoted": round(float(down.mean()), 4)}


def main():
    episodes = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    rng = np.random.default_rng(0)
    for resample_s in (10.0, 3.0):
        for row in replay(resample_s, episodes, rng):
            print(json.dumps(row))


if __name__ == "__main__":
    main()
