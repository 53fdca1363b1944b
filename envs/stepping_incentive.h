// What a task pays a robot for stepping before it can walk: the task's rewards earned standing
// still (zero actions hold the default pose) and trotting in place (joint targets that lift each
// foot along the task's foot-height reference), both in the task's own environment, with its
// commands, randomisation and resets. A policy starts near standing; when a trot in place earns
// no more than standing, the task pays nothing for lifting a foot until the robot already moves,
// and training tends to stay in the standing plateau (docs/robots.md).
// Behind `diffloco robot check ROBOT --task TASK`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "envs/task_config.h"

namespace diffloco::envs {

struct SteppingIncentiveOptions {
  int envs = 64;
  double seconds = 4.0;  // rollout length per gait [s]
  std::uint64_t seed = 0;
  int threads = 2;
};

// One scripted gait's rollout: per reward term, the mean over envs and env steps of its weighted
// value (what an env step adds to the return), in rewardNames order.
struct GaitRewards {
  std::vector<double> terms;
  double total = 0;     // their sum: the mean reward per env step
  int falls = 0;        // episodes that ended by a termination term or a failed simulation
  double meanLift = 0;  // mean over feet and steps of the foot height above the ground [m]
};

struct SteppingIncentive {
  std::string task, robot;
  std::vector<std::string> rewardNames;
  GaitRewards standing, trot;
  // The trot's reference: the task's foot_height_tracking parameters (a task without that term:
  // a 2 Hz trot lifting the feet by a sixth of the standing height).
  double swingHeight = 0, frequency = 0;
  int envs = 0;
  double seconds = 0;  // rollout length [s]
  // The foot-height term at its maximum (every foot on its reference): weight * feet / pi per env
  // step; 0 for a task without the term. Its index in rewardNames: footHeightTerm (-1: none).
  double footHeightMax = 0;
  int footHeightTerm = -1;
  // trot.total - standing.total: what lifting the feet in the task's rhythm earns per env step.
  double margin() const { return trot.total - standing.total; }
  // The check's verdict: a trot in place earns no more than standing, or it falls more. Of the
  // robots measured (docs/robots.md), it flags go_like with ANYmal's foot-height reference (seeds
  // stood) and ANYmal with Table 7's (a plateau the velocity config leaves by its initial action
  // noise), not go_like with the reference `robot init` proposes (every seed tracked).
  bool standingPaysTooWell() const { return margin() <= 0 || trot.falls > standing.falls; }
};

// Both rollouts, each from the same reset (the same seed). Throws std::runtime_error naming the
// task when its robot cannot be built or a rollout goes non-finite.
SteppingIncentive measureSteppingIncentive(const TaskConfig& task,
                                           const SteppingIncentiveOptions& options = {});

// The table `robot check --task` prints: per term, standing, trot in place and the difference,
// the totals, falls, and a warning when standing pays too well.
std::string steppingIncentiveReport(const SteppingIncentive& s);

}  // namespace diffloco::envs
