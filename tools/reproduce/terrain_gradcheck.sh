#!/usr/bin/env bash
# The terrain rows of docs/terrain.md's gradient check: `diffloco gradcheck` on every terrain state
# (slope with the robot tilted onto it, bumps, a step edge; sliding up the slope), every contact
# model, feet pressing in and 2 cm above, one JSON object per line.
# usage: tools/reproduce/terrain_gradcheck.sh [DIFFLOCO] > docs/data/terrain/gradcheck.jsonl
set -euo pipefail
bin=${1:-build/diffloco}
for terrain in slope bump step; do
  for contact in smoothed hard soft; do
    for state in contact distance; do
      "$bin" gradcheck --robot anymal --contact $contact --terrain $terrain --state $state \
        --horizon 1 --json
      "$bin" gradcheck --robot quadruped --contact $contact --terrain $terrain --state $state \
        --horizon 16 --json
    done
  done
done
for contact in smoothed hard soft; do
  "$bin" gradcheck --robot quadruped --contact $contact --terrain slope --slide 1.0 --horizon 16 \
    --json
done
