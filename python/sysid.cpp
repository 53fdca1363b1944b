// diffloco.Sysid: system identification (ident/sysid.h, the code behind `diffloco sysid`) from
// Python: the k-step prediction loss of recorded trajectories and its gradient with respect to
// named parameters (masses, friction, PD gains, soft-contact coefficients, a cube's side), from
// the simulator's hand-written VJP, so that a fit can be written with torch.optim.
#include <torch/extension.h>

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "ident/sysid.h"
#include "python/bindings.h"
#include "sim/options.h"

namespace py = pybind11;

namespace diffloco::python {
namespace {

// A struct rather than the vector itself: pybind11/stl.h would convert a vector to a list.
struct Trajectories {
  std::vector<sysid::Trajectory> list;
};

class Sysid {
 public:
  Sysid(const std::string& system, const std::string& contact, int iterations)
      : sys_(sysid::makeSystem(system)) {
    sys_.opt.contact.model = sim::parseContactModel(contact);
    sys_.opt.contact.iterations = iterations;
  }

  double get(const std::string& name) const { return sys_.get(name); }
  void set(const std::string& name, double value) { sys_.set(name, value); }

  // Noisy recordings of the system at its current values (`diffloco sysid --generate`).
  Trajectories generate(int count, double duration, double dt, const std::string& contact,
                        unsigned seed, double noiseScale) const {
    sysid::GenerateOptions o;
    o.count = count;
    o.duration = duration;
    o.dt = dt;
    o.contact = contact;
    o.seed = seed;
    o.noiseScale = noiseScale;
    return {withoutGil([&] { return sysid::generate(sys_, o); })};
  }

  Trajectories read(const std::vector<std::string>& paths) const {
    return {sysid::readTrajectories(paths, sys_.model)};
  }

  // (loss, [dloss/dp for p in names]) at the current values.
  std::pair<double, std::vector<double>> loss(const Trajectories& data,
                                              const std::vector<std::string>& names, int horizon,
                                              int stride, int threads) const {
    if (data.list.empty()) throw std::invalid_argument("Sysid.loss: no trajectories");
    sysid::FitOptions o;
    o.horizon = horizon;
    o.stride = stride;
    o.threads = threads;
    const std::vector<std::string> expanded = sys_.expand(names);
    const sysid::Evaluation e = withoutGil([&] { return sysid::evaluate(sys_, data.list, expanded, o); });
    if (!e.nonFiniteAt.empty())
      throw std::runtime_error("Sysid.loss: " + e.nonFinite + " at " + e.nonFiniteAt);
    return {e.loss, e.grad};
  }

  const sysid::System& system() const { return sys_; }

 private:
  sysid::System sys_;
};

}  // namespace

void bindSysid(py::module_& m) {
  py::class_<Trajectories>(m, "Trajectories",
                           "recorded trajectories of a Sysid system (generated or read from CSV)")
      .def("__len__", [](const Trajectories& t) { return t.list.size(); })
      .def_property_readonly("rows", [](const Trajectories& t) {
        std::vector<int> rows;
        for (const auto& tr : t.list) rows.push_back(tr.rows());
        return rows;
      });

  py::class_<Sysid>(m, "Sysid", R"(System identification: Sysid(system, contact, iterations).

system: "cube" or a robot name / robot YAML path (ident/sysid.h, docs/sysid.md); contact: the
fit's contact model (straight_through: hard forward pass, smoothed gradient). Parameters by name
(`names`): side (cube), mass:<body> (its inertia scales with it), mu, kp, kd (robots), kappa,
soft_kp, soft_kd, soft_kf. loss(data, names) is the k-step prediction loss of the recordings at
the current values and its gradient with respect to `names`, from the simulator's VJP.)")
      .def(py::init<const std::string&, const std::string&, int>(), py::arg("system"),
           py::arg("contact") = "straight_through", py::arg("iterations") = 10)
      .def_property_readonly("names", [](const Sysid& s) { return s.system().names; })
      .def("get", &Sysid::get, py::arg("name"))
      .def("set", &Sysid::set, py::arg("name"), py::arg("value"))
      .def("generate", &Sysid::generate, py::arg("count") = 8, py::arg("duration") = 1.0,
           py::arg("dt") = 0.005, py::arg("contact") = "hard", py::arg("seed") = 1,
           py::arg("noise_scale") = 1.0,
           "noisy recordings of the system at its current values (robots: dropped with random "
           "joint targets; cube: tossed), as `diffloco sysid --generate`")
      .def("read", &Sysid::read, py::arg("paths"), "trajectories from CSV files (docs/sysid.md)")
      .def("loss", &Sysid::loss, py::arg("data"), py::arg("names"), py::arg("horizon") = 4,
           py::arg("stride") = 1, py::arg("threads") = 1,
           "(loss, gradient list) at the current values; names as in `names` (\"mass\": every "
           "body)");
}

}  // namespace diffloco::python
