// A recorded rollout: per env, the states of one episode at every env step, with the command and
// the measured velocity for the overlay. Filled by an evaluation's per-step callback (in our
// simulator or MuJoCo), then rendered to video or written as a record for the HTML viewer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/model.h"
#include "sim/terrain.h"

namespace diffloco::viz {

using sim::Vec3;
using sim::VecX;

struct RolloutFrame {
  double time = 0;  // since the episode start [s]
  VecX q;           // configuration (sim/model.h layout)
  Vec3 command;     // commanded (v_x, v_y [m/s], yaw rate [rad/s]), base axes
  Vec3 velocity;    // measured (v_x, v_y, yaw rate), base axes
};

struct EnvRollout {
  std::vector<RolloutFrame> frames;
  bool ended = false;  // the episode is over: later states belong to the next one
};

struct Rollout {
  std::string robot, task, engine, policy;  // for titles and the record's header
  double dt = 0;                            // between frames [s]
  bool hasCommands = false;                 // the task tracks commands (else they are zero)
  sim::Model model;
  std::vector<EnvRollout> envs;
  // The ground the episodes ran on, the window of it around the robots (ground_window.h): null
  // for the plane z = 0. With a height field the robots are drawn where they are (no side-by-side
  // offset: each stands on its own ground).
  std::shared_ptr<const sim::HeightField> ground;

  Rollout(sim::Model m, int numEnvs, double frameDt);
  // Appends a state of `env` unless its episode has ended; v gives the measured velocity.
  void record(int env, double time, const VecX& q, const VecX& v, const Vec3& command);
  void endEpisode(int env) { envs.at(env).ended = true; }
  // The longest env's recorded time span [s] (frames x dt).
  double duration() const;
};

}  // namespace diffloco::viz
