// diffloco.Simulator: a batch of worlds of one robot and its step as an autograd function
// (envs/sim_function.h, the function the environments and SHAC use), for system identification
// and trajectory optimisation written in Python with torch.optim.
#include <torch/extension.h>

#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "envs/sim_function.h"
#include "python/bindings.h"
#include "robots/robot.h"
#include "sim/options.h"
#include "sim/terrain.h"

namespace py = pybind11;

namespace diffloco::python {
namespace {

// The ground of a Simulator: heights [ny, nx] (rows along y, x fastest, as sim/terrain.h keeps
// them), their spacing and the world (x, y) of sample (0, 0), joined by `interpolant`.
std::shared_ptr<const sim::HeightField> makeHeightField(const py::object& heights,
                                                        std::optional<double> spacing,
                                                        std::pair<double, double> origin,
                                                        const std::string& interpolant) {
  if (heights.is_none()) {
    if (spacing) throw std::invalid_argument("spacing is given without heights");
    return nullptr;
  }
  const py::module_ torchModule = py::module_::import("torch");
  torch::Tensor h;
  try {
    h = torchModule.attr("as_tensor")(heights, py::arg("dtype") = torchModule.attr("float64"))
            .cast<torch::Tensor>();
  } catch (const py::error_already_set& e) {
    throw std::invalid_argument(std::string("heights must be a 2-d array of numbers: ") + e.what());
  }
  if (h.dim() != 2 || h.size(0) < 2 || h.size(1) < 2)
    throw std::invalid_argument("heights must have shape [ny, nx] with ny, nx >= 2, got " +
                                c10::str(h.sizes()));
  if (!spacing) throw std::invalid_argument("spacing must be given with heights");
  if (!(*spacing > 0) || !std::isfinite(*spacing))
    throw std::invalid_argument("spacing must be positive and finite, got " +
                                std::to_string(*spacing));
  if (!std::isfinite(origin.first) || !std::isfinite(origin.second))
    throw std::invalid_argument("origin must be finite");
  auto hf = std::make_shared<sim::HeightField>();
  hf->interpolant = sim::parseInterpolant(interpolant);
  hf->spacing = *spacing;
  hf->originX = origin.first;
  hf->originY = origin.second;
  hf->ny = static_cast<int>(h.size(0));
  hf->nx = static_cast<int>(h.size(1));
  h = h.detach().contiguous();
  hf->heights.assign(h.data_ptr<double>(), h.data_ptr<double>() + h.numel());
  sim::validateHeightField(*hf, "heights");  // names a non-finite height's sample
  hf->finalize();
  return hf;
}

// A task's actuator section (envs/task_config.h), or a policy file's `actuator` metadata: keys
// kp, kd, effort (a number, or one per joint as the metadata has it), saturation, velocity_limit
// (None: none), armature; `source` is ignored. Missing keys keep the robot's drive.
void applyActuator(const py::dict& a, Robot& robot, sim::ActuatorOptions& o) {
  auto number = [](const py::handle& v, const std::string& key, bool noneIsInfinite) {
    if (v.is_none()) {
      if (noneIsInfinite) return 1e10;  // the simulator's stand-in for "no limit"
      throw std::invalid_argument("actuator." + key + " must be a number, got None");
    }
    double x;
    try {
      x = v.cast<double>();
    } catch (const py::cast_error&) {
      throw std::invalid_argument("actuator." + key + " must be a number, got " +
                                  std::string(py::str(v)));
    }
    if (!std::isfinite(x) || x < 0)
      throw std::invalid_argument("actuator." + key + " must be finite and >= 0, got " +
                                  std::to_string(x));
    return x;
  };
  for (const auto& [k, v] : a) {
    const std::string key = py::str(k);
    if (key == "kp") {
      o.kp = number(v, key, false);
    } else if (key == "kd") {
      o.kd = number(v, key, false);
    } else if (key == "saturation") {
      o.saturation = number(v, key, true);
    } else if (key == "velocity_limit") {
      o.velocityLimit = number(v, key, true);
    } else if (key == "armature") {
      robot.armature = number(v, key, false);
    } else if (key == "effort") {
      if (py::isinstance<py::sequence>(v) && !py::isinstance<py::str>(v)) {
        // One per joint (the metadata's min of the task's limit and the URDF's): each joint's own.
        const auto seq = v.cast<py::sequence>();
        const int nj = robot.model.nj();
        if (static_cast<int>(seq.size()) != nj)
          throw std::invalid_argument("actuator.effort must be a number or " +
                                      std::to_string(nj) + " numbers, got " +
                                      std::to_string(seq.size()));
        for (int j = 0; j < nj; ++j) {
          const double e = number(seq[j], key, false);
          if (!(e > 0)) throw std::invalid_argument("actuator.effort must be > 0 per joint");
          robot.model.joints[j].effort = std::min(robot.model.joints[j].effort, e);
        }
        o.effort = 1e10;
      } else {
        const double e = number(v, key, false);
        o.effort = e > 0 ? e : robot.torqueLimit;  // 0: the robot's limit, as a task's effort
      }
    } else if (key != "source") {
      throw std::invalid_argument("actuator: unknown key '" + key +
                                  "' (expected kp, kd, effort, saturation, velocity_limit, "
                                  "armature)");
    }
  }
}

class Simulator {
 public:
  Simulator(const std::string& robotName, int worlds, const std::string& contact,
            std::optional<double> dt, int iterations, double friction, int threads,
            const py::object& heights, std::optional<double> spacing,
            std::pair<double, double> origin, const std::string& interpolant,
            const std::string& terrainContact, std::optional<py::dict> actuator)
      : robot_(loadRobot(robotName)) {
    if (worlds < 1) throw std::invalid_argument("num_worlds must be at least 1");
    if (iterations < 1) throw std::invalid_argument("iterations must be at least 1");
    if (!(friction >= 0) || !std::isfinite(friction))
      throw std::invalid_argument("friction must be finite and >= 0");
    // The robot's drive, armature and time step, as `diffloco sim` and gradcheck take them, then
    // the drive given.
    sim::SimOptions opt = robot_.simOptions(sim::parseContactModel(contact));
    if (actuator) applyActuator(*actuator, robot_, opt.actuator);
    robot_.applyArmature(robot_.model);
    opt.dt = dt.value_or(robot_.dt);
    if (!(opt.dt > 0)) throw std::invalid_argument("dt must be positive");
    opt.contact.iterations = iterations;
    opt.contact.mu = friction;
    opt.contact.terrain = makeHeightField(heights, spacing, origin, interpolant);
    opt.contact.terrainContact = sim::parseTerrainContact(terrainContact);
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

  // The ground's height under world points (x, y) (any equal shapes), differentiable in x and y.
  torch::Tensor groundHeight(const torch::Tensor& x, const torch::Tensor& y) {
    if (!x.sizes().equals(y.sizes()))
      throw std::invalid_argument("x and y must have the same shape, got " + c10::str(x.sizes()) +
                                  " and " + c10::str(y.sizes()));
    return withoutGil([&] { return envs::groundHeight(options_.contact.terrain, x, y); });
  }

  py::dict actuator() const {
    const auto& a = options_.actuator;
    py::dict d;
    d["kp"] = a.kp;
    d["kd"] = a.kd;
    std::vector<double> effort;
    for (const auto& j : model().joints) effort.push_back(std::min(a.effort, j.effort));
    d["effort"] = effort;
    d["saturation"] = a.saturation;
    d["velocity_limit"] = a.velocityLimit;
    d["armature"] = robot_.armature;
    return d;
  }

  py::object terrain() const {
    const auto& hf = options_.contact.terrain;
    if (!hf) return py::none();
    py::dict d;
    d["heights"] = torch::from_blob(const_cast<double*>(hf->heights.data()), {hf->ny, hf->nx},
                                    torch::kFloat64)
                       .clone();
    d["spacing"] = hf->spacing;
    d["origin"] = py::make_tuple(hf->originX, hf->originY);
    d["interpolant"] = sim::toString(hf->interpolant);
    d["terrain_contact"] = sim::toString(options_.contact.terrainContact);
    return d;
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
A batch of worlds of one robot (a name from configs/robots or a robot YAML) on the plane z = 0
or on a height field. State rows: q [N, nq] (base position, quaternion w x y z, joint angles) and
v [N, nv] (world base linear velocity, base-frame angular velocity, joint velocities), float64.
The drive is the robot's PD (its YAML's task_defaults.actuator) unless `actuator` gives another:
a task's actuator section or a policy file's metadata["actuator"] (kp, kd, effort: a number or
one per joint, saturation, velocity_limit: None for none, armature). step(q, v, q_target) holds
the joint targets q_target [N, nj] for one step of dt.

The ground: heights [ny, nx] (rows along y: heights[iy, ix] at (origin[0] + ix spacing,
origin[1] + iy spacing)) joined by `interpolant` ("monotone": no lip at a step edge, "catmull_rom";
task key terrain.interpolant), the border samples continued beyond the grid; a sphere touches it
where `terrain_contact` says ("vertical": the surface under its centre, "closest": the surface
point closest to it; task key sim.terrain_contact). docs/terrain.md has both.

step is differentiable in q, v and q_target by the simulator's hand-written backward pass; keep
the Simulator alive while a graph through it is.)doc")
      .def(py::init<const std::string&, int, const std::string&, std::optional<double>, int, double,
                    int, const py::object&, std::optional<double>, std::pair<double, double>,
                    const std::string&, const std::string&, std::optional<py::dict>>(),
           py::arg("robot"), py::arg("num_worlds") = 1, py::arg("contact") = "smoothed",
           py::arg("dt") = py::none(), py::arg("iterations") = 10, py::arg("friction") = 0.8,
           py::arg("threads") = 2, py::kw_only(), py::arg("heights") = py::none(),
           py::arg("spacing") = py::none(), py::arg("origin") = std::make_pair(0.0, 0.0),
           py::arg("interpolant") = "monotone", py::arg("terrain_contact") = "vertical",
           py::arg("actuator") = py::none())
      .def("step", &Simulator::step, py::arg("q"), py::arg("v"), py::arg("q_target"),
           "(q, v) after one step; worlds whose step went non-finite keep their inputs "
           "(last_failures counts them) and get zero gradients")
      .def("foot_positions", &Simulator::footPositions, py::arg("q"),
           "world positions [n, feet, 3] of the foot sphere centres, differentiable in q")
      .def("ground_height", &Simulator::groundHeight, py::arg("x"), py::arg("y"),
           "the ground's height under world points (x, y) (tensors of one shape), differentiable "
           "in x and y; zeros on the plane")
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
      .def_property_readonly("last_failures", &Simulator::lastFailures)
      .def_property_readonly("actuator", &Simulator::actuator,
                             "the drive as stepped: kp, kd, effort per joint, saturation, "
                             "velocity_limit (1e10: none), armature")
      .def_property_readonly("terrain", &Simulator::terrain,
                             "None on the plane, else heights, spacing, origin, interpolant, "
                             "terrain_contact");
}

}  // namespace diffloco::python
