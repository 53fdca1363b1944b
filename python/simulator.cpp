// diffloco.Simulator: a batch of worlds of one robot and its step as an autograd function
// (envs/sim_function.h, the function the environments and SHAC use), for system identification
// and trajectory optimisation written in Python with torch.optim.
#include <torch/extension.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "envs/sim_function.h"
#include "experiments/gradcheck.h"
#include "python/bindings.h"
#include "robots/robot.h"
#include "sim/options.h"

namespace py = pybind11;

namespace diffloco::python {
namespace {

class Simulator {
 public:
  Simulator(const std::string& robotName, int worlds, const std::string& contact,
            std::optional<double> dt, int iterations, double friction, int threads)
      : robot_(loadRobot(robotName)) {
    if (worlds < 1) throw std::invalid_argument("num_worlds must be at least 1");
    // The robot's drive, armature and time step, as `diffloco sim` and gradcheck take them.
    sim::SimOptions opt = defaultSimOptions(robot_, sim::parseContactModel(contact));
    opt.dt = dt.value_or(robot_.dt);
    if (!(opt.dt > 0)) throw std::invalid_argument("dt must be positive");
    opt.contact.iterations = iterations;
    opt.contact.mu = friction;
    link_ = std::make_unique<envs::SimLink>(robot_.model, opt, worlds, threads);
    options_ = opt;
  }

  // (q', v') of one step from (q, v) with the joints driven to qTarget by the robot's PD drive.
  py::tuple step(const torch::Tensor& q, const torch::Tensor& v, const torch::Tensor& qTarget) {
    checkRows(q, model().nq(), "q");
    checkRows(v, model().nv(), "v");
    checkRows(qTarget, model().nj(), "q_target");
    const envs::SimStepResult r = withoutGil([&] { return envs::simStep(*link_, q, v, qTarget); });
    return py::make_tuple(r.q, r.v);
  }

  torch::Tensor footPositions(const torch::Tensor& q) {
    checkRows(q, model().nq(), "q", false);
    return withoutGil([&] { return envs::footPositions(*link_, q); });
  }

  py::tuple standingState() const {
    const sim::VecX q0 = robot_.standingConfiguration();
    auto q = torch::from_blob(const_cast<double*>(q0.data()), {1, model().nq()}, torch::kFloat64)
                 .clone()
                 .repeat({worlds(), 1});
    return py::make_tuple(q, torch::zeros({worlds(), model().nv()}, torch::kFloat64));
  }

  void setWorldParams(torch::Tensor friction, std::optional<torch::Tensor> addedMass,
                      std::optional<torch::Tensor> motorStrength) {
    auto column = [&](torch::Tensor t, const char* name) {
      t = t.detach().to(torch::kFloat64).contiguous();
      if (t.dim() != 1 || t.size(0) != worlds())
        throw std::invalid_argument(std::string(name) + " must have shape [num_worlds]");
      return t;
    };
    link_->setWorldParams(
        column(friction, "friction"),
        addedMass ? column(*addedMass, "added_mass") : torch::Tensor(),
        motorStrength ? column(*motorStrength, "motor_strength") : torch::Tensor());
  }

  const sim::Model& model() const { return robot_.model; }
  const Robot& robot() const { return robot_; }
  int worlds() const { return link_->worlds(); }
  const sim::SimOptions& options() const { return options_; }
  int lastFailures() const { return link_->lastFailures(); }

 private:
  void checkRows(const torch::Tensor& t, int cols, const char* name, bool allWorlds = true) const {
    if (t.dim() != 2 || t.size(1) != cols || (allWorlds && t.size(0) != worlds()))
      throw std::invalid_argument(std::string(name) + " must have shape [" +
                                  (allWorlds ? std::to_string(worlds()) : "n") + ", " +
                                  std::to_string(cols) + "], got " + c10::str(t.sizes()));
  }

  Robot robot_;  // the SimLink keeps a reference to its model
  sim::SimOptions options_;
  std::unique_ptr<envs::SimLink> link_;
};

template <class T>
std::vector<std::string> names(const std::vector<T>& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.name);
  return out;
}

}  // namespace

void bindSimulator(py::module_& m) {
  py::class_<Simulator>(m, "Simulator", R"doc(
A batch of worlds of one robot (a name from configs/robots or a robot YAML) on the plane z = 0.
State rows: q [N, nq] (base position, quaternion w x y z, joint angles) and v [N, nv] (world
base linear velocity, base-frame angular velocity, joint velocities), float64. The drive is the
robot's PD (its YAML's task_defaults.actuator): step(q, v, q_target) holds the joint targets
q_target [N, nj] for one step of dt. step is differentiable in q, v and q_target by the
simulator's hand-written backward pass; keep the Simulator alive while a graph through it is.)doc")
      .def(py::init<const std::string&, int, const std::string&, std::optional<double>, int, double,
                    int>(),
           py::arg("robot"), py::arg("num_worlds") = 1, py::arg("contact") = "smoothed",
           py::arg("dt") = py::none(), py::arg("iterations") = 10, py::arg("friction") = 0.8,
           py::arg("threads") = 2)
      .def("step", &Simulator::step, py::arg("q"), py::arg("v"), py::arg("q_target"),
           "(q, v) after one step; worlds whose step went non-finite keep their inputs "
           "(last_failures counts them) and get zero gradients")
      .def("foot_positions", &Simulator::footPositions, py::arg("q"),
           "world positions [n, feet, 3] of the foot sphere centres, differentiable in q")
      .def("standing_state", &Simulator::standingState,
           "(q, v) of every world standing in the default pose at rest")
      .def("set_world_params", &Simulator::setWorldParams, py::arg("friction"),
           py::arg("added_mass") = py::none(), py::arg("motor_strength") = py::none(),
           "per-world friction, added base mass [kg] and drive strength, each [num_worlds]; "
           "constants of the step (not differentiated)")
      .def_property_readonly("num_worlds", &Simulator::worlds)
      .def_property_readonly("nq", [](const Simulator& s) { return s.model().nq(); })
      .def_property_readonly("nv", [](const Simulator& s) { return s.model().nv(); })
      .def_property_readonly("nj", [](const Simulator& s) { return s.model().nj(); })
      .def_property_readonly("dt", [](const Simulator& s) { return s.options().dt; })
      .def_property_readonly("robot", [](const Simulator& s) { return s.robot().name; })
      .def_property_readonly("total_mass", [](const Simulator& s) { return s.model().totalMass(); })
      .def_property_readonly("joint_names",
                             [](const Simulator& s) { return names(s.model().joints); })
      .def_property_readonly("body_names",
                             [](const Simulator& s) { return names(s.model().bodies); })
      .def_property_readonly("foot_names", [](const Simulator& s) { return names(s.model().feet); })
      .def_property_readonly("last_failures", &Simulator::lastFailures);
}

}  // namespace diffloco::python
