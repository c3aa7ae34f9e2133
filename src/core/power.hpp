// Average power as a fraction of TDP, the one assumption recommend and serve price energy with.
#pragma once

namespace hwplan {

// Training keeps the accelerators near their power limit; serving, with its idle gaps between steps, less so.
constexpr double kTrainingPowerFraction = 0.8;
constexpr double kInferencePowerFraction = 0.6;

}  // namespace hwplan
