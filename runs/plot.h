// `diffloco plot RUN...`: learning curves from the runs' metrics.csv with gnuplot: mean training
// return against iterations and against environment samples, one line per run.
#pragma once

#include <string>
#include <vector>

namespace diffloco::runs {

// Writes the PNG (and its gnuplot script next to it, .gp) and returns the PNG's path. `png`
// empty: <run>/learning_curves.png for one run, ./learning_curves.png for several. Throws on a
// missing metrics.csv or column, or when gnuplot is not installed.
std::string plotRuns(const std::vector<std::string>& runs, std::string png = "",
                     const std::string& metric = "Train/mean_reward");

}  // namespace diffloco::runs
