// The names gpu/ and its users still read the step's model, options and sizes by (gpu::FixedModel,
// gpu::NQ, ...): the types and constants live in sim/step_model.h (namespace sim); these
// using-declarations name the same entities, they define nothing.
#pragma once

#include "sim/step_model.h"

namespace diffloco::gpu {

using sim::FixedContact;
using sim::FixedModel;
using sim::FixedOptions;
using sim::HeightFieldView;
using sim::MAXACTIVE;
using sim::MAXLEG;
using sim::MAXSPHERES;
using sim::NB;
using sim::NFEET;
using sim::NJ;
using sim::NQ;
using sim::NV;

}  // namespace diffloco::gpu
