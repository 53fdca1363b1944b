// Packing of the host-side simulator objects for the stages (sim/step_model.h): a sim::Model into
// StepModel<D>, sim::SimOptions into FixedOptions, a sim::HeightField into a HeightFieldView, and
// back the other way the stages' parameter adjoints (ParamBar<D>) into a sim::ParamGrad. Host
// only. A model or options that the stages do not have are refused with the reason
// (std::invalid_argument).
#pragma once

#include <string>

#include "sim/model.h"
#include "sim/options.h"
#include "sim/param_bar.h"
#include "sim/param_grad.h"
#include "sim/step_model.h"
#include "sim/terrain.h"

namespace diffloco::sim {

// Why a model does not fit StepModel<D> (its bodies, feet and leg spheres against D's sizes), or
// "" if it does. Fewer feet than D::NFEET fit when the model has no leg spheres: the stages take
// the first D::NFEET spheres for feet, so a leg sphere would otherwise enter as a foot.
template <class D>
std::string notInStepModel(const Model& model);
// The model packed into StepModel<D>: bodies, joints, the feet and the leg spheres (at most
// D::MAXLEG of them). Throws std::invalid_argument with notInStepModel's reason when it does not
// fit. Instantiated for Quadruped and SingleBody (sim/pack.cpp).
template <class D>
StepModel<D> toStepModel(const Model& model);

// Why the options are not the stages' (the soft model's adaptive integrator), or "" if they are.
std::string notInStepOptions(const SimOptions& opt);
// Why the stages' VJP of size class D cannot differentiate a step with these options, or "" if it
// can: notInStepOptions, or more Gauss-Seidel sweeps (hard, smoothed, straight_through) or soft
// sub-steps than its tape holds (D::MAXGSITER, D::MAXSOFTSUBSTEPS). The forward has no such bound.
// Instantiated for Quadruped and SingleBody.
template <class D>
std::string notInStepVjp(const SimOptions& opt);
// The options of the step's forward: straight_through runs the hard model.
FixedOptions toStepOptions(const SimOptions& opt);
// The options the step's VJP differentiates: straight_through's is the smoothed
// model's at the same state; every other model's is its own.
FixedOptions toStepOptionsBackward(const SimOptions& opt);

// The ground the VJP differentiates: contact.backwardTerrain (straight-through terrain, a smoothed
// copy) when set, else contact.terrain; the options must outlive the view.
HeightFieldView backwardView(const SimOptions& opt);
// A view of hf's heights and, once finalized, its cell bounds (nullptr: the plane); hf must
// outlive the view.
HeightFieldView toView(const HeightField* hf);

// The parameters' adjoints of a stages' VJP as a sim::ParamGrad of the model they were formed on
// (its spheres and bodies; the masses contracted as ParamGrad::addInertia does).
// Instantiated for Quadruped and SingleBody.
template <class D>
ParamGrad toParamGrad(const Model& model, const ParamBar<D>& p);

}  // namespace diffloco::sim
