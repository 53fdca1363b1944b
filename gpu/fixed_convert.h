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

// Why a model does not fit StepModel<D> (its bodies, feet and leg spheres against D's sizes), or
// "" if it does. Fewer feet than D::NFEET fit when the model has no leg spheres: the stages take
// the first D::NFEET spheres for feet, so a leg sphere would otherwise enter as a foot.
template <class D>
std::string notInStepModel(const sim::Model& model);
// The model packed into StepModel<D>: bodies, joints, the feet and the leg spheres (at most
// D::MAXLEG of them). Throws std::invalid_argument with notInStepModel's reason when it does not
// fit. Instantiated for sim::Quadruped and sim::SingleBody (gpu/fixed_convert.cpp).
template <class D>
sim::StepModel<D> toStepModel(const sim::Model& model);

// Why a model or the options do not fit the fixed path (the quadruped's sizes; the soft model's
// adaptive integrator), or "" if they do.
std::string notInFixedPath(const sim::Model& model);
std::string notInFixedPath(const sim::SimOptions& opt);

// toStepModel<sim::Quadruped>: the fixed path's model.
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
