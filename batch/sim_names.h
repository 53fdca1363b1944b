// The step's model, options and sizes under the names batch/ and its users read them by
// (batch::FixedModel, batch::NQ, ...): using-declarations of sim/step_model.h's entities, which
// define nothing.
#pragma once

#include "sim/step_model.h"

namespace diffloco::batch {

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

}  // namespace diffloco::batch
