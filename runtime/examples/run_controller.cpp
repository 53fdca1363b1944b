// Example robot-side program: runs an exported policy through deploy::Controller against a
// stand-in robot (a state that follows the commanded targets with a first-order lag), with the
// robot's joints in another order than the policy's (reversed) to show the mapping by name.
//
//   diffloco_controller_example policy.pt [--ticks N]
//
// On a real robot, fill RobotState from the state estimator every control period
// (metadata().controlDt), call tick(), and send jointTarget/kp/kd (or torque) to the drives.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "runtime/controller.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s POLICY.pt [--ticks N]\n", argv[0]);
    return 2;
  }
  int ticks = 400;
  for (int i = 2; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--ticks")) ticks = std::atoi(argv[i + 1]);
  try {
    using namespace diffloco::deploy;
    // Read the joint names once to build the robot's (here: reversed) order.
    std::vector<std::string> names;
    {
      torch::jit::Module m = torch::jit::load(argv[1]);
      const PolicyMetadata meta =
          parsePolicyMetadata(m.attr("metadata_json").toStringRef(), argv[1]);
      names.assign(meta.jointNames.rbegin(), meta.jointNames.rend());
    }
    ControllerConfig cfg;
    cfg.jointNames = names;
    cfg.standUpDuration = 1.0;
    Controller c(argv[1], cfg);
    const PolicyMetadata& meta = c.metadata();
    std::printf("policy: %d observations, %d joints, control dt %g s, trained on %s (%s)\n",
                meta.numObs, meta.numJoints(), meta.controlDt, meta.robot.c_str(),
                meta.contactModel.c_str());
    const int nj = meta.numJoints();
    RobotState s;
    s.jointPos.assign(nj, 0.0);  // lying down: zero joint angles
    s.jointVel.assign(nj, 0.0);
    s.baseHeight = meta.defaultBaseHeight;
    s.command = {0.5, 0.0, 0.0};
    c.start();
    Mode last = Mode::Passive;
    for (int k = 0; k < ticks; ++k) {
      const ControlOutput u = c.tick(s);
      if (u.mode != last || k % 100 == 0)
        std::printf("tick %4d  %-8s  target[0] %+.3f  torque[0] %+.2f N m %s\n", k,
                    toString(u.mode), u.jointTarget[0], u.torque[0], u.fault.c_str());
      last = u.mode;
      // Stand-in robot: the joints move a tenth of the way to their targets per tick.
      for (int j = 0; j < nj; ++j) {
        const double q = s.jointPos[j] + 0.1 * (u.jointTarget[j] - s.jointPos[j]);
        s.jointVel[j] = (q - s.jointPos[j]) / meta.controlDt;
        s.jointPos[j] = q;
      }
    }
    c.stop();
    std::printf("stopped: %s\n", toString(c.tick(s).mode));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
