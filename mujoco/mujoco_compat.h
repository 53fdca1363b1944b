// The MuJoCo C API across versions: every difference between the MuJoCo versions the project
// builds against goes through this header, and no other file tests a MuJoCo version.
//
// Covered, built and tested: MuJoCo 4.0.0 (the PyPI wheel, the default build where
// /opt/diffloco-venv has it) and 2.2.2 (Debian 12's libmujoco-dev, cmake
// -DDIFFLOCO_MUJOCO_WHEEL=OFF; docs/sim_to_sim.md). The 3.x releases
// between them take the branch the 4.0 changelog (the wheel's mujoco/doc/changelog.rst) gives for
// each change, untested:
//   3.1.3   mj_addBufferVFS (3.2.0 removed mj_makeEmptyFileVFS, mj_findFileVFS, mjVFS::filedata)
//   3.5.0   mj_ray takes a normal[3] output (NULL: none); versions numbered S * 1e6 + M * 1e3 + P
//   3.10.0  mj_fullM(m, d, dst) instead of mj_fullM(m, dst, M) (3.11.0 removed mjData::qM)
// Differences that need no code here: mjModel::nconmax and njmax are int in 2.2.2, mjtSize in 4.0
// and "legacy" there (nconmax still caps the contacts, dropping the rest with mjWARN_CONTACTFULL;
// njmax only sizes the arena, which raises mjWARN_CNSTRFULL when it runs out for the constraints);
// mjWARN_VGEOMFULL is gone (3.7.0), so the warnings are named, never numbered; mjtIntegrator
// gained implicitfast (2.3.3) and discrete (3.13.0) after the three of 2.2.2.
#pragma once

#include <mujoco/mujoco.h>

#include <cstring>

// The headers' version as S * 1000000 + M * 1000 + P: mjVERSION_HEADER itself from 3.5.0 on
// (4.0.0: 4000000), S * 100 + M * 10 + P before (2.2.2: 222). Compare with this, never with
// mjVERSION_HEADER: a threshold in one numbering misjudges the other's headers (3.1.3 is 3001003
// in the new one, and 3.3.0's headers say 330).
#if mjVERSION_HEADER >= 1000000
#define DIFFLOCO_MJ_VERSION mjVERSION_HEADER
#else
#define DIFFLOCO_MJ_VERSION \
  (mjVERSION_HEADER / 100 * 1000000 + mjVERSION_HEADER / 10 % 10 * 1000 + mjVERSION_HEADER % 10)
#endif

namespace diffloco::mj {

// Adds a file `name` holding the `size` bytes at `data` to a VFS initialised by mj_defaultVFS
// (which the caller releases with mj_deleteVFS, also on failure); 0 on success, else MuJoCo's code
// (2.2.2: 1 VFS full, 2 repeated name; 4.0: 2 repeated name, -1 failed).
inline int addBufferVFS(mjVFS* vfs, const char* name, const void* data, int size) {
#if DIFFLOCO_MJ_VERSION >= 3001003
  return mj_addBufferVFS(vfs, name, data, size);
#else
  if (const int r = mj_makeEmptyFileVFS(vfs, name, size)) return r;
  std::memcpy(vfs->filedata[mj_findFileVFS(vfs, name)], data, size);
  return 0;
#endif
}

// The dense nv x nv joint-space inertia matrix after mj_forward (or mj_makeM) into dst.
inline void fullMassMatrix(const mjModel* m, const mjData* d, mjtNum* dst) {
#if DIFFLOCO_MJ_VERSION >= 3010000
  mj_fullM(m, d, dst);
#else
  mj_fullM(m, dst, d->qM);
#endif
}

// mj_ray without the surface normal: the distance along vec from pnt to the nearest geom of the
// enabled groups (geomgroup: 6 flags, NULL all; includeStatic: the world body's geoms too, other
// than bodyexclude's), -1 if none; geomid (nullable) receives its id, -1 if none.
inline mjtNum ray(const mjModel* m, const mjData* d, const mjtNum pnt[3], const mjtNum vec[3],
                  const mjtByte* geomgroup, bool includeStatic, int bodyexclude, int* geomid) {
#if DIFFLOCO_MJ_VERSION >= 3005000
  return mj_ray(m, d, pnt, vec, geomgroup, includeStatic, bodyexclude, geomid, nullptr);
#else
  return mj_ray(m, d, pnt, vec, geomgroup, includeStatic ? 1 : 0, bodyexclude, geomid);
#endif
}

}  // namespace diffloco::mj
