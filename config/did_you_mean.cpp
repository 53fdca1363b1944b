#include "config/did_you_mean.h"

#include <algorithm>

namespace diffloco::config {

std::size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string didYouMean(const std::string& key, const std::vector<std::string>& known) {
  std::string best;
  std::size_t bestD = std::max<std::size_t>(2, key.size() / 3) + 1;  // close matches only
  for (const auto& k : known) {
    const std::size_t d = editDistance(key, k);
    if (d < bestD) bestD = d, best = k;
  }
  std::string all;
  for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
  return (best.empty() ? "" : " (did you mean '" + best + "'?)") + std::string("; known: ") + all;
}

}  // namespace diffloco::config
