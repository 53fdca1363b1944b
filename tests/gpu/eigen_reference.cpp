#include "tests/gpu/eigen_reference.h"

#include "sim/data.h"
#include "sim/step.h"
#include "sim/step_vjp.h"

namespace diffloco::gpu {

int stepEigen(const sim::Model& model, const sim::SimOptions& opt, const WorldSet& in,
              WorldSet& out) {
  out = in;
  sim::Data data(model);
  sim::VecX qn(NQ), vn(NV);
  int bad = 0;
  for (int k = 0; k < in.n; ++k) {
    const Eigen::Map<const sim::VecX> q(&in.q[static_cast<size_t>(k) * NQ], NQ);
    const Eigen::Map<const sim::VecX> v(&in.v[static_cast<size_t>(k) * NV], NV);
    const Eigen::Map<const sim::VecX> t(&in.target[static_cast<size_t>(k) * NJ], NJ);
    bad += !sim::step(model, opt, data, q, v, t, qn, vn);
    for (int i = 0; i < NQ; ++i) out.q[static_cast<size_t>(k) * NQ + i] = qn[i];
    for (int i = 0; i < NV; ++i) out.v[static_cast<size_t>(k) * NV + i] = vn[i];
  }
  return bad;
}

int vjpEigen(const sim::Model& model, const sim::SimOptions& opt, const WorldSet& in,
             const WorldSet& seeds, WorldSet& out) {
  out = in;
  sim::Data data(model);
  sim::StepAdjoint adj(model);
  int bad = 0;
  for (int k = 0; k < in.n; ++k) {
    const size_t iq = static_cast<size_t>(k) * NQ, iv = static_cast<size_t>(k) * NV,
                 it = static_cast<size_t>(k) * NJ;
    const Eigen::Map<const sim::VecX> q(&in.q[iq], NQ), v(&in.v[iv], NV), t(&in.target[it], NJ);
    const Eigen::Map<const sim::VecX> gq(&seeds.q[iq], NQ), gv(&seeds.v[iv], NV);
    adj.setZero(model);
    sim::stepVjp(model, opt, data, q, v, t, gq, gv, adj);
    bad += !(adj.q.allFinite() && adj.v.allFinite() && adj.qTarget.allFinite());
    for (int i = 0; i < NQ; ++i) out.q[iq + i] = adj.q[i];
    for (int i = 0; i < NV; ++i) out.v[iv + i] = adj.v[i];
    for (int i = 0; i < NJ; ++i) out.target[it + i] = adj.qTarget[i];
  }
  return bad;
}

}  // namespace diffloco::gpu
