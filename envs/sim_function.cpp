#include "envs/sim_function.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sim/kinematics.h"

namespace diffloco::envs {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

const auto kDouble = torch::TensorOptions().dtype(torch::kDouble);

std::string shapeString(const Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

void checkShape(const Tensor& t, std::int64_t rows, std::int64_t cols, const char* what) {
  if (t.dim() != 2 || t.size(0) != rows || t.size(1) != cols)
    throw std::invalid_argument(std::string(what) + ": expected shape [" + std::to_string(rows) +
                                ", " + std::to_string(cols) + "], got " + shapeString(t));
}

// Checked in C++ first: a no-op .to() still costs a dispatcher round trip, and simStep runs
// several times per env step.
Tensor asDouble(const Tensor& t) {
  return t.scalar_type() == torch::kDouble && t.is_contiguous() ? t
                                                                : t.to(torch::kDouble).contiguous();
}

// A fresh [cols, rows] tensor holding the column-per-world matrix m.
Tensor copyOf(const sim::MatX& m) {
  Tensor t = torch::empty({m.cols(), m.rows()}, kDouble);
  std::memcpy(t.data_ptr<double>(), m.data(), sizeof(double) * m.size());
  return t;
}

SimLink* linkOf(AutogradContext* ctx) {
  return reinterpret_cast<SimLink*>(ctx->saved_data.at("link").toInt());
}

class SimStepFunction : public torch::autograd::Function<SimStepFunction> {
 public:
  // Inputs are double and contiguous (simStep converts), so the saved tensors are the caller's own:
  // saving costs no copy while the graph holds them anyway.
  static variable_list forward(AutogradContext* ctx, const Tensor& q, const Tensor& v,
                               const Tensor& qTarget, SimLink* link) {
    batch::BatchSim& b = link->batch();
    copyToMatrix(q, b.q);
    copyToMatrix(v, b.v);
    copyToMatrix(qTarget, b.qTarget);
    link->setLastFailures(b.step());
    Tensor failed = torch::empty({b.worlds()}, torch::kBool);
    std::copy(b.failed.begin(), b.failed.end(), failed.data_ptr<bool>());
    ctx->save_for_backward({q, v, qTarget});
    ctx->saved_data["link"] = reinterpret_cast<std::int64_t>(link);
    ctx->saved_data["failed"] = failed;
    ctx->saved_data["friction"] = link->friction();
    ctx->saved_data["mass"] = link->addedMass();
    ctx->saved_data["strength"] = link->motorStrength();
    ctx->mark_non_differentiable({failed});
    return {copyOf(b.q), copyOf(b.v), failed};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    SimLink* link = linkOf(ctx);
    batch::BatchSim& b = link->batch();
    const auto saved = ctx->get_saved_variables();
    const int n = b.worlds(), nq = b.model().nq(), nv = b.model().nv(), nj = b.model().nj();
    sim::MatX q(nq, n), v(nv, n), qt(nj, n), gqNext = sim::MatX::Zero(nq, n),
                                             gvNext = sim::MatX::Zero(nv, n), gq, gv, gqt;
    copyToMatrix(saved[0], q);
    copyToMatrix(saved[1], v);
    copyToMatrix(saved[2], qt);
    if (grads[0].defined()) copyToMatrix(grads[0], gqNext);
    if (grads[1].defined()) copyToMatrix(grads[1], gvNext);

    // Re-apply the per-world parameters this step ran with if they changed since (a reset).
    const Tensor fr = ctx->saved_data["friction"].toTensor();
    const Tensor mass = ctx->saved_data["mass"].toTensor();
    const Tensor strength = ctx->saved_data["strength"].toTensor();
    const bool swap = !fr.is_same(link->friction()) || !mass.is_same(link->addedMass()) ||
                      !strength.is_same(link->motorStrength());
    if (swap) link->applyParams(fr, mass, strength);
    b.stepVjp(q, v, qt, gqNext, gvNext, gq, gv, gqt);
    if (swap) link->applyParams(link->friction(), link->addedMass(), link->motorStrength());

    // A world that failed in the forward pass kept its state: no gradient flows through it.
    const Tensor failed = ctx->saved_data["failed"].toTensor();
    const bool* f = failed.data_ptr<bool>();
    std::int64_t bad = 0;
    for (int w = 0; w < n; ++w) {
      if (f[w]) {
        gq.col(w).setZero();
        gv.col(w).setZero();
        gqt.col(w).setZero();
      } else {
        bad += b.failedVjp[w];
      }
    }
    link->countVjpFailures(bad);
    return {copyOf(gq), copyOf(gv), copyOf(gqt), Tensor()};
  }
};

// Contact sphere centres (the feet, or the leg spheres): x_f = p + R(quat) r_f(joints), with r_f
// in base coordinates.
class SpherePositionsFunction : public torch::autograd::Function<SpherePositionsFunction> {
 public:
  // Spheres first .. first + count of the model's contact spheres (the feet first).
  static variable_list forward(AutogradContext* ctx, const Tensor& q, SimLink* link, int64_t first,
                               int64_t count) {
    const sim::Model& m = link->model();
    const int n = static_cast<int>(q.size(0)), nq = m.nq(), nf = static_cast<int>(count);
    const int f0 = static_cast<int>(first);
    Tensor out = torch::empty({n, nf, 3}, kDouble);
    const double* qp = q.data_ptr<double>();
    double* op = out.data_ptr<double>();
    auto& data = link->kinematicsData();
    link->batch().pool().parallelFor(
        n,
        [&](int i, int worker) {
          sim::Data& d = *data[worker];
          sim::forwardKinematics(m, d, Eigen::Map<const sim::VecX>(qp + i * nq, nq));
          for (int f = 0; f < nf; ++f) {
            const sim::Foot& s = m.sphere(f0 + f);
            Eigen::Map<sim::Vec3>(op + (i * nf + f) * 3) = sim::worldPoint(d, s.body, s.offset);
          }
        },
        64);
    ctx->save_for_backward({q});
    ctx->saved_data["link"] = reinterpret_cast<std::int64_t>(link);
    ctx->saved_data["first"] = first;
    ctx->saved_data["count"] = count;
    return {out};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    SimLink* link = linkOf(ctx);
    const sim::Model& m = link->model();
    const Tensor q = ctx->get_saved_variables()[0];
    const int n = static_cast<int>(q.size(0)), nq = m.nq(), nv = m.nv();
    const int f0 = static_cast<int>(ctx->saved_data["first"].toInt());
    const int nf = static_cast<int>(ctx->saved_data["count"].toInt());
    const Tensor g = asDouble(grads[0]);
    Tensor gq = torch::zeros({n, nq}, kDouble);
    const double* qp = q.data_ptr<double>();
    const double* gp = g.data_ptr<double>();
    double* gqp = gq.data_ptr<double>();
    auto& data = link->kinematicsData();
    link->batch().pool().parallelFor(
        n,
        [&](int i, int worker) {
          sim::Data& d = *data[worker];
          const Eigen::Map<const sim::VecX> qi(qp + i * nq, nq);
          Eigen::Map<sim::VecX> gqi(gqp + i * nq, nq);
          sim::forwardKinematics(m, d, qi);
          Eigen::Matrix<double, 3, Eigen::Dynamic> J(3, nv);
          const double w = qi[3];
          const sim::Vec3 u = qi.segment<3>(4);
          for (int f = 0; f < nf; ++f) {
            const sim::Vec3 gf = Eigen::Map<const sim::Vec3>(gp + (i * nf + f) * 3);
            const sim::Foot& s = m.sphere(f0 + f);
            const sim::Vec3 x = sim::worldPoint(d, s.body, s.offset);
            sim::pointJacobian(m, d, s.body, x, J);
            gqi.head<3>() += gf;                                       // d x / d p = I
            gqi.tail(m.nj()) += J.rightCols(m.nj()).transpose() * gf;  // qdot_j = v_j
            // Eigen's toRotationMatrix is R r = r + 2w (u x r) + 2 u x (u x r) for any (w, u);
            // r = R^T (x - p) is the foot in base coordinates (R orthogonal for unit quaternions).
            const sim::Vec3 r = d.R[0].transpose() * (x - d.p[0]);
            gqi[3] += 2 * gf.dot(u.cross(r));
            gqi.segment<3>(4) +=
                2 * w * r.cross(gf) + 2 * u.cross(r).cross(gf) + 2 * r.cross(gf.cross(u));
          }
        },
        64);
    return {gq, Tensor(), Tensor(), Tensor()};
  }
};

// h(x, y) of a height field, elementwise; its backward is the slope (h_x, h_y) of `slopes`
// (the same field, or a smoothed copy for straight-through terrain), computed with h.
class GroundHeightFunction : public torch::autograd::Function<GroundHeightFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const Tensor& x, const Tensor& y,
                               const sim::HeightField* field, const sim::HeightField* slopes,
                               SimLink* link) {
    const Tensor xc = x.contiguous(), yc = y.contiguous();
    Tensor h = torch::empty_like(xc), hx = torch::empty_like(xc), hy = torch::empty_like(xc);
    const double *xp = xc.data_ptr<double>(), *yp = yc.data_ptr<double>();
    double *hp = h.data_ptr<double>(), *hxp = hx.data_ptr<double>(), *hyp = hy.data_ptr<double>();
    auto sample = [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const sim::HeightAndSlope s = sim::sampleHeightAndSlope(*field, *slopes, xp[i], yp[i]);
        hp[i] = s.h, hxp[i] = s.hx, hyp[i] = s.hy;
      }
    };
    // A height scan is ~10^4 points per env step: in chunks on the link's pool when there is one.
    constexpr std::int64_t kChunk = 512;
    const std::int64_t n = xc.numel(), chunks = (n + kChunk - 1) / kChunk;
    if (link && chunks > 1)
      link->batch().pool().parallelFor(static_cast<int>(chunks), [&](int c, int) {
        sample(c * kChunk, std::min(n, (c + 1) * kChunk));
      });
    else
      sample(0, n);
    ctx->save_for_backward({hx, hy});
    return {h};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Tensor g = asDouble(grads[0]);
    return {g * saved[0], g * saved[1], Tensor(), Tensor(), Tensor()};
  }
};

}  // namespace

torch::Tensor groundHeight(const std::shared_ptr<const sim::HeightField>& field,
                           const torch::Tensor& x, const torch::Tensor& y,
                           const std::shared_ptr<const sim::HeightField>& slopes, SimLink* link) {
  if (!field) return torch::zeros_like(asDouble(x));
  if (!x.sizes().equals(y.sizes()))
    throw std::invalid_argument("groundHeight: x and y must have the same shape");
  const sim::HeightField* d = slopes ? slopes.get() : field.get();
  if (d->nx != field->nx || d->ny != field->ny || d->spacing != field->spacing)
    throw std::invalid_argument("groundHeight: the slopes' field must have the field's grid");
  return GroundHeightFunction::apply(asDouble(x), asDouble(y), field.get(), d, link)[0];
}

torch::Tensor groundSlope(const std::shared_ptr<const sim::HeightField>& field,
                          const torch::Tensor& x, const torch::Tensor& y) {
  if (!x.sizes().equals(y.sizes()))
    throw std::invalid_argument("groundSlope: x and y must have the same shape");
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.push_back(2);
  if (!field) return torch::zeros(shape, kDouble);
  const Tensor xc = asDouble(x).detach().contiguous(), yc = asDouble(y).detach().contiguous();
  Tensor out = torch::empty(shape, kDouble);
  const double *xp = xc.data_ptr<double>(), *yp = yc.data_ptr<double>();
  double* op = out.data_ptr<double>();
  for (std::int64_t i = 0; i < xc.numel(); ++i) {
    const sim::SurfacePoint s = sim::sampleSurface(*field, xp[i], yp[i]);
    op[2 * i] = s.hx, op[2 * i + 1] = s.hy;
  }
  return out;
}

void setTorchThreads(int threads) {
  at::set_num_threads(threads);
  using SetThreads = void (*)(int);
  if (auto f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    f(threads);
}

torch::Tensor asTensor(sim::MatX& m) {
  return torch::from_blob(m.data(), {m.cols(), m.rows()}, kDouble);
}

void copyToMatrix(const torch::Tensor& t, sim::MatX& m) {
  checkShape(t, m.cols(), m.rows(), "copyToMatrix");
  const Tensor c = asDouble(t);
  std::memcpy(m.data(), c.data_ptr<double>(), sizeof(double) * m.size());
}

SimLink::SimLink(const sim::Model& model, const sim::SimOptions& options, int worlds, int threads,
                 batch::BatchPath path)
    : batch_(std::make_unique<batch::BatchSim>(model, options, worlds, threads, path)) {
  for (int t = 0; t < batch_->pool().size(); ++t)
    kinData_.push_back(std::make_unique<sim::Data>(model));
  friction_ = torch::full({worlds}, options.contact.mu, kDouble);
}

void SimLink::applyParams(const torch::Tensor& friction, const torch::Tensor& addedMass,
                          const torch::Tensor& motorStrength) {
  const int n = worlds();
  if (motorStrength.defined()) {
    const double* s = motorStrength.data_ptr<double>();
    for (int w = 0; w < n; ++w) batch_->setMotorStrength(w, s[w]);
  } else if (motorStrength_.defined()) {
    for (int w = 0; w < n; ++w) batch_->setMotorStrength(w, 1.0);
  }
  const double* fr = friction.data_ptr<double>();
  for (int w = 0; w < n; ++w) batch_->setFriction(w, fr[w]);
  if (addedMass.defined()) {
    const double* dm = addedMass.data_ptr<double>();
    for (int w = 0; w < n; ++w) batch_->setAddedBaseMass(w, dm[w]);
  } else if (addedMass_.defined()) {  // nominal masses, after a randomised phase
    for (int w = 0; w < n; ++w) batch_->setAddedBaseMass(w, 0.0);
  }
}

void SimLink::setWorldParams(torch::Tensor friction, torch::Tensor addedMass,
                             torch::Tensor motorStrength) {
  friction = asDouble(friction);
  if (motorStrength.defined()) {
    motorStrength = asDouble(motorStrength);
    if (motorStrength.dim() != 1 || motorStrength.size(0) != worlds())
      throw std::invalid_argument("setWorldParams: motorStrength must have one entry per world");
  }
  if (friction.dim() != 1 || friction.size(0) != worlds())
    throw std::invalid_argument("setWorldParams: friction must have one entry per world");
  if (addedMass.defined()) {
    addedMass = asDouble(addedMass);
    if (addedMass.dim() != 1 || addedMass.size(0) != worlds())
      throw std::invalid_argument("setWorldParams: addedMass must have one entry per world");
  }
  // Going back to nominal masses after a randomised phase: zero added mass on every world.
  if (!addedMass.defined() && addedMass_.defined()) addedMass = torch::zeros({worlds()}, kDouble);
  if (!motorStrength.defined() && motorStrength_.defined())
    motorStrength = torch::ones({worlds()}, kDouble);
  friction_ = friction;
  addedMass_ = addedMass;
  motorStrength_ = motorStrength;
  applyParams(friction_, addedMass_, motorStrength_);
}

SimStepResult simStep(SimLink& link, const torch::Tensor& q, const torch::Tensor& v,
                      const torch::Tensor& qTarget) {
  const sim::Model& m = link.model();
  checkShape(q, link.worlds(), m.nq(), "simStep q");
  checkShape(v, link.worlds(), m.nv(), "simStep v");
  checkShape(qTarget, link.worlds(), m.nj(), "simStep qTarget");
  auto out = SimStepFunction::apply(asDouble(q), asDouble(v), asDouble(qTarget), &link);
  return {out[0], out[1], out[2]};
}

torch::Tensor footPositions(SimLink& link, const torch::Tensor& q) {
  if (q.dim() != 2 || q.size(1) != link.model().nq())
    throw std::invalid_argument("footPositions: q must be [n, " +
                                std::to_string(link.model().nq()) + "]");
  return SpherePositionsFunction::apply(asDouble(q), &link, 0, link.model().nfeet())[0];
}

torch::Tensor legSpherePositions(SimLink& link, const torch::Tensor& q) {
  const sim::Model& m = link.model();
  if (q.dim() != 2 || q.size(1) != m.nq())
    throw std::invalid_argument("legSpherePositions: q must be [n, " + std::to_string(m.nq()) +
                                "]");
  return SpherePositionsFunction::apply(asDouble(q), &link, m.nfeet(),
                                        static_cast<int64_t>(m.legSpheres.size()))[0];
}

}  // namespace diffloco::envs
