// The bridge between the batched simulator and torch autograd: the step of every world and the foot
// kinematics as differentiable torch functions of [N, .] state tensors (one row per world).
//
// Layouts: q [N, nq] and v [N, nv] rows are the simulator's q and v (sim/model.h: base position in
// world, quaternion (w, x, y, z), joint angles; world-frame base linear velocity, base-frame
// angular velocity, joint velocities). A row-major [N, nq] double tensor has the memory layout of
// the simulator's column-per-world nq x N matrix, so conversions are plain copies.
//
// Memory kept for the backward pass of one simStep: its inputs q, v, qTarget by reference (the
// backward recomputes the forward, batch::BatchSim::stepVjp), i.e. (nq + nv + nj) doubles = 392
// bytes per world for the 12-joint robots, plus one byte per world (the failure flag). Sub-steps
// of one env step share their qTarget tensor, so an env step of d sub-steps keeps d * 296 + 96
// bytes per world.
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "batch/batch_sim.h"
#include "sim/data.h"
#include "sim/terrain.h"

namespace diffloco::envs {

// Owns the batch simulator and what autograd nodes need to call back into it. Nodes keep a raw
// pointer: a SimLink must outlive every graph recorded through it (call detach() or drop the
// graph before destroying the environment).
class SimLink {
 public:
  SimLink(const sim::Model& model, const sim::SimOptions& options, int worlds, int threads,
          batch::BatchPath path = batch::BatchPath::Fixed);

  batch::BatchSim& batch() { return *batch_; }
  const sim::Model& model() const { return batch_->model(); }
  int worlds() const { return batch_->worlds(); }

  // Per-world friction coefficient, added base mass and motor strength [N] (double). The tensors
  // are replaced, never modified in place: a node recorded before a change keeps the values it
  // ran with, and its backward re-applies them (randomisation on reset must not corrupt older
  // gradients). An undefined addedMass leaves every world with the model's masses, an undefined
  // motorStrength with the nominal drive.
  void setWorldParams(torch::Tensor friction, torch::Tensor addedMass,
                      torch::Tensor motorStrength = {});
  const torch::Tensor& friction() const { return friction_; }
  const torch::Tensor& addedMass() const { return addedMass_; }
  const torch::Tensor& motorStrength() const { return motorStrength_; }

  // Worlds whose backward produced non-finite adjoints (zeroed), counted since construction.
  std::int64_t vjpFailures() const { return vjpFailures_; }
  // Worlds that failed in the last simStep forward (saves the caller a reduction over `failed`).
  int lastFailures() const { return lastFailures_; }
  void setLastFailures(int n) { lastFailures_ = n; }

  // Applies (friction, addedMass, motorStrength) to the batch simulator.
  void applyParams(const torch::Tensor& friction, const torch::Tensor& addedMass,
                   const torch::Tensor& motorStrength);
  void countVjpFailures(std::int64_t n) { vjpFailures_ += n; }
  std::vector<std::unique_ptr<sim::Data>>& kinematicsData() { return kinData_; }

 private:
  std::unique_ptr<batch::BatchSim> batch_;
  std::vector<std::unique_ptr<sim::Data>> kinData_;  // one per pool worker, for footPositions
  torch::Tensor friction_, addedMass_, motorStrength_;
  std::atomic<std::int64_t> vjpFailures_{0};
  int lastFailures_ = 0;
};

struct SimStepResult {
  torch::Tensor q, v;    // [N, nq], [N, nv] double
  torch::Tensor failed;  // [N] bool: the world's step went non-finite; q, v are its inputs
};

// One simulator step of every world: (q', v') = step(q, v, qTarget). Inputs of any floating dtype
// (converted to double); differentiable in q, v, qTarget through BatchSim::stepVjp. Gradients of
// failed worlds are zero. The batch simulator's q, v, qTarget are used as scratch.
SimStepResult simStep(SimLink& link, const torch::Tensor& q, const torch::Tensor& v,
                      const torch::Tensor& qTarget);

// World positions [n, F, 3] of the foot sphere centres for configurations q [n, nq] (any n: rows
// need not be the link's worlds), differentiable in q. Forward kinematics runs on the link's pool.
torch::Tensor footPositions(SimLink& link, const torch::Tensor& q);
// The same for the leg spheres (sim::Model::legSpheres, the knees and shanks): [n, L, 3].
torch::Tensor legSpherePositions(SimLink& link, const torch::Tensor& q);

// Heights h(x, y) [..] of the ground (sim/terrain.h; 0 everywhere without a height field) under
// world points x, y [..] (double, any equal shapes), differentiable in x and y (the interpolant's
// slopes). With `slopes` (a field on the same grid, e.g. a smoothed copy: straight-through
// terrain) the derivative is that field's slope instead. The fields must outlive the graph.
// With `link` the points are sampled on its pool.
torch::Tensor groundHeight(const std::shared_ptr<const sim::HeightField>& field,
                           const torch::Tensor& x, const torch::Tensor& y,
                           const std::shared_ptr<const sim::HeightField>& slopes = nullptr,
                           SimLink* link = nullptr);

// The slopes (dh/dx, dh/dy) [.., 2] of the ground's own interpolant under world points x, y (any
// equal shapes); zeros without a height field. A value, not differentiated.
torch::Tensor groundSlope(const std::shared_ptr<const sim::HeightField>& field,
                          const torch::Tensor& x, const torch::Tensor& y);

// Torch's intra-op threads and, when the BLAS is OpenBLAS, its own pool (at::set_num_threads does
// not reach it, and its idle threads spin): the simulator's pool and torch share the same cores,
// so a trainer sets this deliberately (1 for the small tensors of SHAC and of env stepping).
void setTorchThreads(int threads);

// The simulator's column-per-world matrix as an [N, rows] tensor view (no copy) and back.
torch::Tensor asTensor(sim::MatX& m);
void copyToMatrix(const torch::Tensor& t, sim::MatX& m);

}  // namespace diffloco::envs
