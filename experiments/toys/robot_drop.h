// A robot dropped onto stiff soft contact (k >= 1e5): gradient error and runtime of the soft
// model's fixed sub-stepping at several sub-step counts against the adaptive Dormand-Prince
// integrator (sim/adaptive.h) at several tolerances, DiffMJX's Figure S6 as a table.
//
// Scenario: the robot's standing pose raised so that its lowest foot is `height` above the ground,
// slightly tilted, joints perturbed, moving down at 0.5 m/s and sideways at 0.3 m/s (the feet land
// and slide), PD targets around the default pose (seeded). Loss: fixed random weights on the final
// state (q_T, v_T). Gradient: with respect to (q_0, v_0, every env step's joint targets), from the
// hand-written VJP over the rollout: the stages' (sim/stage_rollout.h) for the fixed sub-stepping,
// whose n sub-steps of an env step run as n steps of dt / n, the adaptive env step's
// (sim/adaptive.h) for the adaptive integrator. The robot must fit the Quadruped size class.
//
// Two references, each checked against the other:
//   fine fixed   the fixed sub-stepping at refSubsteps and refSubsteps / 2 per env step,
//                Richardson-extrapolated (the scheme is first order in the state). Its gradient
//                keeps a first-order error from the steps that straddle the penalty force's kinks
//                (touchdown, lift-off, friction regime changes), which extrapolation does not
//                remove: about 1e-3 here.
//   tight        the adaptive integrator at refRtol (1e-12), whose steps end on those kinks.
//                Checked against central differences of its own (live, not frozen) integration
//                along a random direction.
// Gradient error = ||g - g_ref||_2 / ||g_ref||_2 against each. Runtime = forward rollout + its VJP
// (which re-runs each env step's forward), best of `repeats`, one thread.
#pragma once

#include <string>
#include <vector>

namespace diffloco::toys {

struct RobotDropOptions {
  std::string robot = "anymal";
  double height = 0.03;     // lowest foot above the ground at the start [m]
  double duration = 0.12;   // [s]
  double kp = 1e5;          // penalty stiffness [N/m]
  double kd = 30;           // penalty damping on approach [N s/m] (the soft model's default)
  double kf = 900;          // tangential viscous friction [N s/m] (the soft model's default)
  double mu = 0.8;          // friction coefficient
  std::vector<int> substeps{5, 10, 20, 50, 100, 200};
  std::vector<double> rtols{1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8};  // atol = rtol / 100
  double eventTol = -1;  // AdaptiveOptions::contactEventTol of the adaptive rows (< 0: default)
  int refSubsteps = 2000;
  double refRtol = 1e-12;
  int repeats = 3;
  unsigned seed = 1;
  std::string csv;  // optional CSV of the table
};

struct RobotDropRow {
  std::string integrator;  // fixed | adaptive
  std::string setting;     // "n=20 (h=250 us)", "rtol=1e-05"
  double gradErrorFine = 0;   // relative L2 gradient error against the fine fixed reference
  double gradErrorTight = 0;  // ... against the tight adaptive reference
  double stateError = 0;      // max |x_T - x_T,tight| over the final state
  double ms = 0;              // forward + backward [ms]
  double forwardMs = 0;
  double evalsPerEnvStep = 0;  // dynamics evaluations (sub-steps or RK stages) per env step
  double rejectedPerEnvStep = 0;
  double eventsPerEnvStep = 0;
  double backwardBytes = 0;    // transient memory of one env step's backward pass [bytes]
  double checkpointBytes = 0;  // of which checkpoints (adaptive: the busiest env step)
  long long capHits = 0;
};

struct RobotDropReport {
  RobotDropOptions options;
  int envSteps = 0;
  double dt = 0;
  int gradientSize = 0;
  double maxPenetration = 0;     // deepest foot penetration along the tight reference [m]
  double fineVsTight = 0;        // ||g_fine - g_tight|| / ||g_tight||
  double fineExtrapolation = 0;  // ||g(refSubsteps) - g_fine|| / ||g_fine||
  double tightDirectional = 0;   // g_tight . e
  double tightDirectionalFd = 0; // central difference of the live tight integration along e
  double fineMs = 0, tightMs = 0;
  std::vector<RobotDropRow> rows;
};

RobotDropReport runRobotDrop(const RobotDropOptions& options);
void printRobotDrop(const RobotDropReport& report);  // a table on stdout
std::string writeRobotDropCsv(const RobotDropReport& report, const std::string& path);

}  // namespace diffloco::toys
