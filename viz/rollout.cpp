#include "viz/rollout.h"

#include <algorithm>
#include <stdexcept>

#include "sim/kinematics.h"

namespace diffloco::viz {

Rollout::Rollout(sim::Model m, int numEnvs, double frameDt)
    : dt(frameDt), model(std::move(m)), envs(numEnvs) {
  if (numEnvs < 1) throw std::invalid_argument("a rollout needs at least one env");
  if (!(frameDt > 0)) throw std::invalid_argument("a rollout's frame interval must be > 0");
}

void Rollout::record(int env, double time, const VecX& q, const VecX& v, const Vec3& command) {
  EnvRollout& e = envs.at(env);
  if (e.ended) return;
  if (q.size() != model.nq() || v.size() != model.nv())
    throw std::invalid_argument("rollout: state size does not match the robot " + model.name);
  RolloutFrame f;
  f.time = time;
  f.q = q;
  f.command = command;
  // Linear velocity is stored in world axes, angular in base axes (sim/model.h).
  const Vec3 linB = sim::baseRotation(q).transpose() * v.head<3>();
  f.velocity = Vec3(linB.x(), linB.y(), v[5]);
  e.frames.push_back(std::move(f));
}

double Rollout::duration() const {
  size_t n = 0;
  for (const auto& e : envs) n = std::max(n, e.frames.size());
  return n * dt;
}

}  // namespace diffloco::viz
