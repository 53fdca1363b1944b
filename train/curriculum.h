// Curricula of a training config (`curriculum:`): schedules over the training iterations that
// change what the environments draw, so that a result that needed a staged recipe (warm-started
// fine-tunes with other --set values) is one config and one command.
//
//   curriculum:
//     commands: {initial: 0.3, final: 1.25, ramp_iterations: 1500}  # ranges x 0.3 -> x 1.25
//     reset_noise: {final: 1.5, ramp_start: 600, ramp_iterations: 100}
//     episode_length: {initial: 0.2, final: 1.0, ramp_iterations: 500}
//     command_resample: {initial: 0.3, final: 0.3}                 # new commands every 3 s
//     rewards:                                                     # reward weights
//       lin_vel_tracking_l2: {initial: 0, final: 0.5, ramp_start: 1000, ramp_iterations: 500}
//
// Each factor is `initial` up to iteration `ramp_start`, then moves linearly to `final` over
// `ramp_iterations` iterations and stays there. Factors scale the task's values: commands
// U(lo, hi) become U(s lo, s hi); every reset noise half-width is multiplied by s; the episode
// length becomes s x episode_length_s and the command resampling interval s x
// commands.resample_s (each at least one env step). A factor depends on the iteration
// only, so a resumed run continues the same schedule. Absent: 1 throughout (the task as written).
// A policy file records the task as written; the trained envelope is the task x the final
// factors (an exported file states both).
//
// `rewards` is a map from reward term name to a ramp of that term's *weight* (not a factor), as
// Isaac Lab's modify_reward_weight: a shaping term switched on once a behaviour is learned. The
// term need not be in the task: training then adds it (its parameters the term's defaults).
// Evaluation and exported policies keep the task's own rewards.
#pragma once

#include <map>
#include <string>

namespace diffloco::envs {
class LocomotionEnv;
struct TaskConfig;
}  // namespace diffloco::envs

namespace diffloco::train {

// initial -> final, linearly over [ramp_start, ramp_start + ramp_iterations].
struct Ramp {
  double initial = 1;
  double final = 1;
  int rampStart = 0;
  int rampIterations = 0;

  double at(int iteration) const {
    if (iteration < rampStart) return initial;
    if (iteration >= rampStart + rampIterations) return final;
    return initial +
           (final - initial) * (iteration - rampStart) / static_cast<double>(rampIterations);
  }
  bool trivial() const { return initial == 1 && final == 1; }

  template <class V>
  void visit(V& v) {
    v.field("initial", initial, "factor before the ramp", V::between(0, 10));
    v.field("final", final, "factor after the ramp", V::between(0, 10));
    visitSchedule(v);
  }

 protected:
  template <class V>
  void visitSchedule(V& v) {
    v.field("ramp_start", rampStart, "iteration at which the ramp begins", V::between(0, 1e8));
    v.field("ramp_iterations", rampIterations,
            "iterations from initial to final (0: a step at ramp_start)", V::between(0, 1e8));
  }
};

// The same ramp of a reward term's weight (curriculum.rewards.<term>).
struct WeightRamp : Ramp {
  template <class V>
  void visit(V& v) {
    v.field("initial", initial, "the term's weight before the ramp", V::between(0, 1000));
    v.field("final", final, "the term's weight after the ramp", V::between(0, 1000));
    visitSchedule(v);
  }
};

struct CurriculumConfig {
  Ramp commands;       // scales the task's command ranges (commands.lin_vel_x, ...)
  Ramp resetNoise;     // scales the task's reset noise half-widths (reset.*_noise, random_yaw)
  Ramp episodeLength;  // scales the task's episode_length_s
  // Scales commands.resample_s: more command changes per episode, so that the transients after
  // a change (most of the tracking error of an evaluation that resamples, docs/velocity_anymal.md)
  // are a larger part of what is trained on.
  Ramp commandResample;
  // Reward term name -> its weight over the iterations.
  std::map<std::string, WeightRamp> rewards;

  template <class V>
  void visit(V& v) {
    v.section("commands", commands);
    v.section("reset_noise", resetNoise);
    v.section("episode_length", episodeLength);
    v.section("command_resample", commandResample);
    v.sections("rewards", rewards,
               "reward term name -> {initial, final, ramp_start, ramp_iterations} of its weight");
  }
};

// The task as trained: `task` with every reward term of `c.rewards` it lacks added (weight: the
// ramp's initial value, parameters: the term's defaults). Throws naming the key for an unknown
// term.
envs::TaskConfig trainedTask(const CurriculumConfig& c, const envs::TaskConfig& task);

// Sets the env's four factors and the curriculum's reward weights for `iteration`. At iteration 0
// of a new run, an env whose command or reset-noise factor is not 1 is reset, so that its first
// draws follow the curriculum too
// (`newRun` false: a resumed env keeps its state).
void applyCurriculum(const CurriculumConfig& c, int iteration, envs::LocomotionEnv& env,
                     bool newRun = false);

}  // namespace diffloco::train
