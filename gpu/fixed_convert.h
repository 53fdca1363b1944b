// Host-side conversion of the dynamic simulator's types into the fixed-size ones
// (sim/step_model.h).
// Throws std::invalid_argument when the robot's sizes or the options do not fit the fixed path.
#pragma once

#include <string>

#include "gpu/sim_names.h"
#include "sim/model.h"
#include "sim/options.h"
#include "sim/param_bar.h"
#include "sim/step_vjp.h"
#include "sim/terrain.h"

namespace diffloco::gpu {

// Why a model or the options do not fit the fixed path (its sizes; the soft model's adaptive
// integrator), or "" if they do.
std::string notInFixedPath(const sim::Model& model);
std::string notInFixedPath(const sim::SimOptions& opt);

// The feet and the leg spheres (sim::Model::legSpheres), at most MAXLEG of them.
FixedModel toFixed(const sim::Model& model);
// The options of the step's forward: straight_through runs the hard model.
FixedOptions toFixed(const sim::SimOptions& opt);
// The options the step's VJP differentiates (sim::stepVjp): straight_through's is the smoothed
// model's at the same state; every other model's is its own.
FixedOptions toFixedBackward(const sim::SimOptions& opt);
// The ground the VJP differentiates: contact.backwardTerrain (straight-through terrain, a smoothed
// copy) when set, else contact.terrain; the options must outlive the view.
HeightFieldView backwardView(const sim::SimOptions& opt);
// A view of hf's heights and, once finalized, its cell bounds (nullptr: the plane); hf must
// outlive the view.
HeightFieldView toView(const sim::HeightField* hf);
// The parameters' adjoints of a fixed VJP as sim::stepVjp gives them for the model they were
// formed on (its spheres and bodies; the masses contracted as sim::ParamGrad::addInertia does).
sim::ParamGrad toParamGrad(const sim::Model& model, const sim::FixedParamBar& p);

}  // namespace diffloco::gpu
