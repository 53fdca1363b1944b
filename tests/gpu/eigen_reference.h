// The Eigen step (sim::step, sim::stepVjp) over a set of worlds (gpu/parity.h's WorldSet): the
// reference the single-step tests check the stages against (test_fixed_step.cpp,
// test_fixed_step_vjp.cpp).
#pragma once

#include "gpu/parity.h"

namespace diffloco::gpu {

// One step of every world through sim::step. Returns the number of worlds whose result is not
// finite.
int stepEigen(const sim::Model& model, const sim::SimOptions& opt, const WorldSet& in,
              WorldSet& out);

// The adjoints of every world's step through sim::stepVjp, laid out as vjpFixed's (seeds: the
// adjoints of the step's outputs in q and v). Returns the number of worlds whose adjoints are not
// finite.
int vjpEigen(const sim::Model& model, const sim::SimOptions& opt, const WorldSet& in,
             const WorldSet& seeds, WorldSet& out);

}  // namespace diffloco::gpu
