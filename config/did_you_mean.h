// "Did you mean" hints for the strict readers (configs, tasks, term and robot names).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace diffloco::config {

// Levenshtein distance.
std::size_t editDistance(const std::string& a, const std::string& b);
// " (did you mean 'k'?); known: a, b, ..." for the closest known key (close matches only).
std::string didYouMean(const std::string& key, const std::vector<std::string>& known);

}  // namespace diffloco::config
