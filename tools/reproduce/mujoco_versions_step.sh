#!/usr/bin/env bash
# MuJoCo's step time in two versions, in one run: the same MJCF (ANYmal as `diffloco eval
# --engine mujoco --save-mjcf` writes it) started in the standing pose QPOS, its joints held there
# by a PD law (kp 100, kd 1, as `diffloco bench`'s anchor) and settled for 1 s on its feet, then
# mj_step timed in alternating rounds against Debian's 2.2.2 and the PyPI wheel's 4.0.0, the two
# libraries `diffloco` builds against (docs/performance.md). One JSON object per line per round.
# usage: tools/reproduce/mujoco_versions_step.sh MODEL.xml QPOS [ROUNDS] [SECONDS] [> out.jsonl]
#   QPOS: comma-separated qpos (base position, quaternion w x y z, joint angles)
#   WHEEL (environment): the wheel's mujoco/ folder (default /opt/diffloco-venv's).
set -euo pipefail
xml=$1
qpos=$2
rounds=${3:-5}
seconds=${4:-2}
wheel=${WHEEL:-$(ls -d /opt/diffloco-venv/lib/python3*/site-packages/mujoco | sort -V | tail -1)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/step.c" <<'C'
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(int argc, char** argv) {
  char err[1000];
  mjModel* m = mj_loadXML(argv[1], NULL, err, sizeof err);
  if (!m) { fprintf(stderr, "%s: %s\n", argv[1], err); return 1; }
  mjData* d = mj_makeData(m);
  char* s = argv[2];
  for (int i = 0; i < m->nq; ++i) d->qpos[i] = strtod(s, &s), s += *s == ',';
  double hold[64];
  for (int i = 7; i < m->nq && i < 64; ++i) hold[i] = d->qpos[i];
  while (d->time < 1.0) { /* settle onto the feet, joints held by the PD law */
    for (int i = 7; i < m->nq; ++i) d->qfrc_applied[i - 1] = 100 * (hold[i] - d->qpos[i]) - d->qvel[i - 1];
    mj_step(m, d);
  }
  int ncon = d->ncon;
  double seconds = atof(argv[3]), t0 = now(), t = t0;
  long n = 0;
  while (t - t0 < seconds) {
    for (int k = 0; k < 100; ++k) {
      for (int i = 7; i < m->nq; ++i) d->qfrc_applied[i - 1] = 100 * (hold[i] - d->qpos[i]) - d->qvel[i - 1];
      mj_step(m, d);
    }
    n += 100;
    t = now();
  }
  printf("{\"mujoco_version\": \"%s\", \"step_us\": %.4f, \"steps\": %ld, \"contacts\": %d, "
         "\"base_z\": %.4f}\n", mj_versionString(), 1e6 * (t - t0) / n, n, ncon, d->qpos[2]);
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
C
cc -O2 -o "$work/step222" "$work/step.c" -lmujoco
cc -O2 -I"$wheel/include" -o "$work/step4" "$work/step.c" "$(ls "$wheel"/libmujoco.so.*)" \
  -Wl,-rpath,"$wheel"
for ((r = 0; r < rounds; ++r)); do
  "$work/step222" "$xml" "$qpos" "$seconds"
  "$work/step4" "$xml" "$qpos" "$seconds"
done
